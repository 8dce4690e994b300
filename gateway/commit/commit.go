package commit

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pinky-gateway/pinky/gateway/screen"
)

// Kind is what an action would commit. The zero Kind means nothing.
type Kind string

// Commit kinds.
const (
	Payment         Kind = "payment"          // paying for something: "Pay", "Confirm payment"
	Purchase        Kind = "purchase"         // buying or subscribing: "Buy now", "Place order", a price in a store
	SendMessage     Kind = "send_message"     // a message, mail or invitation leaves the phone
	Post            Kind = "post"             // publishing: "Post", "Tweet", a submitted comment
	Call            Kind = "call"             // a phone or video call starts
	InstallApp      Kind = "install_app"      // "Install", "Get" in a store
	UninstallApp    Kind = "uninstall_app"    // "Uninstall", "Delete App"
	Delete          Kind = "delete"           // data is removed: "Delete", "Move to trash", "Erase"
	ChangeSetting   Kind = "change_setting"   // a switch, a quick settings tile, "Turn on"
	OpenURL         Kind = "open_url"         // a link leaves the app: open_url, "Open in browser"
	GrantPermission Kind = "grant_permission" // "Allow", "While using the app"
	SignIn          Kind = "sign_in"          // "Sign in", "Continue with Google", a submitted password
	Transfer        Kind = "transfer"         // money moves to someone: "Send money", "Send $50"
)

// Kinds lists every commit kind, most consequential first. When a control
// or a dialog says several things, the first kind here wins.
var Kinds = []Kind{Transfer, Payment, Purchase, UninstallApp, Delete, InstallApp, GrantPermission,
	SendMessage, Post, Call, SignIn, ChangeSetting, OpenURL}

// rank orders kinds, internal ones after the real ones.
var rank = func() map[Kind]int {
	m := map[Kind]int{}
	for i, k := range Kinds {
		m[k] = i
	}
	for i, k := range []Kind{kindReview, kindConfirm, kindStore, kindSave, kindCancel, kindNot} {
		m[k] = len(Kinds) + i
	}
	return m
}()

// Action is the action to classify, in the terms of the agent's tools.
type Action struct {
	Kind   string       // tap, double_tap, long_press, swipe, pinch, scroll, type, key, launch, stop, open_url
	Target *screen.Node // the element acted on, nil when none; for type and key nil means the focused field
	// End is the element under the point where a swipe or scroll lifts the
	// finger, nil when none: a release on a control may work it.
	End *screen.Node
	// OnKeyboard says that the touch (a tap, a long press, the start of a
	// swipe) lands on the on-screen keyboard, on the key named KeyboardKey
	// ("" when the keyboard names no key there, as many do not): typing, or
	// the keyboard's action key, which submits the focused field.
	OnKeyboard  bool
	KeyboardKey string
	// EndOnKeyboard and EndKeyboardKey are the same for a swipe's end.
	EndOnKeyboard  bool
	EndKeyboardKey string
	Text           string // type: the text
	Submit         bool   // type: submit after typing (the enter or send key)
	Key            string // key: the key's name ("enter")
	URL            string // open_url
	App            string // launch, stop: the app
	// AppCategory is the category of the app in front, when the policy's
	// app table knows it (messaging, email, social, stores, payments…; the
	// real-app corpus's names are understood too): "Send" in a payments
	// app moves money, "Update" in a store installs.
	AppCategory string
}

// Result is what an action would commit. Kind is empty when nothing.
type Result struct {
	Kind     Kind
	Evidence string // why, for a person: `button "Place order" matched "place order" (en)`
	Lang     string // the language of the words that decided, when words did
}

// Detect classifies what a would commit on screen v. v may be nil (no
// screen context); a.Target, when set, should be a node of v so that its
// dialog and neighbours can be read.
//
// Every input an agent can cause is judged: a long press works a control
// as a tap does (a button without a long-press action clicks on release);
// a swipe or scroll is judged by the element it starts on and the one it
// ends on, the stronger of the two; a pinch as a touch on its centre and
// on what each finger goes down on (the caller judges each as Target);
// a touch on the on-screen keyboard types,
// or submits the focused field with the keyboard's action key; enter on a
// focused control clicks it.
func Detect(v *screen.View, a Action) Result {
	return detect(defaultModel(), askAt, v, a)
}

