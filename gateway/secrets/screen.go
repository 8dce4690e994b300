package secrets

import (
	"strings"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Options says what the caller knows about a screen.
type Options struct {
	// AuthenticatorApp says the screen belongs to an authenticator app:
	// every number of 6 to 8 digits on it is a code. A few well-known
	// authenticators are recognised by their app id without it.
	AuthenticatorApp bool
}

// hidden is what a password field shows instead of its text: a fixed
// length, so it tells that the field is filled and not how long the
// password is.
const hidden = "••••••••"

// MaskScreen returns a copy of s that shows no secret, and the rectangles
// (screen pixels) a screenshot of s must cover. In the copy:
//
//   - codes are masked in every element's Text, ContentDescription, Value
//     and Hint;
//   - a password field's Text and Value read "••••••••" when filled, even
//     if the driver already showed dots, and a description that repeats
//     them is hidden too;
//   - a code field's Text and Value have every letter and digit masked;
//   - on a screen that talks about codes (it has a code field or says
//     "Enter the code"), a number alone in its text is masked.
//
// The rectangles are the bounds of password fields, code fields and every
// element where something was masked. s is not modified; a nil s gives nil.
func MaskScreen(s *sdk.Screen, opts Options) (*sdk.Screen, []sdk.Rect) {
	if s == nil {
		return nil, nil
	}
	out := *s
	out.Elements = make([]sdk.Element, len(s.Elements))
	copy(out.Elements, s.Elements)
	sc := scope{authenticator: opts.AuthenticatorApp || isAuthenticator(s.App.ID)}

	// First the field kinds, and whether the screen is about codes.
	const (
		password = 1 << iota
		code
		digits
	)
	kinds := make([]uint8, len(s.Elements))
	codeField := false
	for i, el := range s.Elements {
		switch {
		case IsPasswordField(el):
			kinds[i] = password
		case IsCodeField(el):
			kinds[i] = code
			codeField = true
		}
		if mayHoldCode(el.Text) || mayHoldCode(el.ContentDescription) || mayHoldCode(el.Value) || mayHoldCode(el.Hint) {
			kinds[i] |= digits
		}
	}
	// Whether the screen talks about codes is worked out once, and only if
	// a number alone in its text needs it.
	about, known := codeField, codeField
	sc.aboutCodes = func() bool {
		if !known {
			known = true
			for _, el := range s.Elements {
				if codeText.mentions(el.Text) || codeText.mentions(el.ContentDescription) {
					about = true
					break
				}
			}
		}
		return about
	}

	var boxes []sdk.Rect
	for i := range out.Elements {
		el := &out.Elements[i]
		k := kinds[i]
		if k == 0 {
			continue
		}
		text, value := el.Text, el.Value
		masked := false
		switch {
		case k&password != 0:
			el.Text = hide(text, el.Hint, func(string) string { return hidden })
			el.Value = hide(value, el.Hint, func(string) string { return hidden })
			if d := el.ContentDescription; d != "" && (d == text || d == value) {
				el.ContentDescription = hidden
			}
			masked = true
		case k&code != 0:
			el.Text = hide(text, el.Hint, maskWords)
			el.Value = hide(value, el.Hint, maskWords)
			if d := el.ContentDescription; d != "" && (d == text || d == value) {
				el.ContentDescription = maskWords(d)
			}
			masked = true
		}
		if k&digits != 0 {
			for _, f := range []*string{&el.Text, &el.ContentDescription, &el.Value, &el.Hint} {
				if m := maskSpans(*f, findCodes(*f, sc)); m != *f {
					*f = m
					masked = true
				}
			}
		}
		if masked && !el.Bounds.Empty() {
			boxes = append(boxes, el.Bounds)
		}
	}
	return &out, boxes
}

// hide applies f to a field's text unless it is empty or only repeats the
// hint (Android reports an empty field's hint as its text).
func hide(text, hint string, f func(string) string) string {
	if text == "" || text == hint {
		return text
	}
	return f(text)
}

// MaskNotification returns n with the codes in its title and text masked.
// The title counts as the text's context: a title "Verification code" makes
// a text "482913" a code.
func MaskNotification(n sdk.Notification) sdk.Notification {
	sc := scope{authenticator: isAuthenticator(n.AppID)}
	if !mayHoldCode(n.Title) && !mayHoldCode(n.Text) {
		return n
	}
	joined := n.Title + "\n" + n.Text
	var title, text []Span
	cut := len(n.Title) + 1
	for _, sp := range findCodes(joined, sc) {
		if sp.End <= len(n.Title) {
			title = append(title, sp)
		} else if sp.Start >= cut {
			text = append(text, Span{sp.Start - cut, sp.End - cut})
		}
	}
	n.Title = maskSpans(n.Title, title)
	n.Text = maskSpans(n.Text, text)
	return n
}

// authenticators are the app ids of well-known authenticator apps, whose
// screens hold nothing but codes. The policy's app table is the main
// source; this list keeps the best-known ones masked even without it.
var authenticators = map[string]bool{
	"com.google.android.apps.authenticator2": true,
	"com.google.Authenticator":               true,
	"com.azure.authenticator":                true,
	"com.microsoft.azureauthenticator":       true,
	"com.authy.authy":                        true,
	"com.authy":                              true,
	"org.fedorahosted.freeotp":               true,
	"com.beemdevelopment.aegis":              true,
	"com.duosecurity.duomobile":              true,
	"com.lastpass.authenticator":             true,
	"com.yubico.yubioath":                    true,
	"com.twofasapp":                          true,
}

func isAuthenticator(appID string) bool {
	return appID != "" && authenticators[strings.TrimSpace(appID)]
}
