package secrets

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Invisible characters an app or an SMS gateway puts inside a code, and the
// spaces that look like one.
const (
	zwsp   = "\u200b" // zero-width space
	wj     = "\u2060" // word joiner
	bom    = "\ufeff" // zero-width no-break space
	nbsp   = "\u00a0"
	thin   = "\u2009"
	narrow = "\u202f"
	shy    = "\u00ad" // soft hyphen
	lrm    = "\u200e" // left-to-right mark
)

// TestCodeFormats has each format of issue 12 ("Code masking misses
// formats") in each of the 11 languages' phrasings: spaced digits, digits
// split by an invisible space, the code before the code word, a hyphen,
// and a temporary password. Every case failed before the detector was
// widened, or guards a format next to one that did.
func TestCodeFormats(t *testing.T) {
	tests := []struct {
		lang, text string
		want       []string
	}{
		// English
		{"en", "Your code is 482 913", []string{"482 913"}},
		{"en", "482913 is your verification code", []string{"482913"}},
		{"en", "Your code is 4 8 2 9 1 3", []string{"4 8 2 9 1 3"}},
		{"en", "Your code is 48 29 13", []string{"48 29 13"}},
		{"en", "Your code is 4829 1357", []string{"4829 1357"}},
		{"en", "Your code is 482  913", []string{"482  913"}},
		{"en", "Your code is 482" + zwsp + "913", []string{"482" + zwsp + "913"}},
		{"en", "Your code is 48" + zwsp + "29" + zwsp + "13", []string{"48" + zwsp + "29" + zwsp + "13"}},
		{"en", "Your code is 482" + wj + "913", []string{"482" + wj + "913"}},
		{"en", "Your code is 482" + bom + "913", []string{"482" + bom + "913"}},
		{"en", "Your code is 482" + shy + "913", []string{"482" + shy + "913"}},
		{"en", "Your code is " + lrm + "482913", []string{"482913"}},
		{"en", "Your code is 482" + nbsp + "913", []string{"482" + nbsp + "913"}},
		{"en", "Your code is 482" + thin + "913", []string{"482" + thin + "913"}},
		{"en", "Your code is 482" + narrow + "913", []string{"482" + narrow + "913"}},
		{"en", "Your code is 123-456", []string{"123-456"}},
		{"en", "Your code is 4 8 2 9", []string{"4 8 2 9"}},
		{"en", "temporary password: Xk7#pq2", []string{"Xk7#pq2"}},
		{"en", "Your temporary password is Xk7#pq2.", []string{"Xk7#pq2"}},
		{"en", "Your new password is 'Xk7#pq2'", []string{"Xk7#pq2"}},
		{"en", "Your one-time password: 48291357", []string{"48291357"}},
		// Chinese, Simplified
		{"zh-Hans", "您的验证码是 482 913", []string{"482 913"}},
		{"zh-Hans", "482913是您的验证码，请勿泄露", []string{"482913"}},
		{"zh-Hans", "验证码：4 8 2 9 1 3", []string{"4 8 2 9 1 3"}},
		{"zh-Hans", "验证码：482" + zwsp + "913", []string{"482" + zwsp + "913"}},
		{"zh-Hans", "验证码：123-456", []string{"123-456"}},
		{"zh-Hans", "您的临时密码为：Xk7#pq2", []string{"Xk7#pq2"}},
		// Chinese, Traditional
		{"zh-Hant", "您的驗證碼為 482 913", []string{"482 913"}},
		{"zh-Hant", "482913 是您的驗證碼", []string{"482913"}},
		{"zh-Hant", "驗證碼：48" + wj + "29" + wj + "13", []string{"48" + wj + "29" + wj + "13"}},
		{"zh-Hant", "您的臨時密碼：Xk7#pq2", []string{"Xk7#pq2"}},
		// Japanese
		{"ja", "認証コードは 482 913 です", []string{"482 913"}},
		{"ja", "482913 があなたの認証コードです", []string{"482913"}},
		{"ja", "確認コード：４８２ ９１３", []string{"４８２ ９１３"}},
		{"ja", "認証コード：482" + bom + "913", []string{"482" + bom + "913"}},
		{"ja", "仮パスワード：Xk7#pq2", []string{"Xk7#pq2"}},
		{"ja", "一時パスワードは Xk7#pq2 です", []string{"Xk7#pq2"}},
		// Korean
		{"ko", "인증번호는 482 913 입니다", []string{"482 913"}},
		{"ko", "482913은 인증번호입니다", []string{"482913"}},
		{"ko", "[Web발신] 인증번호 [482" + zwsp + "913]", []string{"482" + zwsp + "913"}},
		{"ko", "인증번호: 123-456", []string{"123-456"}},
		{"ko", "임시 비밀번호는 Xk7#pq2입니다", []string{"Xk7#pq2"}},
		// Spanish
		{"es", "Tu código es 482 913", []string{"482 913"}},
		{"es", "482913 es tu código de verificación", []string{"482913"}},
		{"es", "Tu código es 4 8 2 9 1 3", []string{"4 8 2 9 1 3"}},
		{"es", "Tu código es 482" + nbsp + "913", []string{"482" + nbsp + "913"}},
		{"es", "Tu contraseña temporal es Xk7#pq2", []string{"Xk7#pq2"}},
		// French
		{"fr", "Votre code est 482 913", []string{"482 913"}},
		{"fr", "482913 est votre code de vérification", []string{"482913"}},
		{"fr", "Votre code est 48 29 13", []string{"48 29 13"}},
		{"fr", "Votre code : 482" + narrow + "913", []string{"482" + narrow + "913"}},
		{"fr", "Votre mot de passe temporaire : Xk7#pq2", []string{"Xk7#pq2"}},
		// German
		{"de", "Ihr Code lautet 482 913", []string{"482 913"}},
		{"de", "482913 ist Ihr Bestätigungscode", []string{"482913"}},
		{"de", "Ihr Code lautet 482" + wj + "913", []string{"482" + wj + "913"}},
		{"de", "Ihre mTAN: 123-456", []string{"123-456"}},
		{"de", "Ihr temporäres Passwort: Xk7#pq2", []string{"Xk7#pq2"}},
		{"de", "Ihr Einmalpasswort lautet Xk7#pq2", []string{"Xk7#pq2"}},
		// Portuguese
		{"pt", "Seu código é 482 913", []string{"482 913"}},
		{"pt", "482913 é o seu código de verificação", []string{"482913"}},
		{"pt", "Seu código é 482" + bom + "913", []string{"482" + bom + "913"}},
		{"pt", "Seu código é 4 8 2 9 1 3", []string{"4 8 2 9 1 3"}},
		{"pt", "Sua senha temporária é Xk7#pq2", []string{"Xk7#pq2"}},
		// Russian
		{"ru", "Ваш код: 482 913", []string{"482 913"}},
		{"ru", "482913 — ваш код подтверждения", []string{"482913"}},
		{"ru", "Ваш код: 482" + nbsp + "913", []string{"482" + nbsp + "913"}},
		{"ru", "Код: 48 29 13", []string{"48 29 13"}},
		{"ru", "Ваш временный пароль — Xk7#pq2", []string{"Xk7#pq2"}},
		// Arabic
		{"ar", "رمز التحقق الخاص بك هو 482 913", []string{"482 913"}},
		{"ar", "482913 هو رمز التحقق الخاص بك", []string{"482913"}},
		{"ar", "رمز التحقق: ٤٨٢ ٩١٣", []string{"٤٨٢ ٩١٣"}},
		{"ar", "رمز التحقق: 482" + zwsp + "913", []string{"482" + zwsp + "913"}},
		{"ar", "كلمة المرور المؤقتة: Xk7#pq2", []string{"Xk7#pq2"}},
	}
	for _, tt := range tests {
		t.Run(tt.lang+"/"+tt.text, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, codes(tt.text)); diff != "" {
				t.Errorf("FindCodes(%q) (-want +got):\n%s", tt.text, diff)
			}
			masked := MaskCodes(tt.text)
			for _, w := range tt.want {
				if d, _ := digitsIn(w); len(d) >= 4 && strings.Contains(digitsOnly(masked), d) {
					t.Errorf("MaskCodes(%q) = %q: the digits %s still show", tt.text, masked, d)
				}
				if strings.Contains(masked, w) {
					t.Errorf("MaskCodes(%q) = %q: %q still shows", tt.text, masked, w)
				}
			}
		})
	}
}