// detect is Detect with the model m (nil: the word tables alone) asking
// at ask (see decide).
func detect(m *model, ask float64, v *screen.View, a Action) Result {
	d := detector{v: v, model: m, ask: ask, category: a.AppCategory}
	id := ""
	if v != nil {
		id = v.App.ID
	}
	d.app = appOf(a.AppCategory, id)
	switch strings.ToLower(a.Kind) {
	case "open_url":
		return byURL(a.URL)
	case "tap", "double_tap", "click", "long_press":
		return d.touch(a.Target, a.OnKeyboard, a.KeyboardKey)
	case "pinch":
		// A pinch commits nothing of itself, but two fingers on a control
		// may work it as a tap does: it is judged as a touch on the element
		// under its centre (the caller judges each finger's element as the
		// Target too), or on the keyboard's key a finger lands on (End).
		r := d.touch(a.Target, a.OnKeyboard, a.KeyboardKey)
		if k := d.touch(nil, a.EndOnKeyboard, a.EndKeyboardKey); Stronger(k, r) {
			r = k
		}
		if r.Kind != "" {
			r.Evidence = "pinch on " + r.Evidence
		}
		return r
	case "swipe", "scroll":
		start := d.touch(a.Target, a.OnKeyboard, a.KeyboardKey)
		end := d.touch(a.End, a.EndOnKeyboard, a.EndKeyboardKey)
		if start.Kind != "" {
			start.Evidence = a.Kind + " starting on " + start.Evidence
		}
		if end.Kind != "" {
			end.Evidence = a.Kind + " ending on " + end.Evidence
		}
		if Stronger(end, start) {
			return end
		}
		return start
	case "type":
		if a.OnKeyboard {
			// The tap that should focus the field lands on a key.
			if r := d.keyboard(a.KeyboardKey); r.Kind != "" {
				return r
			}
		}
		if !a.Submit && !strings.ContainsAny(a.Text, "\n\r") {
			return Result{}
		}
		how := "typing with submit"
		if !a.Submit {
			how = "typing a new line"
		}
		return d.submit(d.field(a.Target), how)
	case "key":
		switch k := strings.ToLower(a.Key); k {
		case "enter", "return", "numpad_enter", "keycode_enter", "send", "\n", "dpad_center":
			if f := d.field(a.Target); f != nil {
				return d.submit(f, "key "+k)
			}
			if c := d.focusedControl(); c != nil {
				// Enter on a focused button clicks it.
				r := d.tap(c)
				if r.Kind != "" {
					r.Evidence = "key " + k + " on the focused " + r.Evidence
				}
				return r
			}
		case "call", "keycode_call":
			return Result{Kind: Call, Evidence: "key " + k}
		}
	}
	return Result{}
}

// Stronger reports whether a commits more than b: a commit over none, and
// between two the more consequential kind (Kinds' order).
func Stronger(a, b Result) bool {
	return a.Kind != "" && (b.Kind == "" || rank[a.Kind] < rank[b.Kind])
}

// touch classifies a touch on n, or on the keyboard's key.
func (d *detector) touch(n *screen.Node, onKeyboard bool, key string) Result {
	n = d.node(n)
	if onKeyboard || (n != nil && n.Role == screen.RoleKeyboard) {
		return d.keyboard(key)
	}
	return d.tap(n)
}

// keyboard classifies a touch on the on-screen keyboard's key: a key that
// types or edits commits nothing; any other key, or a key the keyboard does
// not name, is taken for its action key (enter, send, go, search, done),
// which submits the focused field.
func (d *detector) keyboard(key string) Result {
	if typingKey(key) {
		return Result{}
	}
	how := "the keyboard's key " + strconv.Quote(key)
	if key == "" {
		how = "a key of the keyboard that it does not name (taken for its action key)"
	}
	return d.submit(d.field(nil), how)
}

// typingKey reports whether a keyboard key types a character or only edits
// (space, delete, shift, the symbol and emoji switches): not the action key.
func typingKey(key string) bool {
	k := strings.TrimSpace(key)
	if k == "" {
		return false
	}
	if n := utf8.RuneCountInString(k); n <= 2 {
		letters := 0
		for _, r := range k {
			if unicode.IsLetter(r) {
				letters++
			}
			if r == '\n' || r == '\r' || r == '↵' || r == '⏎' || r == '⮐' || r == '↩' || r == '⌤' || r == '⎆' || r == '✓' || r == '✔' || r == '➤' || r == '➔' || r == '→' || r == '▶' || r == '➢' {
				return false // an enter or send arrow
			}
		}
		// A letter, digit, sign or emoji types ("⌫" and "⇧" edit); two
		// letters are a word: "Go", "OK", "发送".
		if n == 1 || letters < 2 {
			return true
		}
	}
	_, ok := editingKeys[normalize(k)]
	return ok
}

