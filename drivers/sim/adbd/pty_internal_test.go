package adbd

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// TestCookedPty: what a command reads through a cooked pty is echoed, "\r"
// read as "\n"; what it writes leaves with "\n" as "\r\n".
func TestCookedPty(t *testing.T) {
	var term bytes.Buffer
	r := echoReader{strings.NewReader("ls\rpwd\n"), onlcr{&term}}
	got, err := io.ReadAll(r)
	if err != nil || string(got) != "ls\npwd\n" {
		t.Errorf("read through the pty: %q, %v; want %q", got, err, "ls\npwd\n")
	}
	if term.String() != "ls\r\npwd\r\n" {
		t.Errorf("echo: %q; want %q", term.String(), "ls\r\npwd\r\n")
	}
	term.Reset()
	if n, err := (onlcr{&term}).Write([]byte("a\nb")); n != 3 || err != nil || term.String() != "a\r\nb" {
		t.Errorf("onlcr write: %d, %v, %q; want 3, nil, %q", n, err, term.String(), "a\r\nb")
	}
}