// digitsOnly keeps the digits of s, whatever separates them.
func digitsOnly(s string) string {
	d, _ := digitsIn(s)
	return d
}

// TestNotCodes are the numbers that must stay readable, near a code word or
// not, in several languages: prices, amounts, times, dates, phone numbers,
// order numbers, and passwords that are not given.
func TestNotCodes(t *testing.T) {
	tests := []struct{ lang, text string }{
		{"en", "Your code expires at 12 30"},
		{"en", "Your code expires 12-05-26"},
		{"en", "Call 555 0100 if you did not request this code"},
		{"en", "Code sent to +1 555 010 0199"},
		{"en", "Verification code sent. Order 104 223 ships today"},
		{"en", "Your code is valid for 10 minutes"},
		{"en", "Your password is incorrect"},
		{"en", "Password: Required"},
		{"en", "Your password expires in 30 days"},
		{"en", "Your password was changed on 12.05.2026"},
		{"en", "Salary received +$1,850.00, balance $4,281.08"},
		{"en", "Total: $1 234.56"},
		{"en", "Flight BA 2490 departs at 18:45 from gate 12"},
		{"zh-Hans", "验证码将于 2026-05-12 过期"},
		{"zh-Hans", "订单号 1042 5678 9012"},
		{"zh-Hans", "本次消费 ¥1 234.00"},
		{"zh-Hant", "您的訂單 104223 已出貨，金額 NT$1,250"},
		{"ja", "合計 12 500円"},
		{"ja", "ご注文番号 1042-5678-9012"},
		{"ko", "결제 금액 12 000원"},
		{"ko", "배송 예정일 2026 05 12"},
		{"es", "Total: 1 234,56 €"},
		{"es", "Llámanos al 912 345 678"},
		{"fr", "Montant : 1 850,00 €"},
		{"fr", "Appelez le 01 23 45 67 89"},
		{"fr", "Rendez-vous à 12 h 30"},
		{"de", "Betrag: 1.234,56 EUR"},
		{"de", "Bestellnummer 4711-0815-42"},
		{"pt", "Valor: R$ 1.850,00"},
		{"pt", "Ligue para (11) 98765-4321"},
		{"ru", "Сумма 125 000 руб"},
		{"ru", "Позвоните 8 800 555-35-35"},
		{"ar", "المبلغ 1,850.00 ريال"},
		{"ar", "رقم الطلب 104 223 789"},
	}
	for _, tt := range tests {
		t.Run(tt.lang+"/"+tt.text, func(t *testing.T) {
			if got := codes(tt.text); got != nil {
				t.Errorf("FindCodes(%q): got %q; want none", tt.text, got)
			}
		})
	}
}