// editingKeys are the names of keyboard keys that edit or switch layouts,
// normalized, in the eleven languages.
var editingKeys = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Split("space|space bar|spacebar|delete|backspace|shift|caps lock|capslock|more|symbols|emoji|emojis|globe|next keyboard|switch keyboard|switch input method|dictate|dictation|voice input|microphone|settings|abc|123|?123|=\\<|#+=|clipboard|more keys|keyboard|hide keyboard|tab|"+
		"espacio|borrar|eliminar|mayusculas|simbolos|"+ // es
		"espace|supprimer|effacer|majuscule|majuscules|symboles|"+ // fr
		"leerzeichen|loschen|umschalt|umschalttaste|symbole|"+ // de
		"espaco|apagar|maiusculas|simbolos|"+ // pt
		"пробел|удалить|стереть|шифт|символы|"+ // ru
		"مسافة|حذف|مسح|رموز|"+ // ar
		"空格|删除|刪除|退格|符号|符號|切换|切換|"+ // zh
		"スペース|空白|削除|シフト|記号|"+ // ja
		"스페이스|띄어쓰기|삭제|시프트|기호", "|") {
		if n := normalize(w); n != "" {
			m[n] = true
		}
	}
	return m
}()

// focusedControl is the control with focus (a key's enter clicks it).
func (d *detector) focusedControl() *screen.Node {
	if d.v == nil {
		return nil
	}
	for i := range d.v.Nodes {
		if n := &d.v.Nodes[i]; n.Focused && !n.Editable && (n.Clickable || n.Checkable) {
			return n
		}
	}
	return nil
}

// detector holds one call's screen.
type detector struct {
	v        *screen.View
	app      appClass
	category string // the app's category, for evidence
	model    *model
	ask      float64 // askAt
	buf      [16]match
	mbuf     [16]match   // the model text's table matches
	feats    [384]uint32 // the model's features
	probs    [maxClasses]float64
}

// node returns the node of v that n stands for (same ref), or n itself when
// v does not have it.
func (d *detector) node(n *screen.Node) *screen.Node {
	if n == nil || d.v == nil {
		return n
	}
	if i := d.index(n.Ref); i >= 0 {
		return &d.v.Nodes[i]
	}
	return n
}

func (d *detector) index(ref int) int {
	if d.v == nil || ref == 0 {
		return -1
	}
	for i := range d.v.Nodes {
		if d.v.Nodes[i].Ref == ref {
			return i
		}
	}
	return -1
}

// field is the field text goes into: the target, or the focused field.
func (d *detector) field(n *screen.Node) *screen.Node {
	if n != nil {
		return d.node(n)
	}
	if d.v == nil {
		return nil
	}
	for i := range d.v.Nodes {
		f := &d.v.Nodes[i]
		if f.Focused && (f.Editable || f.Role == screen.RoleField || f.Role == screen.RolePassword) {
			return f
		}
	}
	return nil
}

// byURL classifies an open_url action by the URL's scheme.
func byURL(u string) Result {
	u = strings.TrimSpace(u)
	if u == "" {
		return Result{}
	}
	scheme, _, ok := strings.Cut(u, ":")
	scheme = strings.ToLower(scheme)
	if !ok || strings.ContainsAny(scheme, "/?#") {
		scheme = ""
	}
	ev := "open_url " + strconv.Quote(short(u)) + " (scheme " + scheme + ")"
	switch scheme {
	case "tel", "telprompt", "callto", "facetime", "facetime-audio":
		return Result{Kind: Call, Evidence: ev}
	case "sms", "smsto", "mms", "mmsto", "mailto", "imessage":
		return Result{Kind: SendMessage, Evidence: ev}
	}
	return Result{Kind: OpenURL, Evidence: ev}
}

// submit classifies sending what is in field n: a chat or compose field
// sends, a comment field posts, a password field signs in, a search field
// does nothing.
func (d *detector) submit(n *screen.Node, how string) Result {
	if n == nil {
		return Result{}
	}
	desc := describe(n)
	if n.Password || n.Role == screen.RolePassword {
		return Result{Kind: SignIn, Evidence: desc + " submitted (" + how + ")"}
	}
	if n.Role != screen.RoleField && !n.Editable {
		return Result{}
	}
	for _, s := range []string{n.Hint, n.Element.ContentDescription, n.Element.Hint, idWords(n.Element.ResourceID), n.ShortID} {
		if s == "" {
			continue
		}
		ms := longest(fields.scan(normalize(s), d.buf[:0]))
		m, ok := pick(ms)
		if !ok {
			continue
		}
		if m.e.kind == kindNot {
			return Result{}
		}
		return Result{Kind: m.e.kind, Lang: m.e.lang,
			Evidence: desc + " submitted (" + how + ") matched " + strconv.Quote(m.e.phrase) + " (" + m.e.lang + ")"}
	}
	switch d.app {
	case appMessaging:
		return Result{Kind: SendMessage, Evidence: desc + " submitted (" + how + ")" + d.in("messaging app")}
	case appSocial:
		return Result{Kind: Post, Evidence: desc + " submitted (" + how + ")" + d.in("social app")}
	}
	return Result{}
}

