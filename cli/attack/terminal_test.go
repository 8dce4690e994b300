package attack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/chromedp/chromedp"

	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/internal/e2e"
)

// The agent's own words, chosen to take over the person's terminal: an
// escape sequence that clears the screen, a newline that starts a forged
// line of the approval card, a carriage return that overwrites, and a
// right-to-left override that shows "$100" as "$001".
const (
	evilAgent = "evil\x1b[2J\nfake card line"
	evilTask  = "pay Ben \x1b]0;owned\x07\r\n  decide  nothing to decide \u202e$100"
	evilTyped = "hi \x1b[31mred\r\u202e$100"
)

// unsafeRunes lists what in out would act on a terminal or reorder text:
// control characters other than newline (and tab where tabs is true),
// DEL, C1 controls, bidirectional controls, line and paragraph
// separators, and bytes that are not UTF-8.
func unsafeRunes(out string, tabs bool) []string {
	var bad []string
	for i, r := range out {
		switch {
		case r == utf8.RuneError:
			bad = append(bad, fmt.Sprintf("byte %#x at %d", out[i], i))
		case r == '\n', r == '\t' && tabs:
		case r < 0x20, r >= 0x7f && r < 0xa0, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069,
			r == 0x200e, r == 0x200f, r == 0x061c, r == 0x2028, r == 0x2029:
			bad = append(bad, fmt.Sprintf("%U at %d (%q)", r, i, out[max(0, i-30):min(len(out), i+30)]))
		}
	}
	return bad
}

// checkShown fails when out holds a raw control or bidirectional control,
// or does not show each of the visible escapes in want.
func checkShown(t *testing.T, what, out string, want ...string) {
	t.Helper()
	if bad := unsafeRunes(out, false); len(bad) > 0 {
		t.Errorf("%s writes raw controls to the terminal: %v\n%s", what, bad, out)
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("%s does not show %q:\n%s", what, w, out)
		}
	}
	// A line of its own that the agent forged.
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "decide  nothing") || strings.HasPrefix(l, "fake card line") {
			t.Errorf("%s shows a line the agent forged: %q", what, l)
		}
	}
}

// askPerson types the agent's text into Ben's conversation and sends it,
// which opens an approval card that stays open: the carriage return in
// the text may submit it already, else a tap on Send does.
func askPerson(t *testing.T, h *e2e.Host, with func(kv ...any) map[string]any) {
	t.Helper()
	text, _ := h.Tool("phone_type", with("field", "Text message", "text", evilTyped))
	if !strings.HasPrefix(text, "approval_pending:") {
		text, _ = h.Tool("phone_tap", with("text", "Send"))
	}
	if !strings.HasPrefix(text, "approval_pending:") {
		t.Fatalf("send: %q; want approval_pending (the card stays open for the views)", text)
	}
}