// TestBareCodeInNotification: a code with no code word near it, as a
// messaging app or an SMS sender shows it, in each language's SMS.
func TestBareCodeInNotification(t *testing.T) {
	tests := []struct {
		lang  string
		n     sdk.Notification
		text  string // the text once masked
		title string // the title once masked; "" means unchanged
	}{
		{"en", sdk.Notification{AppID: "com.google.android.apps.messaging", Title: "22395", Text: "482913"}, "••••••", ""},
		{"en", sdk.Notification{AppID: "com.google.android.apps.messaging", Title: "Bank", Text: "482 913"}, "••• •••", ""},
		{"en", sdk.Notification{AppID: "com.apple.MobileSMS", Title: "Google", Text: "G-482913"}, "G-••••••", ""},
		{"en", sdk.Notification{AppID: "org.telegram.messenger", Title: "Ana", Text: "Here it is.\n482913"}, "Here it is.\n••••••", ""},
		{"zh-Hans", sdk.Notification{AppID: "com.android.mms", Title: "银行", Text: "482913"}, "••••••", ""},
		{"zh-Hant", sdk.Notification{AppID: "com.android.mms", Title: "銀行", Text: "482" + zwsp + "913"}, "•••" + zwsp + "•••", ""},
		{"ja", sdk.Notification{AppID: "jp.naver.line.android", Title: "銀行", Text: "４８２９１３"}, "••••••", ""},
		{"ko", sdk.Notification{AppID: "com.samsung.android.messaging", Title: "은행", Text: "[482913]"}, "[••••••]", ""},
		{"es", sdk.Notification{AppID: "com.whatsapp", Title: "Banco", Text: "482913"}, "••••••", ""},
		{"fr", sdk.Notification{AppID: "com.google.android.apps.messaging", Title: "Banque", Text: "48 29 13"}, "•• •• ••", ""},
		{"de", sdk.Notification{AppID: "com.google.android.apps.messaging", Title: "Bank", Text: "482913"}, "••••••", ""},
		{"pt", sdk.Notification{AppID: "com.whatsapp", Title: "Banco", Text: "482913"}, "••••••", ""},
		{"ru", sdk.Notification{AppID: "com.google.android.apps.messaging", Title: "Банк", Text: "482913"}, "••••••", ""},
		{"ar", sdk.Notification{AppID: "com.google.android.apps.messaging", Title: "البنك", Text: "٤٨٢٩١٣"}, "••••••", ""},
		// An SMS that is nothing but the code, in its title.
		{"en", sdk.Notification{AppID: "com.google.android.apps.messaging", Title: "482913", Text: ""}, "", "••••••"},
	}
	for _, tt := range tests {
		t.Run(tt.lang+"/"+tt.n.Text, func(t *testing.T) {
			got := MaskNotification(tt.n)
			wantTitle := tt.title
			if wantTitle == "" {
				wantTitle = tt.n.Title
			}
			if got.Text != tt.text || got.Title != wantTitle {
				t.Errorf("MaskNotification(%+v): got title %q text %q; want %q, %q", tt.n, got.Title, got.Text, wantTitle, tt.text)
			}
		})
	}
	// Numbers in a notification's sentence are judged as anywhere else.
	for _, n := range []sdk.Notification{
		{AppID: "com.google.android.apps.messaging", Title: "Ben", Text: "See you at 19:30, table 1042"},
		{AppID: "com.google.android.apps.messaging", Title: "Ana", Text: "It's $45 each, 2 tickets"},
		{AppID: "com.shop", Title: "Order 104223", Text: "Your order has shipped"},
	} {
		if got := MaskNotification(n); got != n {
			t.Errorf("MaskNotification(%+v): got %+v; want it unchanged", n, got)
		}
	}
}