// pick chooses the deciding match among non-overlapping ones: none when a
// "no" comes first ("Cancel payment"), else the highest ranked kind.
func pick(ms []match) (match, bool) {
	if len(ms) == 0 {
		return match{}, false
	}
	if ms[0].e.kind == kindCancel {
		return ms[0], true
	}
	best := ms[0]
	for _, m := range ms[1:] {
		if rank[m.e.kind] < rank[best.e.kind] {
			best = m
		}
	}
	return best, true
}

// tap classifies touching n. The structure of the screen decides first (a
// field, a title, a phone number link, a price in a store, a generic "OK"
// by its dialog, a home screen's icon); then the word tables what they are
// sure of (a label that is wholly a no or a look-alike); then the model,
// asking when it is unsure about a kind that costs the most to miss (see
// decide), with the tables' leading verbs of those kinds asking even when
// the model sees nothing; and last a button of a dialog about such a kind
// does it unless it says no.
func (d *detector) tap(n *screen.Node) Result {
	if n == nil {
		return Result{}
	}
	switch n.Role {
	case screen.RoleField, screen.RolePassword, screen.RoleKeyboard, screen.RoleList, screen.RoleTab,
		screen.RoleTabs, screen.RoleProgress, screen.RoleSlider, screen.RolePicker, screen.RoleWeb,
		screen.RoleDialog, screen.RoleMenu:
		return Result{} // focusing, scrolling, navigating or picking commits nothing
	case screen.RoleSwitch, screen.RoleCheckbox, screen.RoleRadio:
		return d.toggle(n)
	case screen.RoleText, screen.RoleImage, screen.RoleGroup, "":
		if !n.Clickable {
			return Result{} // text that cannot be touched: a title, a noun
		}
	}
	if n.Checkable {
		return d.toggle(n)
	}
	if n.Role == screen.RoleLink && isPhoneNumber(n.Label) {
		return Result{Kind: Call, Evidence: describe(n) + " is a phone number link"}
	}

	label := n.Label
	item := n.Role == screen.RoleItem
	if i := strings.Index(label, " · "); i >= 0 {
		label = label[:i] // a merged row: its first line names it, the rest is content
	}
	nav := navMarked(label) || (item && d.app == appSettings)

	if d.app == appStore && isPrice(label) {
		return Result{Kind: Purchase, Evidence: describe(n) + " is a price" + d.in("app store")}
	}

	// The words the control shows are its label, else its description;
	// the model reads those. The tables also read its text and its
	// resource id.
	var m match
	var ok, inShown, whole bool
	shown := ""
	for i, s := range []string{label, n.Element.ContentDescription, n.Element.Text, idWords(n.Element.ResourceID)} {
		if s == "" {
			continue
		}
		ns := normalize(s)
		if ns == "" {
			continue
		}
		if shown == "" && i < 2 {
			shown = s
		}
		ms := longest(controls.scan(ns, d.buf[:0]))
		if long(ns) {
			ms = leading(ms) // a long text commits only when it starts with the verb
		}
		if m, ok = pick(ms); ok {
			inShown = s == shown
			whole = len(ms) == 1 && m.start == 0 && m.end == len(ns)
			break
		}
	}
	if ok && (m.e.kind == kindConfirm || m.e.kind == kindReview) {
		c, found := d.context(n, m.e.kind == kindReview)
		switch {
		case found && !nav:
			c.Evidence = describe(n) + " " + c.Evidence
			return c
		case d.model == nil || shown == "" || d.inDialog(n):
			return Result{} // a yes to a dialog that commits nothing
		}
		// A yes outside a dialog: the model may know it ("Accept" a call).
	}
	var res Result
	switch {
	case ok && whole && (m.e.kind == kindNot || m.e.kind == kindCancel):
		// Sure: the label is wholly a no ("Cancel") or a look-alike
		// ("Payment methods").
	case d.app == appLauncher && (!ok || m.e.kind == kindNot || m.e.kind == kindCancel):
		// A home screen's icons, folders and widgets open apps; its own
		// controls that commit ("Uninstall", "Remove") are in the tables.
	case d.model == nil || shown == "":
		if ok {
			res = d.byTable(n, m)
		}
	default:
		// The model decides; the tables' verbs that cost the most to
		// miss still ask when the model sees nothing ("Delete …"), and so
		// do their words in what the model does not read (a description,
		// a resource id).
		switch t := d.tableResult(n, m, ok); {
		case ok && inShown && long(normalize(shown)) && m.start > 0:
			// A long text commits only when it starts with the verb.
		case long(normalize(shown)) && !ok:
			// Nor does one the tables know nothing of: content, not a control.
		case d.listRow(n):
			// A row of a list shows what people wrote or keep (a note, a
			// contact, a conversation, an account) far more often than an
			// app's own words, and the model learned only apps' words: on
			// such a row it guesses. The tables' verbs that cost the most to
			// miss still judge it when they begin it ("Delete all"), and so
			// do their words in what it does not show.
			if ok && (!inShown || askFirst(m.e.kind) && m.start == 0) {
				res = t
			}
		default:
			res = d.byModel(n, shown)
			if res.Kind == "" && ok && (!inShown || askFirst(m.e.kind) && m.start == 0) {
				res = t
			} else if res.Kind != "" && res.Kind == t.Kind {
				res = t // the tables agree, and say it in words
			}
		}
	}
	if res.Kind == SendMessage {
		switch {
		case hasAmount(n.Label) || d.app == appMoney:
			res.Kind = Transfer
			if d.app == appMoney {
				res.Evidence += d.in("payments app")
			} else {
				res.Evidence += " with an amount"
			}
		default:
			if c, ok := d.context(n, false); ok && (c.Kind == Transfer || c.Kind == Payment) {
				res.Kind, res.Evidence = Transfer, res.Evidence+" "+c.Evidence
			}
		}
	}
	if res.Kind == "" && roleOf(n) == roleButton && !(ok && (m.e.kind == kindCancel || m.e.kind == kindNot)) {
		// A button of a dialog that asks about money, a delete, a message,
		// a post or a call does that, unless it says no.
		if c, ok := d.context(n, false); ok && askFirst(c.Kind) {
			c.Evidence = describe(n) + " " + c.Evidence + ", and the button does not say no"
			return c
		}
	}
	if nav && !strong(res.Kind) {
		return Result{}
	}
	return res
}

