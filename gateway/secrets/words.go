package secrets

import (
	"strings"
	"unicode/utf8"
)

// A lexicon finds words in folded text. Each entry is matched in one of
// three ways; an entry with spaces also matches with "-", "_" or nothing in
// their place ("zip code", "zip-code", "zipcode").
type lexicon struct {
	ascii   [utf8.RuneSelf][]entry // by first rune, for the common case
	byFirst map[rune][]entry       // by first rune, the others
	not     *lexicon               // the exclusions, searched only after a hit
}

type entry struct {
	r     []rune
	how   matchMode
	group int // which of the lexicon's word lists the entry is from
}

type matchMode uint8

const (
	anywhere matchMode = iota // inside any word: CJK, compounds ("bestätigungscode")
	prefix                    // at the start of a word: "verif" finds "vérification"
	whole                     // a whole word: "pin" is not "spinning"
)

// hit is one match: runes [s, e) of the folded text, of a word from the
// lexicon's list number group.
type hit struct{ s, e, group int }

// newLexicon builds a lexicon. Words in the tables are written naturally and
// folded here, exactly like the text they are matched against. A hit tells
// which of the lists its word is from.
func newLexicon(groups ...[]string) *lexicon {
	l := &lexicon{byFirst: map[rune][]entry{}, not: &lexicon{byFirst: map[rune][]entry{}}}
	for gi, g := range groups {
		for _, w := range g {
			how, exclude := anywhere, false
			for len(w) > 0 && strings.ContainsRune("^=!", rune(w[0])) {
				switch w[0] {
				case '^':
					how = prefix
				case '=':
					how = whole
				case '!':
					exclude = true
				}
				w = w[1:]
			}
			to := l
			if exclude {
				to = l.not
			}
			for _, v := range variants(foldString(w)) {
				to.add(entry{r: []rune(v), how: how, group: gi})
			}
		}
	}
	return l
}

// variants spells a phrase with each joiner between its words.
func variants(w string) []string {
	if !strings.Contains(w, " ") {
		return []string{w}
	}
	out := []string{w}
	for _, j := range []string{"-", "_", ""} {
		out = append(out, strings.ReplaceAll(w, " ", j))
	}
	return out
}

func (l *lexicon) add(e entry) {
	if c := e.r[0]; c < utf8.RuneSelf {
		l.ascii[c] = append(l.ascii[c], e)
	} else {
		l.byFirst[c] = append(l.byFirst[c], e)
	}
}

// find returns the matches of l's words in f that no exclusion covers, in
// order of their start.
func (l *lexicon) find(f folded) []hit {
	hits := l.scan(f.r)
	if len(hits) == 0 {
		return nil
	}
	excl := l.not.scan(f.r)
	if len(excl) == 0 {
		return hits
	}
	out := hits[:0]
	for _, h := range hits {
		covered := false
		for _, x := range excl {
			if x.s <= h.s && h.e <= x.e {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, h)
		}
	}
	return out
}

// scan returns every match of l's own words.
func (l *lexicon) scan(r []rune) []hit {
	var hits []hit
	for i, c := range r {
		var entries []entry
		if c < utf8.RuneSelf {
			entries = l.ascii[c]
		} else if len(l.byFirst) > 0 {
			entries = l.byFirst[c]
		}
		for _, en := range entries {
			if !hasRunes(r[i:], en.r) {
				continue
			}
			e := i + len(en.r)
			if en.how != anywhere && i > 0 && isWordRune(r[i-1]) {
				continue
			}
			if en.how == whole && e < len(r) && isWordRune(r[e]) {
				continue
			}
			hits = append(hits, hit{i, e, en.group})
		}
	}
	return hits
}

// mentions reports whether text holds one of l's words.
func (l *lexicon) mentions(text string) bool {
	if text == "" {
		return false
	}
	return len(l.find(fold(text))) > 0
}

func hasRunes(s, p []rune) bool {
	if len(s) < len(p) {
		return false
	}
	for i, c := range p {
		if s[i] != c {
			return false
		}
	}
	return true
}

// Word tables. A leading "^" matches at the start of a word, "=" only a
// whole word, nothing anywhere; "!" marks a phrase whose words do not count
// ("zip code" is not a one-time code).

// codeWords name a one-time code.
var codeWords = []string{
	// English and shared
	"code", "^passcode", "=otp", "=totp", "=2fa", "=mfa", "^one time", "^verif", "^authenti",
	"=token", "=tan", "=mtan", "=smstan", "=pushtan",
	// Spanish, Portuguese, Italian, French, German, Turkish, Polish, Indonesian
	"codigo", "codice", "^autenti", "^einmal", "^bestatigung", "^kod",
	// Russian
	"код", "^подтвержд", "^проверочн", "^одноразов",
	// Arabic
	"رمز", "كود", "تحقق",
	// Chinese (Simplified and Traditional)
	"验证码", "驗證碼", "校验码", "校驗碼", "动态码", "動態碼", "确认码", "確認碼", "安全码", "安全碼",
	"认证码", "認證碼", "登录码", "登錄碼", "激活码", "啟用碼", "授权码", "授權碼", "取件码", "短信码",
	"口令", "验证", "驗證", "校验", "认证", "認證", "一次性",
	// Japanese
	"コード", "認証", "確認番号", "承認番号", "ワンタイム",
	// Korean
	"인증", "코드", "승인번호", "확인번호", "일회용",
	// Hindi, Vietnamese
	"कोड", "ओटीपी", "सत्यापन", "mã xác", "=mã otp",
}