// TestAgentCannotWriteToTheTerminal: an agent names itself with an escape
// sequence and a newline, and gives a task and types text with escape
// sequences, carriage returns and a right-to-left override, then asks
// for an approval. Every view of the person's CLI (approvals, status,
// history, a task's steps, watch) shows it all as visible escapes, on
// the lines where it belongs; --json keeps the exact data and writes the
// bidirectional control as an escape too.
func TestAgentCannotWriteToTheTerminal(t *testing.T) {
	e := e2e.New(t)
	e.Daemon("--sim", "--console", "off", "--approval-wait", "500ms", "--approval-ttl", "5m")
	e.Unlock("sim-android-1")
	watch := e.Cmd("watch", "--since", "0")
	watchOut := &e2e.Buffer{}
	watch.Stdout = watchOut
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { watch.Process.Kill(); watch.Wait() })

	h := e.StdioHost()
	h.InitializeAs(evilAgent)
	with := e2e.OnDevice("sim-android-1")
	h.OK("phone_connect", with("task", evilTask), "Pixel Launcher")
	h.OK("phone_launch", with("app", "Messages"), "Ben Okafor")
	h.OK("phone_tap", with("text", "Ben Okafor"), "Did you get the tickets?")
	askPerson(t, h, with)

	// The name is printable text from the handshake on: the gateway keeps
	// it cleaned, the same every time.
	var st api.Status
	e.JSON(&st, "status")
	const shownAgent = `evil\x1b[2J\nfake card line`
	if len(st.Leases) != 1 || st.Leases[0].Agent != shownAgent {
		t.Errorf("status --json leases: %+v; want one held by %q", st.Leases, shownAgent)
	}

	out, errs, code := e.Run("approvals")
	if code != 0 {
		t.Fatalf("pinky approvals: %s", errs)
	}
	checkShown(t, "pinky approvals", out, shownAgent, `\x1b]0;owned\x07\r\n  decide  nothing to decide ‹U+202E›$100`, `‹U+202E›$100`)
	// One decide line, the card's own.
	if n := strings.Count(out, "\n  decide  "); n != 1 {
		t.Errorf("pinky approvals has %d decide lines; want the card's one:\n%s", n, out)
	}
	out, _, _ = e.Run("status")
	checkShown(t, "pinky status", out, shownAgent, `‹U+202E›`)

	out, _, _ = e.Run("history")
	checkShown(t, "pinky history", out, shownAgent, `‹U+202E›`)
	var tasks []api.Task
	e.JSON(&tasks, "history")
	if len(tasks) != 1 || tasks[0].Text != strings.TrimSpace(evilTask) {
		t.Fatalf("history --json: %+v; want the task's exact text %q", tasks, evilTask)
	}
	out, _, _ = e.Run("history", "show", tasks[0].ID)
	checkShown(t, "pinky history show", out, shownAgent, `[31mred`, `‹U+202E›$100`)

	// --json is the exact data, with the bidirectional control escaped.
	for _, args := range [][]string{{"approvals"}, {"history"}, {"history", "show", tasks[0].ID}, {"status"}} {
		out, _, _ := e.Run(append(args, "--json")...)
		if bad := unsafeRunes(out, false); len(bad) > 0 {
			t.Errorf("pinky %v --json writes raw controls: %v", args, bad)
		}
		if !strings.Contains(out, `\u202e`) {
			t.Errorf("pinky %v --json lost the override (want it as \\u202e):\n%s", args, out)
		}
	}

	e.Eventually("watch prints the approval", func() bool { return strings.Contains(watchOut.String(), "approval.opened") })
	watch.Process.Signal(syscall.SIGINT)
	watch.Wait()
	checkShown(t, "pinky watch", watchOut.String(), shownAgent)
	if !strings.Contains(watchOut.String(), "‹U+202E›") {
		t.Errorf("pinky watch does not show the task's override as ‹U+202E›:\n%s", watchOut)
	}
}

