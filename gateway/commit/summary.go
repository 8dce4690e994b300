package commit

import (
	"slices"
	"strconv"
	"strings"

	"github.com/pinky-gateway/pinky/gateway/screen"
)

// Summary is what the person approves, read from the screen: the sentence
// on the card, who or what the commit goes to, and the content that binds
// the approval.
type Summary struct {
	// Sentence says in one line what the action commits: the message and
	// its recipient, the amount and the payee, what is deleted, which
	// setting changes to what.
	Sentence string
	// Counterpart is who or what the commit goes to (the recipient, the
	// payee, the item), "" when the screen names nobody. "Allow for this
	// task" covers later commits of the same kind to the same counterpart.
	Counterpart string
	// Content is the screen's committing content, sorted: the fields'
	// texts, the dialog's, the screen's headings and every amount. An
	// approval holds only while the screen still shows exactly this.
	Content []string
}

// Summarize reads from v what a commits (r is what Detect said of a).
func Summarize(v *screen.View, a Action, r Result) Summary {
	s := Summary{Content: Content(v)}
	if r.Kind == "" {
		return s
	}
	target := a.Target
	if v != nil && target != nil {
		if i := (&detector{v: v}).index(target.Ref); i >= 0 {
			target = &v.Nodes[i]
		}
	}
	c := reader{v: v}
	s.Counterpart = c.counterpart(target, r.Kind)
	s.Sentence = c.sentence(a, target, r.Kind, s.Counterpart)
	if v != nil {
		if app := appLabel(v); app != "" {
			s.Sentence += " (in " + app + ")"
		}
	}
	return s
}

