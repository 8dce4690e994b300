package secrets

import (
	"regexp"
	"strings"
)

// Scrub hides the secrets a free text may hold, for logs, events and the
// history: one-time codes (as MaskCodes), card numbers that pass the Luhn
// check (all but the last 4 digits), the value after "password:",
// "pin=", "token:", "secret=", "api_key=" and their translations, bearer
// tokens, JSON web tokens and secret URL parameters (code, token,
// password, key, sig, …). Everything else is left as it was.
func Scrub(text string) string {
	text = MaskCodes(text)
	text = maskCards(text)
	if strings.ContainsAny(text, ":=") || strings.Contains(text, "eyJ") || containsFold(text, "bearer") {
		text = keyValue.ReplaceAllString(text, "${1}${2}"+hidden)
		text = bearer.ReplaceAllString(text, "${1}"+hidden)
		text = jwt.ReplaceAllString(text, hidden)
		text = query.ReplaceAllString(text, "${1}"+hidden)
	}
	return text
}

var (
	keyValue = regexp.MustCompile(`(?i)(^|[^\p{L}\p{N}_])((?:password|passwd|passwort|pwd|passcode|pin|otp|secret|token|api[_-]?key|access[_-]?token|refresh[_-]?token|client[_-]?secret|contraseña|senha|mot de passe|kennwort|пароль|密码|密碼|パスワード|비밀번호|كلمة المرور)["']?\s*[:=：]\s*["']?)[^\s,;&"'}]+`)
	bearer   = regexp.MustCompile(`(?i)(\bbearer\s+)[A-Za-z0-9._~+/-]+=*`)
	jwt      = regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]*`)
	query    = regexp.MustCompile(`(?i)([?&#](?:code|otp|token|access_token|id_token|refresh_token|password|pwd|key|api_key|secret|sig|signature|auth)=)[^&#\s]+`)
)

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), sub)
}

// maskCards hides all but the last 4 digits of card numbers: 13 to 19
// digits, whole or in groups joined by single spaces or dashes, that pass
// the Luhn check.
func maskCards(text string) string {
	var spans []Span
	for i := 0; i < len(text); {
		if !isASCIIDigit(text[i]) || i > 0 && (isASCIIDigit(text[i-1]) || isWordByte(text[i-1])) {
			i++
			continue
		}
		j, n := i, 0
		var digits [19]byte
		for j < len(text) {
			if isASCIIDigit(text[j]) {
				if n == len(digits) {
					n++
					break
				}
				digits[n] = text[j]
				n++
				j++
			} else if (text[j] == ' ' || text[j] == '-') && j+1 < len(text) && isASCIIDigit(text[j+1]) && j > i {
				j++
			} else {
				break
			}
		}
		if n >= 13 && n <= 19 && luhn(digits[:n]) && (j == len(text) || !isWordByte(text[j])) {
			// Keep the last four digits.
			end, keep := j, 0
			for end > i && keep < 4 {
				end--
				if isASCIIDigit(text[end]) {
					keep++
				}
			}
			spans = append(spans, Span{i, end})
		}
		i = j + 1
	}
	return maskSpans(text, spans)
}

func isASCIIDigit(c byte) bool { return '0' <= c && c <= '9' }

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_'
}

func luhn(d []byte) bool {
	sum := 0
	for i := range d {
		v := int(d[len(d)-1-i] - '0')
		if i%2 == 1 {
			if v *= 2; v > 9 {
				v -= 9
			}
		}
		sum += v
	}
	return sum%10 == 0
}