// tableResult is byTable when the tables matched (ok), else nothing.
func (d *detector) tableResult(n *screen.Node, m match, ok bool) Result {
	if !ok {
		return Result{}
	}
	return d.byTable(n, m)
}

// byTable is what the tables' match m on n's words commits.
func (d *detector) byTable(n *screen.Node, m match) Result {
	ev := describe(n) + " matched " + strconv.Quote(m.e.phrase) + " (" + m.e.lang + ")"
	res := Result{Kind: m.e.kind, Lang: m.e.lang, Evidence: ev}
	switch m.e.kind {
	case kindNot, kindCancel:
		return Result{}
	case kindStore:
		if d.app != appStore {
			return Result{}
		}
		res.Kind, res.Evidence = InstallApp, ev+d.in("app store")
	case kindSave:
		if d.app != appSettings {
			return Result{}
		}
		res.Kind, res.Evidence = ChangeSetting, ev+d.in("settings app")
	}
	return res
}

// askAt is the probability of a kind that costs the most to miss
// (askFirst) from which the model asks even when it thinks the control
// more likely commits nothing. It was chosen by cross-validation over the
// corpus's training apps (COMMIT_CV_SWEEP=1 TestCrossValidation prints
// what other values give): below it precision falls faster than recall
// rises.
const askAt = 0.15

// askFirst reports whether missing a commit of kind k is worse than an
// extra question: money, deletes, messages, posts and calls.
func askFirst(k Kind) bool {
	switch k {
	case Payment, Transfer, Purchase, Delete, SendMessage, Post, Call:
		return true
	}
	return false
}

// byModel is what the model says touching n commits, its label (or
// description) being shown. The screen's context, which the corpus the
// model learned from does not have, weighs in as fixed bonuses to the
// model's scores (see contextBonus).
func (d *detector) byModel(n *screen.Node, shown string) Result {
	in := modelInput{text: normalize(shown), raw: shown, role: roleOf(n), app: d.app}
	in.tables = longest(controls.scan(in.text, d.mbuf[:0]))
	f := features(&in, d.feats[:0])
	p := d.probs[:len(d.model.kinds)]
	d.model.logits(&f, p)
	why := d.contextBonus(n, p)
	softmax(p)
	r := decide(d.model.kinds, p, d.ask, describe(n))
	if r.Kind != "" && why != "" {
		r.Evidence += why
	}
	return r
}