// Content is the committing content of v: what the person saw when they
// decided. Text inside lists is left out (a chat's messages, a feed) but
// for amounts, and so is the status bar: they change on their own.
func Content(v *screen.View) []string {
	if v == nil {
		return nil
	}
	var out []string
	listDepth := -1
	for i := range v.Nodes {
		n := &v.Nodes[i]
		inList := listDepth >= 0 && n.Depth > listDepth
		if !inList {
			listDepth = -1
		}
		if n.Role == screen.RoleList && !inList {
			listDepth = n.Depth
		}
		if n.StatusBar {
			continue
		}
		switch {
		case n.Password || n.Role == screen.RolePassword:
			out = append(out, "password "+fieldName(n)+" filled="+strconv.FormatBool(n.Filled))
		case n.Editable || n.Role == screen.RoleField:
			out = append(out, "field "+fieldName(n)+"="+n.Label)
		case n.Checkable:
			out = append(out, string(n.Role)+" "+n.Label+" checked="+strconv.FormatBool(n.Checked))
		case hasAmount(n.Label):
			out = append(out, "amount "+n.Label)
		case !inList && isText(n):
			out = append(out, "text "+n.Label)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// fieldName names a field by its hint or id, never its content.
func fieldName(n *screen.Node) string {
	switch {
	case n.Hint != "":
		return strconv.Quote(n.Hint)
	case n.ShortID != "":
		return n.ShortID
	}
	if _, id, ok := strings.Cut(n.Element.ResourceID, ":id/"); ok {
		return id
	}
	return n.Element.ResourceID
}

// reader reads the parts of a summary from a view.
type reader struct{ v *screen.View }

// recipientWords name a field that holds who a message or money goes to.
var recipientWords = func() []string {
	var out []string
	for _, w := range strings.Split("to|recipient|recipients|payee|beneficiary|iban|account number|send to|contact|phone number|email address|"+
		"para|destinatario|destinatarios|beneficiario|"+
		"a|destinataire|destinataires|beneficiaire|"+
		"an|empfanger|empfaenger|"+
		"кому|получатель|"+
		"收件人|收款人|收件者|收款者|"+
		"宛先|受取人|"+
		"받는 사람|수신자|받는사람|"+
		"إلى|المستلم|المستفيد", "|") {
		out = append(out, normalize(w))
	}
	return out
}()

// isRecipientField reports whether n is a field for a recipient or payee.
func isRecipientField(n *screen.Node) bool {
	if !(n.Editable || n.Role == screen.RoleField) || n.Password {
		return false
	}
	for _, s := range []string{n.Hint, n.Element.ContentDescription, idWords(n.Element.ResourceID), n.ShortID} {
		ns := normalize(s)
		if ns == "" {
			continue
		}
		for _, w := range recipientWords {
			if ns == w || (len(w) > 2 && (strings.HasPrefix(ns, w+" ") || strings.HasSuffix(ns, " "+w))) {
				return true
			}
		}
	}
	return false
}

// counterpart is who or what a commit of kind on target goes to.
func (c reader) counterpart(target *screen.Node, kind Kind) string {
	if c.v == nil {
		return ""
	}
	var to []string
	for i := range c.v.Nodes {
		if n := &c.v.Nodes[i]; isRecipientField(n) && n.Label != "" {
			to = append(to, n.Label)
		}
	}
	if len(to) > 0 {
		return strings.Join(to, ", ")
	}
	if d := c.dialogText(target); d != "" {
		return d
	}
	switch kind {
	case Payment, Purchase, Transfer:
		if am := c.amounts(3); len(am) > 0 {
			return strings.Join(am, "; ")
		}
	case ChangeSetting:
		if target != nil {
			return target.Label
		}
	}
	return c.heading()
}

// dialogText is the text of the dialog around target, "" when none.
func (c reader) dialogText(target *screen.Node) string {
	if target == nil {
		return ""
	}
	d := &detector{v: c.v}
	i := d.index(target.Ref)
	if i < 0 {
		return ""
	}
	dlg := d.dialogOf(i)
	if dlg < 0 {
		return ""
	}
	var texts []string
	for j := dlg + 1; j < len(c.v.Nodes) && c.v.Nodes[j].Depth > c.v.Nodes[dlg].Depth; j++ {
		if t := &c.v.Nodes[j]; isText(t) {
			texts = append(texts, t.Label)
		}
	}
	return strings.Join(texts, " — ")
}

// amounts returns up to max texts of the screen that hold an amount.
func (c reader) amounts(max int) []string {
	var out []string
	for i := range c.v.Nodes {
		if n := &c.v.Nodes[i]; !n.StatusBar && hasAmount(n.Label) && !slices.Contains(out, n.Label) {
			out = append(out, n.Label)
			if len(out) == max {
				break
			}
		}
	}
	return out
}

// heading is the screen's subject: its first text outside lists that is
// not the app's name (a conversation's contact, a mail's subject).
func (c reader) heading() string {
	app := appLabel(c.v)
	listDepth := -1
	for i := range c.v.Nodes {
		n := &c.v.Nodes[i]
		if listDepth >= 0 && n.Depth > listDepth {
			continue
		}
		listDepth = -1
		if n.Role == screen.RoleList {
			listDepth = n.Depth
			continue
		}
		if n.StatusBar || !isText(n) || strings.EqualFold(n.Label, app) {
			continue
		}
		return n.Label
	}
	return ""
}

// message is the text a send or a post carries: what is typed with it, or
// the text of the field it submits, or of the filled field nearest to the
// control that sends it.
func (c reader) message(a Action, target *screen.Node) string {
	if a.Kind == "type" {
		if f := (&detector{v: c.v}).field(target); f != nil && f.Label != "" {
			return f.Label + a.Text
		}
		return a.Text
	}
	if c.v == nil {
		return ""
	}
	if target != nil && (target.Editable || target.Role == screen.RoleField) && !target.Password {
		return target.Label
	}
	if f, ok := c.v.Focused(); ok && !f.Password && f.Label != "" && (target == nil || a.Kind == "key" || a.OnKeyboard) {
		return f.Label
	}
	var best *screen.Node
	bestDist := 0
	for i := range c.v.Nodes {
		n := &c.v.Nodes[i]
		if !(n.Editable || n.Role == screen.RoleField) || n.Password || n.Label == "" || isRecipientField(n) {
			continue
		}
		dist := 0
		if target != nil {
			a, b := n.Bounds.Center(), target.Bounds.Center()
			dist = abs(a.X-b.X) + abs(a.Y-b.Y)
		}
		if best == nil || dist < bestDist {
			best, bestDist = n, dist
		}
	}
	if best != nil {
		return best.Label
	}
	return ""
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// sentence is the card's one line.
func (c reader) sentence(a Action, target *screen.Node, kind Kind, to string) string {
	label := ""
	if target != nil {
		label = target.Label
	}
	q := func(s string) string { return strconv.Quote(short(s)) }
	toPart := func(prep string) string {
		if to == "" {
			return " (the screen names no recipient)"
		}
		return " " + prep + " " + short(to)
	}
	switch kind {
	case SendMessage:
		if msg := c.message(a, target); msg != "" {
			return "Send " + q(msg) + toPart("to")
		}
		return "Send" + toPart("to")
	case Post:
		if msg := c.message(a, target); msg != "" {
			return "Post " + q(msg)
		}
		return "Post what is on the screen"
	case Transfer, Payment, Purchase:
		verb := map[Kind]string{Transfer: "Move money", Payment: "Pay", Purchase: "Buy"}[kind]
		if am := c.amounts(1); len(am) > 0 && to != am[0] && !strings.Contains(to, am[0]) {
			return verb + ": " + q(am[0]) + " — " + q(to)
		}
		if to != "" {
			return verb + ": " + q(to)
		}
		return verb + " (the screen shows no amount)"
	case Delete, UninstallApp:
		verb := map[Kind]string{Delete: "Delete", UninstallApp: "Uninstall"}[kind]
		if d := c.dialogText(target); d != "" {
			return verb + ": " + q(d)
		}
		if h := c.heading(); h != "" {
			return verb + " " + q(h)
		}
		return verb + " " + q(label)
	case ChangeSetting:
		if target != nil && target.Checkable {
			state := "on"
			if target.Checked {
				state = "off"
			}
			return "Turn " + q(label) + " " + state
		}
		return "Change the setting " + q(label)
	case Call:
		if label != "" && isPhoneNumber(label) {
			return "Call " + label
		}
		if a.Kind == "open_url" {
			return "Call " + strings.TrimPrefix(a.URL, "tel:")
		}
		if to != "" {
			return "Call " + short(to)
		}
		return "Call"
	case OpenURL:
		if a.URL != "" {
			return "Open " + q(a.URL)
		}
		return "Open the link " + q(label)
	case InstallApp:
		return "Install " + q(first(c.heading(), label))
	case GrantPermission:
		if d := c.dialogText(target); d != "" {
			return "Allow: " + q(d)
		}
		return "Allow " + q(label)
	case SignIn:
		return "Sign in"
	}
	return string(kind) + ": " + q(label)
}

func first(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// appLabel is the name of the app in front.
func appLabel(v *screen.View) string {
	if v == nil {
		return ""
	}
	if v.App.Label != "" {
		return v.App.Label
	}
	return v.App.ID
}
