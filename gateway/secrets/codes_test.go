package secrets

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// codes returns the texts FindCodes found, for readable failures.
func codes(text string) []string {
	var out []string
	for _, sp := range FindCodes(text) {
		out = append(out, text[sp.Start:sp.End])
	}
	return out
}

func TestFindCodes(t *testing.T) {
	tests := []struct {
		lang, text string
		want       []string
	}{
		// English: the world's flows, real services' SMS and near misses.
		{"en", "Your code is 482913", []string{"482913"}},
		{"en", "G-482913 is your Google verification code.", []string{"482913"}},
		{"en", "Your verification code is 482 913. Don't share it.", []string{"482 913"}},
		{"en", "482913 is your Instagram code. Don't share it.", []string{"482913"}},
		{"en", "Use 4829 to verify your account", []string{"4829"}},
		{"en", "Your one-time passcode: 48291357", []string{"48291357"}},
		{"en", "Your OTP for login is 482-913. Valid for 10 minutes.", []string{"482-913"}},
		{"en", "Verification code\n482913", []string{"482913"}},
		{"en", "Your security code is below.\n\n482913", []string{"482913"}},
		{"en", "Your PIN is 4821", []string{"4821"}},
		{"en", "Telegram code: 48291\n\nYou can also tap on this link to log in:\nhttps://t.me/login/48291", []string{"48291", "48291"}},
		{"en", "Your Steam Guard code: 7K2FQ9", []string{"7K2FQ9"}},
		{"en", "Your 2FA token is ٤٨٢٩١٣", []string{"٤٨٢٩١٣"}},
		{"en", "Order #1042 — Wireless Headphones", nil},
		{"en", "Order 104223 has shipped", nil},
		{"en", "Thanks, we received your payment of $1,200.", nil},
		{"en", "Total: $1,234.56", nil},
		{"en", "Yes, 12:30 at Rosa's", nil},
		{"en", "Phone number: +1 555 0100", nil},
		{"en", "Call 1-800-555-0100 for help", nil},
		{"en", "© 2026 Bank Inc.", nil},
		{"en", "Balance: $2,431.08", nil},
		{"en", "Pay $59.99 with Visa •••• 4242?", nil},
		{"en", "Enter the promo code SAVE10 to get 1500 points", nil},
		{"en", "ZIP code 94103", nil},
		{"en", "Error code 1042", nil},
		{"en", "Your code expires on May 12, 2026.", nil},
		{"en", "Your code is 482913. Order #1042 ships on 12.05.2026", []string{"482913"}},
		{"en", "Code sent. Your order 104223 ships tomorrow.", nil},
		{"en", "Your code: ••••••", nil},
		{"en", "Build number: PINKY.SIM.1", nil},
		{"en", "Card 4242 4242 4242 4242 verification", nil},
		{"en", "Enter code 2048 MB", nil},
		{"en", "Your code is -1234", nil},
		// Chinese
		{"zh-Hans", "【银行】您的验证码是482913，5分钟内有效，请勿泄露。", []string{"482913"}},
		{"zh-Hans", "验证码：482913（10分钟内有效）", []string{"482913"}},
		{"zh-Hans", "您的订单1042已发货", nil},
		{"zh-Hans", "验证码将于2026年5月12日过期", nil},
		{"zh-Hans", "本次消费¥1234.00", nil},
		{"zh-Hant", "您的驗證碼為 482913，請於5分鐘內輸入。", []string{"482913"}},
		{"zh-Hant", "訂單編號 104223", nil},
		// Japanese
		{"ja", "認証コード：482913 このコードは10分間有効です。", []string{"482913"}},
		{"ja", "確認コードは４８２９１３です", []string{"４８２９１３"}},
		{"ja", "ご注文番号 104223 の発送が完了しました", nil},
		{"ja", "合計 1,234円", nil},
		// Korean
		{"ko", "[Web발신] 인증번호 [482913]를 입력해주세요.", []string{"482913"}},
		{"ko", "본인확인 인증번호(482913) 입력시 정상처리 됩니다.", []string{"482913"}},
		{"ko", "결제 금액 12,000원", nil},
		{"ko", "주문번호 1042", nil},
		// Spanish
		{"es", "Tu código de verificación es 482913", []string{"482913"}},
		{"es", "482913 es tu código de WhatsApp.", []string{"482913"}},
		{"es", "Código postal 28013", nil},
		{"es", "Total: 1.234,56 €", nil},
		// French
		{"fr", "Votre code de vérification est : 482913", []string{"482913"}},
		{"fr", "Code postal : 75011", nil},
		{"fr", "Votre commande n° 104223 est expédiée", nil},
		// German
		{"de", "Ihr Bestätigungscode lautet 482913.", []string{"482913"}},
		{"de", "Ihre mTAN: 4829-1357", []string{"4829-1357"}},
		{"de", "Gutscheincode 2026 einlösen", nil},
		{"de", "Betrag: 1.234,56 EUR", nil},
		// Portuguese
		{"pt", "Seu código de verificação é 482913", []string{"482913"}},
		{"pt", "Use a senha 4829 para acessar", []string{"4829"}},
		{"pt", "Pedido 104223 enviado", nil},
		// Russian
		{"ru", "Код подтверждения: 482913. Никому не сообщайте его.", []string{"482913"}},
		{"ru", "Ваш пароль для входа 4829", []string{"4829"}},
		{"ru", "Промокод 2026 на скидку", nil},
		{"ru", "Сумма 1500 руб", nil},
		// Arabic
		{"ar", "رمز التحقق الخاص بك هو 482913", []string{"482913"}},
		{"ar", "رمز التحقق: ٤٨٢٩١٣", []string{"٤٨٢٩١٣"}},
		{"ar", "الرمز البريدي 12345", nil},
		{"ar", "رقم الطلب 104223", nil},
	}
	for _, tt := range tests {
		t.Run(tt.lang+"/"+tt.text, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, codes(tt.text)); diff != "" {
				t.Errorf("FindCodes(%q) (-want +got):\n%s", tt.text, diff)
			}
		})
	}
}