// contextBonus is what a commit's score gains from each sign of it on the
// screen: a message typed into a field (sending it), a recipient or payee
// filled in, an amount shown outside a list. Each multiplies the odds of
// the kinds it points to by four. The corpus has no screens, so this is
// not learned; TestContextTipsTheModel checks its direction.
const contextOdds = 1.3862943611198906 // ln 4

// contextBonus adds to z, the model's scores, the bonuses the screen
// around n earns, and says which.
func (d *detector) contextBonus(n *screen.Node, z []float64) string {
	if d.v == nil {
		return ""
	}
	message, recipient, amount := false, false, false
	listDepth := -1
	for i := range d.v.Nodes {
		f := &d.v.Nodes[i]
		inList := listDepth >= 0 && f.Depth > listDepth
		if !inList {
			listDepth = -1
		}
		if f.Role == screen.RoleList && !inList {
			listDepth = f.Depth
		}
		switch {
		case f == n || f.StatusBar || f.Password:
		case (f.Editable || f.Role == screen.RoleField) && f.Label != "":
			if isRecipientField(f) {
				recipient = true
			} else if !d.searchField(f) {
				message = true
			}
		case !inList && hasAmount(f.Label):
			amount = true
		}
	}
	var why []string
	add := func(ks ...Kind) {
		for j, k := range d.model.kinds {
			if slices.Contains(ks, k) {
				z[j] += contextOdds
			}
		}
	}
	if message {
		add(SendMessage, Post)
		why = append(why, "a message typed")
	}
	if recipient {
		add(SendMessage, Transfer, Payment)
		why = append(why, "a recipient filled in")
	}
	if amount {
		add(Payment, Transfer, Purchase)
		why = append(why, "an amount")
	}
	if len(why) == 0 {
		return ""
	}
	return ", with " + strings.Join(why, " and ") + " on the screen"
}

// searchField reports whether f is a search box (or another field whose
// text is not sent), by its hint, description or id.
func (d *detector) searchField(f *screen.Node) bool {
	for _, s := range []string{f.Hint, f.Element.ContentDescription, idWords(f.Element.ResourceID), f.ShortID} {
		if s == "" {
			continue
		}
		var buf [8]match
		if m, ok := pick(longest(fields.scan(normalize(s), buf[:0]))); ok {
			return m.e.kind == kindNot
		}
	}
	return false
}

// noneBelow is the probability of "nothing" below which the model's
// likeliest kind asks even though "nothing" is likelier than any one kind
// (see decide); chosen by cross-validation with askAt.
const noneBelow = 0.45

// decide turns the model's probabilities into a result: the likeliest
// class; or, when that is "nothing", the likeliest kind that costs the
// most to miss if its probability reaches askAt; or, when "nothing" is
// the likeliest but below noneBelow (the commits together outweigh it)
// and a kind reaches askAt, the likeliest kind.
func decide(kinds []Kind, p []float64, askAt float64, desc string) Result {
	best, ask, commit := 0, -1, -1
	for j := range p {
		if p[j] > p[best] {
			best = j
		}
		if askFirst(kinds[j]) && p[j] >= askAt && (ask < 0 || p[j] > p[ask]) {
			ask = j
		}
		if kinds[j] != "" && (commit < 0 || p[j] > p[commit]) {
			commit = j
		}
	}
	if kinds[best] == "" && p[best] < noneBelow && commit >= 0 && p[commit] >= askAt && (ask < 0 || !askFirst(kinds[commit]) && p[commit] > p[ask]) {
		ask = commit // the commits together outweigh nothing
	}
	switch {
	case kinds[best] != "":
		return Result{Kind: kinds[best],
			Evidence: fmt.Sprintf("%s: the model says %s (%.0f%%)", desc, kinds[best], 100*p[best])}
	case ask >= 0:
		return Result{Kind: kinds[ask],
			Evidence: fmt.Sprintf("%s: the model is unsure (%s %.0f%%, nothing %.0f%%) and asks", desc, kinds[ask], 100*p[ask], 100*p[best])}
	}
	return Result{}
}

// roleOf is how the model sees n's role.
func roleOf(n *screen.Node) role {
	switch {
	case n.Checkable || n.Role == screen.RoleSwitch || n.Role == screen.RoleCheckbox || n.Role == screen.RoleRadio:
		return roleToggle
	case n.Role == screen.RoleItem:
		return roleMenuItem
	case n.Role == screen.RoleLink:
		return roleLink
	case n.Role == screen.RoleField:
		return roleFieldHint
	}
	return roleButton // a button, or any clickable element that acts
}

