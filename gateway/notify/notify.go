// Package notify tells the person, on their desktop, that an agent waits
// for them: a freedesktop notification over the session D-Bus on Linux
// (org.freedesktop.Notifications), the notification centre on macOS
// (osascript), a toast on Windows (PowerShell and the WinRT toast API). It
// is best effort: a desktop with no notification service
// costs one line in the log, never an approval.
//
// What a notification says is the approval's card in one line (the agent,
// the phone, the summary sentence), made safe for display by the caller;
// never a code, a password or a screen.
package notify

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"
)

// Note is one notification.
type Note struct {
	Title string // "Pinky: claude-code asks"
	Body  string // "Send "See you Friday" to Ben Okafor (in Messages) on Ana's Pixel"
}

// Notifier shows notes.
type Notifier interface {
	Notify(ctx context.Context, n Note) error
}

// Off shows nothing: pinky daemon --notify off.
type Off struct{}

// Notify does nothing.
func (Off) Notify(context.Context, Note) error { return nil }

// Desktop is this OS's notifier: D-Bus on Linux and the BSDs, osascript on
// macOS, a toast on Windows.
func Desktop(log *slog.Logger) Notifier {
	switch runtime.GOOS {
	case "darwin":
		return &logged{n: osascript{}, log: log}
	case "windows":
		return &logged{n: Toast{}, log: log}
	}
	return &logged{n: &DBus{}, log: log}
}

// logged logs a notifier's first failure, and its recovery, but not every
// failure: a desktop without notifications would fill the log.
type logged struct {
	n      Notifier
	log    *slog.Logger
	mu     sync.Mutex
	failed bool
}

func (l *logged) Notify(ctx context.Context, n Note) error {
	err := l.n.Notify(ctx, n)
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case err != nil && !l.failed:
		l.failed = true
		l.log.Warn("desktop notifications do not reach you; approvals still wait in pinky approvals and the console (pinky daemon --notify off silences this)", "err", err)
	case err == nil && l.failed:
		l.failed = false
		l.log.Info("desktop notifications reach you again")
	}
	return err
}

// DBus sends notes to org.freedesktop.Notifications on the session bus
// ($DBUS_SESSION_BUS_ADDRESS), connecting on first use and again after a
// failure.
type DBus struct {
	mu   sync.Mutex
	conn *dbus.Conn
}

const (
	dbusName   = "org.freedesktop.Notifications"
	dbusPath   = "/org/freedesktop/Notifications"
	dbusNotify = dbusName + ".Notify"
)

// Notify sends n, urgent (the person is waited for), to stay until seen.
func (d *DBus) Notify(ctx context.Context, n Note) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.conn == nil {
		c, err := dbus.ConnectSessionBus(dbus.WithContext(ctx))
		if err != nil {
			return fmt.Errorf("the session bus: %w", err)
		}
		d.conn = c
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	hints := map[string]dbus.Variant{"urgency": dbus.MakeVariant(byte(2)), "category": dbus.MakeVariant("im.received")}
	// A notification server may read the body as markup (<b>, <a href>):
	// an agent's name or a screen's words must not become a link, so the
	// body's markup characters go as entities, which every server shows
	// as the characters. The summary is plain text by the specification.
	call := d.conn.Object(dbusName, dbusPath).CallWithContext(ctx, dbusNotify, 0,
		"Pinky", uint32(0), "", n.Title, bodyText.Replace(n.Body), []string{}, hints, int32(0))
	if call.Err != nil {
		d.conn.Close()
		d.conn = nil
		return fmt.Errorf("%s: %w", dbusNotify, call.Err)
	}
	return nil
}

// bodyText escapes what a notification body's markup would read.
var bodyText = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// osascript shows a note in macOS's notification centre.
type osascript struct{}

func (osascript) Notify(ctx context.Context, n Note) error {
	q := func(s string) string { return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"` }
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "osascript", "-e", "display notification "+q(n.Body)+" with title "+q(n.Title)).CombinedOutput()
	if err != nil {
		return fmt.Errorf("osascript: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// toastScript shows a toast through the WinRT API that Windows PowerShell
// reaches, under PowerShell's own application id (a program needs a Start
// menu shortcut to have one of its own). The note's text comes from the
// environment and is added as XML text nodes: it is never part of the
// script, so no title or body can run as code or become markup.
const toastScript = `$ErrorActionPreference = 'Stop'
[Windows.UI.Notifications.ToastNotificationManager, Windows.UI.Notifications, ContentType = WindowsRuntime] | Out-Null
$x = [Windows.UI.Notifications.ToastNotificationManager]::GetTemplateContent([Windows.UI.Notifications.ToastTemplateType]::ToastText02)
$t = $x.GetElementsByTagName('text')
$t.Item(0).AppendChild($x.CreateTextNode($env:PINKY_NOTE_TITLE)) | Out-Null
$t.Item(1).AppendChild($x.CreateTextNode($env:PINKY_NOTE_BODY)) | Out-Null
$app = '{1AC14E77-02E7-4E5D-B744-2EB1AE5198B7}\WindowsPowerShell\v1.0\powershell.exe'
[Windows.UI.Notifications.ToastNotificationManager]::CreateToastNotifier($app).Show([Windows.UI.Notifications.ToastNotification]::new($x))
`

// Toast shows a note as a Windows toast.
type Toast struct {
	Exe string // the PowerShell to run; "powershell.exe" when empty
}

// Notify runs the toast script with the note in its environment.
func (t Toast) Notify(ctx context.Context, n Note) error {
	exe := t.Exe
	if exe == "" {
		exe = "powershell.exe"
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-Command", toastScript)
	cmd.Env = append(os.Environ(), "PINKY_NOTE_TITLE="+n.Title, "PINKY_NOTE_BODY="+n.Body)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("toast: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}
