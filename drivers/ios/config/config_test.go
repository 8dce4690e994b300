package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSaveLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "home", FileName)
	want := &File{Phones: []Phone{
		{ID: "ios-ana", Name: "Ana's iPhone", WDA: "http://192.168.1.20:8100",
			Video: &Video{Listen: ":7420", Secret: testSecret}, Apps: []App{{ID: "com.example.app", Label: "Example"}}},
		{ID: "ios-ben", Name: "Ben", WDA: "http://10.0.0.2:8100", MJPEG: "off"},
	}}
	if err := Save(path, want); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v; want 0600 (the file holds pairing secrets)", st.Mode().Perm())
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("load after save (-want +got):\n%s", d)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// testSecret is a pairing secret in its text form (the bytes 00 01 … 1f).
const testSecret = "AAAQ-EAYE-AUDA-OCAJ-BIFQ-YDIO-B4IB-CEQT-CQKR-MFYY-DENB-WHA5-DYPQ"

// TestLoadRefusesReadableSecrets: a list with pairing secrets that others
// may read is refused, saying how to fix it; without secrets it is read.
func TestLoadRefusesReadableSecrets(t *testing.T) {
	withSecret := &File{Phones: []Phone{{ID: "ios-ana", WDA: "http://h:8100", Video: &Video{Listen: ":7420", Secret: testSecret}}}}
	without := &File{Phones: []Phone{{ID: "ios-ben", WDA: "http://h:8100"}}}
	tests := []struct {
		name    string
		f       *File
		mode    os.FileMode
		wantErr string
	}{
		{"secrets, owner only", withSecret, 0o600, ""},
		{"secrets, group may read", withSecret, 0o640, "mode 0640"},
		{"secrets, anyone may read", withSecret, 0o644, "chmod 600"},
		{"no secrets, anyone may read", without, 0o644, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), FileName)
			if err := Save(path, tt.f); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, tt.mode); err != nil {
				t.Fatal(err)
			}
			got, err := Load(path)
			if tt.wantErr == "" {
				if err != nil || len(got.Phones) != 1 {
					t.Errorf("Load: got %v, %v; want the list", got, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "pairing secrets") {
				t.Errorf("Load: got %v; want an error saying %q about the pairing secrets", err, tt.wantErr)
			}
		})
	}
}

func TestLoadMissingAndEmpty(t *testing.T) {
	dir := t.TempDir()
	f, err := Load(filepath.Join(dir, "none.yaml"))
	if err != nil || len(f.Phones) != 0 {
		t.Errorf("missing file: %v, %v; want an empty list", f, err)
	}
	empty := filepath.Join(dir, "empty.yaml")
	os.WriteFile(empty, nil, 0o600)
	if f, err := Load(empty); err != nil || len(f.Phones) != 0 {
		t.Errorf("empty file: %v, %v; want an empty list", f, err)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"bad id", "phones: [{id: 'Ana!', wda: 'http://h:8100'}]", "id"},
		{"twice", "phones: [{id: a, wda: 'http://h:8100'}, {id: a, wda: 'http://h:8100'}]", "used twice"},
		{"no wda", "phones: [{id: a}]", "wda"},
		{"ftp wda", "phones: [{id: a, wda: 'ftp://h'}]", "wda"},
		{"both video", "phones: [{id: a, wda: 'http://h:8100', video: {listen: ':1', dial: 'h:1', secret: s}}]", "exactly one"},
		{"no video address", "phones: [{id: a, wda: 'http://h:8100', video: {secret: s}}]", "exactly one"},
		{"dial without host", "phones: [{id: a, wda: 'http://h:8100', video: {dial: ':1', secret: s}}]", "no host"},
		{"no secret", "phones: [{id: a, wda: 'http://h:8100', video: {listen: ':1'}}]", "secret"},
		{"a secret mistyped", "phones: [{id: a, wda: 'http://h:8100', video: {listen: ':1', secret: 'AAAQ-EAYE-AUDA'}}]", "pairing secret: 7 bytes; want 32"},
		{"bad mjpeg", "phones: [{id: a, wda: 'http://h:8100', mjpeg: 'h'}]", "mjpeg"},
		{"bad app", "phones: [{id: a, wda: 'http://h:8100', apps: [{label: X}]}]", "bundle id"},
		{"unknown field", "phones: [{id: a, wda: 'http://h:8100', colour: red}]", "colour"},
		{"not yaml", "phones: [", "ios.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v; want an error with %q", err, tt.want)
			}
		})
	}
}

func TestNewIDAndFind(t *testing.T) {
	f := &File{Phones: []Phone{{ID: "ios-ana-s-iphone", Name: "Ana's iPhone"}}}
	if got := f.NewID("Ana's iPhone"); got != "ios-ana-s-iphone-2" {
		t.Errorf("NewID of a taken name: got %q; want ios-ana-s-iphone-2", got)
	}
	if got := f.NewID("Ben’s 📱"); got != "ios-ben-s" {
		t.Errorf("NewID: got %q; want ios-ben-s", got)
	}
	if got := f.NewID("📱"); got != "ios-iphone" {
		t.Errorf("NewID of a name without letters: got %q; want ios-iphone", got)
	}
	if !idRE.MatchString(f.NewID(strings.Repeat("long name ", 20))) {
		t.Error("NewID of a long name is not a valid id")
	}
	if i, ok := f.Find("ana's iphone"); !ok || i != 0 {
		t.Errorf("Find by name: %d %v", i, ok)
	}
	if _, ok := f.Find("nobody"); ok {
		t.Error("Find of an unknown phone succeeded")
	}
}

func TestMJPEGAddr(t *testing.T) {
	tests := []struct {
		phone Phone
		want  string
	}{
		{Phone{WDA: "http://192.168.1.20:8100"}, "192.168.1.20:9100"},
		{Phone{WDA: "http://[fe80::1]:8100"}, "[fe80::1]:9100"},
		{Phone{WDA: "http://h:8100", MJPEG: "off"}, ""},
		{Phone{WDA: "http://h:8100", MJPEG: "h:9200"}, "h:9200"},
	}
	for _, tt := range tests {
		if got := tt.phone.MJPEGAddr(); got != tt.want {
			t.Errorf("MJPEGAddr(%+v) = %q; want %q", tt.phone, got, tt.want)
		}
	}
}