func TestMaskCodes(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Your code is 482913", "Your code is ••••••"},
		{"G-482913 is your Google verification code.", "G-•••••• is your Google verification code."},
		{"Your verification code is 482 913.", "Your verification code is ••• •••."},
		{"验证码：482913", "验证码：••••••"},
		{"Your code: K7F2Q9", "Your code: ••••••"},
		{"Order #1042", "Order #1042"},
		{"", ""},
	}
	for _, tt := range tests {
		got := MaskCodes(tt.in)
		if got != tt.want {
			t.Errorf("MaskCodes(%q): got %q; want %q", tt.in, got, tt.want)
		}
		if again := MaskCodes(got); again != got {
			t.Errorf("MaskCodes(%q) again: got %q; want it unchanged", got, again)
		}
	}
}

func yes() bool { return true }

func TestScopes(t *testing.T) {
	tests := []struct {
		name string
		text string
		sc   scope
		want bool
	}{
		{"authenticator", "305 118", scope{authenticator: true}, true},
		{"authenticator, 8 digits", "GitHub 30511842", scope{authenticator: true}, true},
		{"authenticator, 4 digits", "1234", scope{authenticator: true}, false},
		{"plain", "305 118", scope{}, false},
		{"about codes, alone", "482913", scope{aboutCodes: yes}, true},
		{"about codes, in a sentence", "Order 104223 shipped", scope{aboutCodes: yes}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := len(findCodes(tt.text, tt.sc)) > 0; got != tt.want {
				t.Errorf("findCodes(%q, %+v): got %v; want %v", tt.text, tt.sc, got, tt.want)
			}
		})
	}
}

func TestScrub(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Your code is 482913", "Your code is ••••••"},
		{"typed password: hunter2 into field 3", "typed password: •••••••• into field 3"},
		{`{"pin":"1234"}`, `{"pin":"••••••••"}`},
		{"Authorization: Bearer abc.DEF-123", "Authorization: Bearer ••••••••"},
		{"open https://x.test/cb?state=ok&code=4/0Adeu5B&scope=email", "open https://x.test/cb?state=ok&code=••••••••&scope=email"},
		{"card 4242 4242 4242 4242 used", "card •••• •••• •••• 4242 used"},
		{"card 4242 4242 4242 4241 used", "card 4242 4242 4242 4241 used"},
		{"Tapped Send in Messages at 12:30", "Tapped Send in Messages at 12:30"},
		{"Settings › Passwords & accounts", "Settings › Passwords & accounts"},
	}
	for _, tt := range tests {
		if got := Scrub(tt.in); got != tt.want {
			t.Errorf("Scrub(%q): got %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestSpansAreByteOffsets(t *testing.T) {
	text := "验证码：482913"
	sp := FindCodes(text)
	if len(sp) != 1 || !strings.HasPrefix(text[sp[0].Start:], "482913") || sp[0].End != len(text) {
		t.Errorf("FindCodes(%q): got %v; want the byte range of 482913", text, sp)
	}
}