// TestAgentTextIsShownInTheConsoleAndTheExport: the same agent, in the web
// console in real Chromium (the approval card, the phone's card, the
// history) and in the exported report: no raw control nor bidirectional
// control in the page's text, and the visible escapes in their place. The
// page's escaping function matches internal/safetext's on its table.
func TestAgentTextIsShownInTheConsoleAndTheExport(t *testing.T) {

	e := e2e.New(t)
	e.Daemon("--sim", "--console", "127.0.0.1:0", "--approval-wait", "500ms", "--approval-ttl", "5m")
	e.Unlock("sim-android-1")
	h := e.StdioHost()
	h.InitializeAs(evilAgent)
	with := e2e.OnDevice("sim-android-1")
	h.OK("phone_connect", with("task", evilTask), "Pixel Launcher")
	h.OK("phone_launch", with("app", "Messages"), "Ben Okafor")
	h.OK("phone_tap", with("text", "Ben Okafor"), "Did you get the tickets?")
	askPerson(t, h, with)
	var tasks []api.Task
	e.JSON(&tasks, "history")
	if len(tasks) != 1 {
		t.Fatalf("history: %+v; want one task", tasks)
	}

	link, errs, code := e.Run("open", "--no-browser")
	if code != 0 {
		t.Fatalf("pinky open: %s", errs)
	}
	link = strings.TrimSpace(link)
	base := link[:strings.Index(link, "/login")]
	ctx := e2e.Chromium(t)
	run := func(actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatal(err)
		}
	}
	run(chromedp.Navigate(link))
	e2e.WaitJS(t, ctx, "the approval card and the phone's agent", `document.querySelector('article.approval') &&
		document.getElementById('agent-sim-android-1').textContent.includes('evil')`)
	checkPage(t, ctx, "the phones page and the approval card", `\x1b[2J`, `‹U+202E›$100`)
	run(chromedp.Navigate(base + "/#history"))
	e2e.WaitJS(t, ctx, "the history's tasks", `document.querySelector('tr.task')`)
	checkPage(t, ctx, "the history", `‹U+202E›$100`)
	run(chromedp.Navigate(base + "/#history/" + tasks[0].ID))
	e2e.WaitJS(t, ctx, "the task's steps", `document.querySelector('li.step')`)
	checkPage(t, ctx, "the task's steps", `[31mred`, `‹U+202E›$100`)

	// The page's show and safetext agree on every case of the table.
	b, err := os.ReadFile(filepath.Join(e2e.Root(), "internal", "safetext", "testdata", "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct{ Name, In, Text string }
	if err := json.Unmarshal(b, &cases); err != nil || len(cases) == 0 {
		t.Fatalf("cases.json: %v", err)
	}
	for _, c := range cases {
		in, _ := json.Marshal(c.In)
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string]("show("+string(in)+")"))
		if err != nil || got != c.Text {
			t.Errorf("%s: the page's show(%q) = %q, %v; want %q", c.Name, c.In, got, err, c.Text)
		}
	}

	// The export, opened from disk.
	dir := filepath.Join(t.TempDir(), "report")
	if _, errs, code := e.Run("export", tasks[0].ID, dir); code != 0 {
		t.Fatalf("pinky export: %s", errs)
	}
	html, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if bad := unsafeRunes(string(html), true); len(bad) > 0 {
		t.Errorf("index.html holds raw controls: %v", bad)
	}
	for _, want := range []string{`evil\x1b[2J`, `‹U+202E›$100`, `[31mred`} {
		if !strings.Contains(string(html), want) {
			t.Errorf("index.html does not show %q", want)
		}
	}
	run(chromedp.Navigate("file://" + filepath.Join(dir, "index.html")))
	e2e.WaitJS(t, ctx, "the report", `document.body.innerText.includes('phone_type')`)
	checkPage(t, ctx, "the report", `‹U+202E›$100`)
}

// pageText is every text node of the page and every attribute value a
// person reads (titles, alt texts, placeholders, labels), joined.
const pageText = `(() => {
	const out = [];
	const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
	while (w.nextNode()) out.push(w.currentNode.nodeValue);
	for (const el of document.querySelectorAll('[title],[alt],[placeholder],[aria-label]'))
		for (const a of ['title', 'alt', 'placeholder', 'aria-label']) if (el.hasAttribute(a)) out.push(el.getAttribute(a));
	out.push(document.title);
	return out.join('\n');
})()`

// checkPage fails when the page's text holds a raw control or
// bidirectional control, or lacks one of the visible escapes in want.
func checkPage(t *testing.T, ctx context.Context, what string, want ...string) {
	t.Helper()
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](pageText))
	if err != nil {
		t.Fatal(err)
	}
	if bad := unsafeRunes(text, true); len(bad) > 0 {
		t.Errorf("%s: the page's text holds raw controls: %v", what, bad)
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("%s: the page does not show %q:\n%s", what, w, text)
		}
	}
}
