package notify

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/internal/testkit"
	"github.com/pinky-gateway/pinky/internal/testkit/dbustest"
)

// TestDBus sends a note through a real session bus to a stand-in
// notification service, and fails cleanly when none is there.
func TestDBus(t *testing.T) {
	addr := dbustest.Bus(t)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
	var log testkit.Buffer
	n := &logged{n: &DBus{}, log: log.Logger()}
	if err := n.Notify(context.Background(), Note{Title: "t", Body: "b"}); err == nil {
		t.Errorf("a bus with no notification service: no error")
	}
	if !strings.Contains(log.String(), "desktop notifications do not reach you") {
		t.Errorf("log %q; want it to say notifications do not reach the person", log.String())
	}
	srv := dbustest.Serve(t, addr)
	if err := n.Notify(context.Background(), Note{Title: "Pinky: agent asks", Body: `Send "hi" to <a href="http://x">Ben</a> & co`}); err != nil {
		t.Fatal(err)
	}
	got := srv.Notes()
	// The body's markup is escaped: no link an agent or a screen wrote.
	if len(got) != 1 || got[0].App != "Pinky" || got[0].Summary != "Pinky: agent asks" || got[0].Body != `Send "hi" to &lt;a href="http://x"&gt;Ben&lt;/a&gt; &amp; co` {
		t.Fatalf("notes %+v", got)
	}
	if u, ok := got[0].Hints["urgency"].Value().(byte); !ok || u != 2 {
		t.Errorf("urgency hint %v; want 2 (critical: the person is waited for)", got[0].Hints["urgency"])
	}
	if !strings.Contains(log.String(), "reach you again") {
		t.Errorf("log %q; want it to say notifications work again", log.String())
	}
}

// TestToastKeepsTextOutOfTheScript runs the toast through a stand-in
// PowerShell that records its arguments and environment: the note reaches
// it only as environment values, and the script is the same whatever the
// note says, so a body written as PowerShell or XML stays text.
func TestToastKeepsTextOutOfTheScript(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "rec")
	fake := filepath.Join(dir, "powershell")
	script := "#!/bin/sh\nfor a in \"$@\"; do printf 'ARG:%s\\n' \"$a\"; done > " + rec + "\nprintf 'TITLE:%s\\nBODY:%s\\n' \"$PINKY_NOTE_TITLE\" \"$PINKY_NOTE_BODY\" >> " + rec + "\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	body := `Send "hi'; Remove-Item C:\ -Recurse; '" </text><image src="x"/> to Ben`
	if err := (Toast{Exe: fake}).Notify(context.Background(), Note{Title: "Pinky: agent asks", Body: body}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	if !strings.Contains(got, "TITLE:Pinky: agent asks\n") || !strings.Contains(got, "BODY:"+body+"\n") {
		t.Errorf("the note did not reach PowerShell's environment whole:\n%s", got)
	}
	if !strings.Contains(got, "ARG:"+toastScript) {
		t.Errorf("the script was not passed as it is written:\n%s", got)
	}
	if strings.Count(got, "Remove-Item") != 1 || strings.Contains(toastScript, "Ben") {
		t.Errorf("the body reached the script's text:\n%s", got)
	}
	if err := (Toast{Exe: filepath.Join(dir, "missing")}).Notify(context.Background(), Note{}); err == nil {
		t.Error("a missing PowerShell gave no error")
	}
}
