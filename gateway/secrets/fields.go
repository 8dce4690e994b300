package secrets

import (
	"strings"
	"unicode"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// IsPasswordField reports whether el is a field for a password or a PIN:
// the driver says so (Password, an iOS SecureTextField), or it is an input
// whose hint, description or resource id names a password ("Password",
// "pwd", "Contraseña", "Mot de passe", "Passwort", "密码", "パスワード",
// "비밀번호", "Пароль", "كلمة المرور", …). A label or a "Forgot password?"
// button is not a field.
func IsPasswordField(el sdk.Element) bool {
	if el.Password || strings.HasSuffix(el.Class, "SecureTextField") {
		return true
	}
	return isInput(el) && names(passwordText, el)
}

// IsCodeField reports whether el is an input for a one-time code: its hint,
// description or resource id names one ("6-digit code", "otp",
// "verificationCode", "one-time code", "2FA", "验证码", "認証コード",
// "인증번호", "Código", "Bestätigungscode", "Код", "رمز التحقق", …). A
// promo-code, ZIP-code or coupon field is not one.
func IsCodeField(el sdk.Element) bool {
	return isInput(el) && names(codeText, el)
}

// isInput reports whether el takes typed text.
func isInput(el sdk.Element) bool {
	// Android's EditText and its subclasses (AppCompatEditText,
	// TextInputEditText), iOS's TextField and SecureTextField.
	return el.Editable || strings.HasSuffix(el.Class, "EditText") || strings.HasSuffix(el.Class, "TextField")
}

// names reports whether el's hint, description or resource id holds one of
// l's words. The text and value are not read: they are what the person
// typed.
func names(l *lexicon, el sdk.Element) bool {
	return l.mentions(el.Hint) || l.mentions(el.ContentDescription) || l.mentions(idWords(el.ResourceID))
}

// idWords turns a resource id into words: "com.bank:id/et_smsCode" reads
// "et sms Code", "OTPInput" reads "OTP Input".
func idWords(id string) string {
	if id == "" {
		return ""
	}
	if i := strings.LastIndex(id, ":id/"); i >= 0 {
		id = id[i+len(":id/"):]
	}
	r := []rune(id)
	var b strings.Builder
	for i, c := range r {
		if c == '_' || c == '-' || c == '.' || c == '/' {
			b.WriteByte(' ')
			continue
		}
		if i > 0 && unicode.IsUpper(c) {
			p := r[i-1]
			if unicode.IsLower(p) || unicode.IsDigit(p) ||
				unicode.IsUpper(p) && i+1 < len(r) && unicode.IsLower(r[i+1]) {
				b.WriteByte(' ')
			}
		}
		b.WriteRune(c)
	}
	return b.String()
}
