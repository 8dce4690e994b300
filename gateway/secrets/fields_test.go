package secrets

import (
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

const (
	editText  = "android.widget.EditText"
	textField = "XCUIElementTypeTextField"
)

func TestFieldKinds(t *testing.T) {
	tests := []struct {
		name           string
		el             sdk.Element
		password, code bool
	}{
		// The virtual phone's Bank app.
		{"sim password", sdk.Element{Class: editText, Hint: "Password", ResourceID: "com.pinky.sim.bank:id/password", Editable: true, Password: true}, true, false},
		{"sim otp android", sdk.Element{Class: editText, Hint: "6-digit code", ResourceID: "com.pinky.sim.bank:id/otp", Editable: true}, false, true},
		{"sim otp ios", sdk.Element{Class: textField, Hint: "6-digit code", ResourceID: "otp", Editable: true}, false, true},
		{"sim username", sdk.Element{Class: editText, Hint: "Username", ResourceID: "com.pinky.sim.bank:id/username", Editable: true}, false, false},
		{"sim reply", sdk.Element{Class: editText, Hint: "Text message", ResourceID: "com.google.android.apps.messaging:id/compose_message_text", Editable: true}, false, false},
		{"sim url bar", sdk.Element{Class: editText, Hint: "Search or type URL", ResourceID: "com.android.chrome:id/url_bar", Editable: true}, false, false},
		{"sim iban", sdk.Element{Class: editText, Hint: "Recipient IBAN", ResourceID: "com.pinky.sim.bank:id/recipient", Editable: true}, false, false},
		{"sim amount", sdk.Element{Class: editText, Hint: "Amount", ResourceID: "com.pinky.sim.bank:id/amount", Editable: true}, false, false},
		{"sim mail body", sdk.Element{Class: textField, Hint: "Compose email", ResourceID: "body", Editable: true}, false, false},
		// Real-looking Android fields.
		{"android password flag only", sdk.Element{Class: editText, Text: "••••••••••••", Hint: "كلمة المرور", Password: true, Editable: true}, true, false},
		{"android password by id", sdk.Element{Class: editText, ResourceID: "com.example:id/et_pwd", Editable: true}, true, false},
		{"android password by camel id", sdk.Element{Class: editText, ResourceID: "com.example:id/loginPasswordInput", Editable: true}, true, false},
		{"android pin", sdk.Element{Class: editText, Hint: "Enter PIN", Editable: true}, true, false},
		{"android sms code id", sdk.Element{Class: editText, ResourceID: "com.example:id/et_smsCode", Editable: true}, false, true},
		{"android otp view", sdk.Element{Class: editText, ResourceID: "com.example:id/otpView", Editable: true}, false, true},
		{"android one-time code", sdk.Element{Class: editText, Hint: "One-time code", Editable: true}, false, true},
		{"android 2fa", sdk.Element{Class: editText, ContentDescription: "2FA code", Editable: true}, false, true},
		// Real-looking iOS fields.
		{"ios secure field", sdk.Element{Class: "XCUIElementTypeSecureTextField", ContentDescription: "password", ResourceID: "password", Text: "•••••••••"}, true, false},
		{"ios verification code", sdk.Element{Class: textField, Hint: "Verification code", Editable: true}, false, true},
		{"ios one time code id", sdk.Element{Class: textField, ResourceID: "oneTimeCodeField", Editable: true}, false, true},
		// Other languages.
		{"es password", sdk.Element{Class: editText, Hint: "Contraseña", Editable: true}, true, false},
		{"fr password", sdk.Element{Class: editText, Hint: "Mot de passe", Editable: true}, true, false},
		{"de password", sdk.Element{Class: editText, Hint: "Passwort eingeben", Editable: true}, true, false},
		{"pt password", sdk.Element{Class: editText, Hint: "Senha", Editable: true}, true, false},
		{"zh password", sdk.Element{Class: editText, Hint: "请输入密码", Editable: true}, true, false},
		{"zh-Hant password", sdk.Element{Class: editText, Hint: "密碼", Editable: true}, true, false},
		{"ja password", sdk.Element{Class: textField, Hint: "パスワード", Editable: true}, true, false},
		{"ko password", sdk.Element{Class: editText, Hint: "비밀번호", Editable: true}, true, false},
		{"ru password", sdk.Element{Class: editText, Hint: "Пароль", Editable: true}, true, false},
		{"zh code", sdk.Element{Class: editText, Hint: "请输入短信验证码", Editable: true}, false, true},
		{"zh-Hant code", sdk.Element{Class: editText, Hint: "驗證碼", Editable: true}, false, true},
		{"ja code", sdk.Element{Class: textField, Hint: "認証コード", Editable: true}, false, true},
		{"ko code", sdk.Element{Class: editText, Hint: "인증번호 6자리", Editable: true}, false, true},
		{"es code", sdk.Element{Class: editText, Hint: "Código de verificación", Editable: true}, false, true},
		{"fr code", sdk.Element{Class: editText, Hint: "Code de vérification", Editable: true}, false, true},
		{"de code", sdk.Element{Class: editText, Hint: "Bestätigungscode", Editable: true}, false, true},
		{"pt code", sdk.Element{Class: editText, Hint: "Código", Editable: true}, false, true},
		{"ru code", sdk.Element{Class: editText, Hint: "Код из СМС", Editable: true}, false, true},
		{"ar code", sdk.Element{Class: editText, Hint: "رمز التحقق", Editable: true}, false, true},
		// Near misses.
		{"promo code", sdk.Element{Class: editText, Hint: "Promo code", Editable: true}, false, false},
		{"zip code", sdk.Element{Class: editText, Hint: "ZIP code", ResourceID: "zip", Editable: true}, false, false},
		{"postal code id", sdk.Element{Class: editText, ResourceID: "com.shop:id/postal_code", Editable: true}, false, false},
		{"coupon", sdk.Element{Class: textField, Hint: "Coupon code", Editable: true}, false, false},
		{"es postal", sdk.Element{Class: editText, Hint: "Código postal", Editable: true}, false, false},
		{"fr promo", sdk.Element{Class: editText, Hint: "Code promo", Editable: true}, false, false},
		{"de voucher", sdk.Element{Class: editText, Hint: "Gutscheincode", Editable: true}, false, false},
		{"ru promo", sdk.Element{Class: editText, Hint: "Промокод", Editable: true}, false, false},
		{"country code", sdk.Element{Class: editText, ContentDescription: "Country code", Editable: true}, false, false},
		{"search", sdk.Element{Class: editText, Hint: "Search", ResourceID: "search_src_text", Editable: true}, false, false},
		{"email", sdk.Element{Class: textField, Hint: "Email or phone", Editable: true}, false, false},
		{"forgot password button", sdk.Element{Class: "android.widget.Button", Text: "Forgot password?", Clickable: true}, false, false},
		{"password label", sdk.Element{Class: "android.widget.TextView", Text: "Password", ResourceID: "com.example:id/password_label"}, false, false},
		{"passport", sdk.Element{Class: editText, Hint: "Passport number", Editable: true}, false, false},
		{"code label", sdk.Element{Class: "XCUIElementTypeStaticText", Text: "Enter the code we sent you"}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsPasswordField(tt.el); got != tt.password {
				t.Errorf("IsPasswordField(%+v): got %v; want %v", tt.el, got, tt.password)
			}
			if got := IsCodeField(tt.el); got != tt.code {
				t.Errorf("IsCodeField(%+v): got %v; want %v", tt.el, got, tt.code)
			}
		})
	}
}

func TestIDWords(t *testing.T) {
	tests := []struct{ id, want string }{
		{"com.bank:id/et_smsCode", "et sms Code"},
		{"OTPInput", "OTP Input"},
		{"otp", "otp"},
		{"password2", "password2"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := idWords(tt.id); got != tt.want {
			t.Errorf("idWords(%q): got %q; want %q", tt.id, got, tt.want)
		}
	}
}