// passwordWords name a password or a PIN.
var passwordWords = []string{
	"^password", "^passwort", "^passwd", "^kennwort", "^wachtwoord", "=pwd", "=pass", "=pin",
	"^contraseña", "=clave", "^senha", "^mot de passe", "^haslo", "^sifre", "^parola d",
	"пароль", "密码", "密碼", "パスワード", "暗証番号", "비밀번호", "암호",
	"كلمة المرور", "كلمة السر", "الرقم السري", "رقم سري", "סיסמה", "पासवर्ड",
	// Temporary and one-time passwords, where the qualifier follows the noun.
	"^contraseña temporal", "^contraseña provisional", "^mot de passe temporaire",
	"^mot de passe provisoire", "^senha temporária", "^senha provisória", "كلمة المرور المؤقتة",
	"كلمة السر المؤقتة", "^einmalpasswort", "^einmalkennwort",
}

// notCodeWords are phrases with a code word that do not name a secret.
var notCodeWords = []string{
	// English
	"!promo code", "!promotional code", "!coupon code", "!discount code", "!voucher code",
	"!gift code", "!gift card code", "!referral code", "!invite code", "!invitation code",
	"!zip code", "!postal code", "!post code", "!area code", "!country code", "!dialing code",
	"!dial code", "!error code", "!status code", "!exit code", "!source code", "!qr code",
	"!bar code", "!dress code", "!tracking code", "!product code", "!color code",
	"!colour code", "!swift code", "!sort code", "!tax code", "!short code", "!morse code",
	"!code review", "!decode", "!encode", "!unicode", "!geocode", "!codec", "!opcode", "!bytecode",
	"!offer code",
	"!=pin it", "!=pinned", "!=pass by", "!=boarding pass",
	// Spanish, Portuguese, Italian
	"!codigo postal", "!codigo promocional", "!codigo de descuento", "!codigo de desconto",
	"!codigo de cupon", "!codigo do cupom", "!codigo de barras", "!codigo de area",
	"!codigo de pais", "!codigo do pais", "!codigo de referencia", "!codigo de indicacao",
	"!codigo de invitacion", "!codigo de convite", "!codigo fuente", "!codigo fonte",
	"!codigo de error", "!codigo de erro", "!codigo de rastreo", "!codigo de rastreamento",
	"!palabra clave", "!codice fiscale", "!codice sconto", "!codice promozionale",
	"!codice postale", "!codice a barre", "!codice di errore", "!codice sorgente",
	// French
	"!code postal", "!code promo", "!code promotionnel", "!code de reduction", "!code barre",
	"!code barres", "!code de parrainage", "!code pays", "!code d'erreur", "!code source",
	"!code de suivi", "!code d'invitation",
	// German
	"!gutscheincode", "!rabattcode", "!aktionscode", "!fehlercode", "!quellcode", "!landercode",
	"!laendercode", "!empfehlungscode", "!einladungscode", "!strichcode",
	// Russian
	"!промокод", "!штрихкод", "!штрих код", "!qr код", "!код города", "!код страны",
	"!код ошибки", "!почтовый код", "!исходный код", "!код купона", "!код скидки",
	"!код товара", "!код региона",
	// Japanese
	"!qrコード", "!バーコード", "!プロモーションコード", "!プロモコード", "!クーポンコード",
	"!エラーコード", "!ソースコード", "!招待コード", "!紹介コード", "!割引コード",
	// Korean
	"!qr 코드", "!바코드", "!쿠폰 코드", "!프로모션 코드", "!할인 코드", "!오류 코드", "!에러 코드",
	"!추천 코드", "!추천인 코드", "!초대 코드", "!소스 코드",
	// Arabic
	"!الرمز البريدي", "!رمز بريدي", "!الرمز الترويجي", "!رمز ترويجي", "!رمز الخصم",
	"!كود الخصم", "!كود خصم", "!رمز الاستجابة السريعة", "!رمز qr", "!رمز الخطأ", "!رمز الدولة",
	"!رمز الإحالة", "!رمز القسيمة", "!رمز الكوبون", "!كود الكوبون", "!رمز المنطقة",
}

// passwordGroup is the place of passwordWords among secretText's lists.
const passwordGroup = 1

var (
	// secretText finds the words that make a nearby number a code.
	secretText = newLexicon(codeWords, passwordWords, notCodeWords)
	// codeText finds the words that name a one-time code only.
	codeText = newLexicon(codeWords, notCodeWords)
	// passwordText finds the words that name a password.
	passwordText = newLexicon(passwordWords, notCodeWords)
)