// in says, for evidence, in what app the control is: " in payments app
// com.venmo", or " in a payments app (category payments)" when the app's
// id is not known.
func (d *detector) in(what string) string {
	if d.v != nil && d.v.App.ID != "" {
		return " in " + what + " " + d.v.App.ID
	}
	a := "a"
	if strings.HasPrefix(what, "a") {
		a = "an"
	}
	return " in " + a + " " + what + " (category " + d.category + ")"
}

// strong kinds commit even from a control that looks like it navigates
// ("Delete account ›", a settings row "Uninstall").
func strong(k Kind) bool {
	switch k {
	case Payment, Purchase, Transfer, Delete, UninstallApp, InstallApp, SendMessage, Call:
		return true
	}
	return false
}

// toggle classifies flipping a switch, checkbox or radio button: what
// the model says of its label, else what the tables and its kind say.
func (d *detector) toggle(n *screen.Node) Result {
	if d.model != nil && normalize(n.Label) != "" {
		r := d.byModel(n, n.Label)
		if d.app == appSettings && r.Kind == ChangeSetting {
			// In the system's settings, a switch that allows grants
			// access ("Allow access to manage all files").
			if m, ok := pick(longest(controls.scan(normalize(n.Label), d.buf[:0]))); ok && m.e.kind == GrantPermission {
				return Result{Kind: GrantPermission, Lang: m.e.lang,
					Evidence: describe(n) + " matched " + strconv.Quote(m.e.phrase) + " (" + m.e.lang + ")" + d.in("settings app")}
			}
		}
		return r
	}
	desc := describe(n)
	if ns := normalize(n.Label); ns != "" {
		ms := longest(controls.scan(ns, d.buf[:0]))
		for _, m := range ms {
			switch {
			case m.e.kind == GrantPermission:
				return Result{Kind: GrantPermission, Lang: m.e.lang, Evidence: desc + " matched " + strconv.Quote(m.e.phrase) + " (" + m.e.lang + ")"}
			case m.e.kind == kindNot && d.app != appSettings:
				return Result{} // a form's option: "Remember me", "Show password"
			}
		}
	}
	switch {
	case n.Role == screen.RoleSwitch:
		return Result{Kind: ChangeSetting, Evidence: desc + " is a switch"}
	case d.app == appSettings:
		return Result{Kind: ChangeSetting, Evidence: desc + d.in("settings app")}
	}
	return Result{} // a form's checkbox or option: "Remember me", "I agree"
}

// listRow reports whether n is a row of a list on the screen itself: an
// item with a list around it and no dialog or menu (whose lists hold an
// app's own entries).
func (d *detector) listRow(n *screen.Node) bool {
	if d.v == nil || n.Role != screen.RoleItem {
		return false
	}
	i := d.index(n.Ref)
	if i < 0 {
		return false
	}
	list := false
	for p := d.v.Nodes[i].Parent; p != 0; {
		j := d.index(p)
		if j < 0 {
			break
		}
		switch d.v.Nodes[j].Role {
		case screen.RoleDialog, screen.RoleMenu:
			return false
		case screen.RoleList:
			list = true
		}
		p = d.v.Nodes[j].Parent
	}
	return list
}

// inDialog reports whether n is inside a dialog of the screen.
func (d *detector) inDialog(n *screen.Node) bool {
	if d.v == nil {
		return false
	}
	i := d.index(n.Ref)
	return i >= 0 && d.dialogOf(i) >= 0
}

// dialogOf is the index of the nearest dialog around node i, -1 when none:
// it walks up the parents (they come earlier).
func (d *detector) dialogOf(i int) int {
	for p := d.v.Nodes[i].Parent; p != 0; {
		j := d.index(p)
		if j < 0 {
			break
		}
		if d.v.Nodes[j].Role == screen.RoleDialog {
			return j
		}
		p = d.v.Nodes[j].Parent
	}
	return -1
}

