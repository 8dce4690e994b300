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
	// AllCodes says the screen is never shown to an agent (a blocked
	// app's): every number on it with the shape of a code counts as one,
	// so that Recall learns them all.
	AllCodes bool
	// Recall, when set, learns the codes found on the screen, and any text
	// that shows a code it remembers (a copy pasted into a note) is masked
	// like the code, its element covered in screenshots.
	Recall *Recall
	// Hide, when set, is asked about each notification the screen shows
	// (see Notices). One it hides shows HiddenNotice in place of all its
	// text, and its row is covered in screenshots.
	Hide func(Notice) bool
}

// hidden is what a password field shows instead of its text: a fixed
// length, so it tells that the field is filled and not how long the
// password is.
const hidden = "••••••••"

// MaskScreen returns a copy of s that shows no secret, and the rectangles
// (screen pixels) a screenshot of s must cover. In the copy:
//
//   - a notification that opts.Hide hides reads HiddenNotice, whole;
//   - codes are masked in every element's Text, ContentDescription, Value
//     and Hint, and so are the codes opts.Recall remembers; in a
//     notification, a number alone in its sentence is a code;
//   - a password field's Text and Value read "••••••••" when filled, even
//     if the driver already showed dots, and a description that repeats
//     them is hidden too;
//   - a code field's Text and Value have every character but spaces
//     masked;
//   - on a screen that talks about codes (it has a code field or says
//     "Enter the code"), a number alone in its text is masked.
//
// The rectangles are the bounds of hidden notifications, password fields,
// code fields and every element where something was masked. s is not
// modified; a nil s gives nil.
func MaskScreen(s *sdk.Screen, opts Options) (*sdk.Screen, []sdk.Rect) {
	if s == nil {
		return nil, nil
	}
	out := *s
	out.Elements = make([]sdk.Element, len(s.Elements))
	copy(out.Elements, s.Elements)
	sc := scope{authenticator: opts.AuthenticatorApp || isAuthenticator(s.App.ID), all: opts.AllCodes}
	recall := opts.Recall
	recallDigits, recallTokens := recall.kinds()
	if !recallDigits && !recallTokens {
		recall = nil // nothing to look for; what is found is still learned
	}
	var boxes []sdk.Rect
	// Notifications first: a hidden one is done with, the others' texts
	// read as notifications.
	var inNotice, gone []bool
	if rows := noticeRows(s); len(rows) > 0 {
		inNotice, gone = make([]bool, len(s.Elements)), make([]bool, len(s.Elements))
		for _, row := range rows {
			if opts.Hide != nil && opts.Hide(row.n) {
				hideRow(&out, row, opts.Recall)
				for _, i := range row.members {
					gone[i] = true
				}
				if b := s.Elements[row.root].Bounds; !b.Empty() {
					boxes = append(boxes, b)
				}
				continue
			}
			for _, i := range row.members {
				// A title is a sender, often a short code ("22395"), unless
				// the notification has nothing else.
				inNotice[i] = i != row.title || row.n.Text == ""
			}
		}
	}

	// First the field kinds, and whether the screen is about codes.
	const (
		password = 1 << iota
		code
		digits
		remembered // the Recall may know a token in it
	)
	kinds := make([]uint8, len(s.Elements))
	codeField := false
	for i, el := range out.Elements {
		if gone != nil && gone[i] {
			continue
		}
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
		if recallTokens && kinds[i] == 0 && (el.Text != "" || el.ContentDescription != "" || el.Value != "" || el.Hint != "") {
			kinds[i] |= remembered
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

	notice := sc
	notice.notice = true
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
			for _, typed := range []string{text, value} {
				if typed != el.Hint {
					opts.Recall.Add(typed)
				}
			}
			el.Text = hide(text, el.Hint, maskWords)
			el.Value = hide(value, el.Hint, maskWords)
			if d := el.ContentDescription; d != "" && (d == text || d == value) {
				el.ContentDescription = maskWords(d)
			}
			masked = true
		}
		esc := sc
		if inNotice != nil && inNotice[i] {
			esc = notice
		}
		for _, f := range []*string{&el.Text, &el.ContentDescription, &el.Value, &el.Hint} {
			if *f == "" {
				continue
			}
			var spans []Span
			if k&digits != 0 {
				spans = findCodes(*f, esc)
				for _, sp := range spans {
					opts.Recall.Add((*f)[sp.Start:sp.End])
				}
			}
			if recall != nil {
				spans = append(spans, recall.Find(*f)...)
				sortSpans(spans)
			}
			if m := maskSpans(*f, spans); m != *f {
				*f = m
				masked = true
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
// a text "482913" a code. A number alone in the text's sentence is a code
// too: an SMS that is nothing but "482913". The title is a sender, which
// may be a short code ("22395"): alone, it is a code only in a notification
// without text.
func MaskNotification(n sdk.Notification) sdk.Notification {
	if !mayHoldCode(n.Title) && !mayHoldCode(n.Text) {
		return n
	}
	joined := n.Title + "\n" + n.Text
	cut := len(n.Title) + 1
	var title, text []Span
	if mayHoldCode(n.Text) {
		for _, sp := range findCodes(joined, noticeScope(n, false)) {
			if sp.Start >= cut {
				text = append(text, Span{sp.Start - cut, sp.End - cut})
			}
		}
	}
	if mayHoldCode(n.Title) {
		sc := noticeScope(n, false)
		sc.notice = n.Text == ""
		for _, sp := range findCodes(joined, sc) {
			if sp.End <= len(n.Title) {
				title = append(title, sp)
			}
		}
	}
	n.Title = maskSpans(n.Title, title)
	n.Text = maskSpans(n.Text, text)
	return n
}

func noticeScope(n sdk.Notification, all bool) scope {
	return scope{authenticator: isAuthenticator(n.AppID), notice: true, all: all}
}

// AddNotification remembers the codes of a notification, as MaskNotification
// finds them; with all (a blocked app's notification, which no agent
// sees), every number in it with the shape of a code.
func (r *Recall) AddNotification(n sdk.Notification, all bool) {
	if r == nil || !mayHoldCode(n.Title) && !mayHoldCode(n.Text) {
		return
	}
	joined := n.Title + "\n" + n.Text
	for _, sp := range findCodes(joined, noticeScope(n, all)) {
		r.Add(joined[sp.Start:sp.End])
	}
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