// context is the kind that the dialog around n (or, when wide, the screen's
// text) says a generic "OK" or "Confirm" commits.
func (d *detector) context(n *screen.Node, wide bool) (Result, bool) {
	if d.v == nil {
		return Result{}, false
	}
	i := d.index(n.Ref)
	if i < 0 {
		return Result{}, false
	}
	dlg := d.dialogOf(i)
	var texts []*screen.Node
	where := "on screen"
	switch {
	case dlg >= 0:
		where = "in dialog"
		if l := d.v.Nodes[dlg].Label; l != "" {
			texts = append(texts, &d.v.Nodes[dlg])
		}
		for j := dlg + 1; j < len(d.v.Nodes) && d.v.Nodes[j].Depth > d.v.Nodes[dlg].Depth; j++ {
			if t := &d.v.Nodes[j]; isText(t) {
				texts = append(texts, t)
			}
		}
	case wide:
		listDepth := -1
		for j := range d.v.Nodes {
			t := &d.v.Nodes[j]
			if listDepth >= 0 && t.Depth > listDepth {
				continue // a list's rows are content, not the screen's subject
			}
			listDepth = -1
			if t.Role == screen.RoleList {
				listDepth = t.Depth
				continue
			}
			if isText(t) && len(texts) < 24 {
				texts = append(texts, t)
			}
		}
	default:
		return Result{}, false
	}
	var best match
	var from *screen.Node
	amount := false
	for _, t := range texts {
		amount = amount || hasAmount(t.Label)
		for _, m := range longest(controls.scan(normalize(t.Label), d.buf[:0])) {
			if rank[m.e.kind] >= len(Kinds) {
				continue
			}
			if from == nil || rank[m.e.kind] < rank[best.e.kind] {
				best, from = m, t
			}
		}
	}
	if from == nil {
		if amount && wide {
			return Result{Kind: Payment, Evidence: where + " with an amount"}, true
		}
		return Result{}, false
	}
	k := best.e.kind
	if k == SendMessage && amount {
		k = Transfer
	}
	return Result{Kind: k, Lang: best.e.lang,
		Evidence: where + " " + strconv.Quote(short(from.Label)) + " matched " + strconv.Quote(best.e.phrase) + " (" + best.e.lang + ")"}, true
}

// isText reports whether t is text that says something, not a control.
func isText(t *screen.Node) bool {
	return t.Label != "" && !t.Clickable && !t.Editable && !t.Checkable &&
		(t.Role == screen.RoleText || t.Role == screen.RoleGroup || t.Role == screen.RoleDialog)
}

// describe is how evidence names a node: role "label".
func describe(n *screen.Node) string {
	s := string(n.Role)
	if s == "" {
		s = "element"
	}
	switch {
	case n.Label != "" && !n.Password && n.Role != screen.RoleField:
		s += " " + strconv.Quote(short(n.Label))
	case n.Hint != "":
		s += " hint=" + strconv.Quote(short(n.Hint))
	case n.ShortID != "":
		s += " id=" + n.ShortID
	}
	return s
}

func short(s string) string {
	const max = 60
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max-1]) + "…"
}

// long reports whether a normalized label is more than a control's name:
// over six words, or over sixteen characters of CJK text.
func long(ns string) bool {
	if strings.Count(ns, " ") >= 6 {
		return true
	}
	if hasCJK(ns) {
		return utf8.RuneCountInString(ns) > 16
	}
	return false
}

// leading keeps the matches at the start of the text.
func leading(ms []match) []match {
	if len(ms) > 0 && ms[0].start == 0 {
		return ms[:1]
	}
	return nil
}

// navMarked reports whether a label ends the way menu entries that open
// another screen do: "…", "...", "›", ">", "»".
func navMarked(label string) bool {
	l := strings.TrimSpace(label)
	for _, suf := range []string{"…", "...", "›", ">", "»", "＞", "→", "〉"} {
		if strings.HasSuffix(l, suf) {
			return true
		}
	}
	return false
}

// hasAmount reports whether s holds a sum of money: a currency sign or
// code next to digits ("$50", "50,00 €", "R$ 20", "¥1,200", "50 руб").
func hasAmount(s string) bool {
	digit, sign := false, false
	for _, r := range s {
		switch {
		case unicode.IsDigit(r):
			digit = true
		case unicode.Is(unicode.Sc, r) || r == '元' || r == '円' || r == '원' || r == '￥':
			sign = true
		}
	}
	if !digit {
		return false
	}
	if sign {
		return true
	}
	l := strings.ToLower(s)
	for _, c := range []string{"usd", "eur", "gbp", "brl", "mxn", "rub", "руб", "ريال", "درهم", "جنيه", "ر.س", "د.إ", "ج.م", "nt$", "dollars", "euros", "reais", "pesos"} {
		if strings.Contains(l, c) {
			return true
		}
	}
	return false
}

// isPrice reports whether a label is only a price ("$0.99", "¥120", "US$4.99").
func isPrice(label string) bool {
	if !hasAmount(label) || len(label) > 16 {
		return false
	}
	for _, r := range label {
		if unicode.IsLetter(r) && !(r >= 'A' && r <= 'Z') && r != '元' && r != '円' && r != '원' {
			return false
		}
	}
	return true
}

// isPhoneNumber reports whether s looks like a phone number: digits with
// the usual separators, at least six digits.
func isPhoneNumber(s string) bool {
	digits := 0
	for _, r := range strings.TrimPrefix(strings.TrimSpace(s), "tel:") {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case strings.ContainsRune(" +-().", r):
		default:
			return false
		}
	}
	return digits >= 6
}
