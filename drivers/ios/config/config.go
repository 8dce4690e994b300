// Package config reads and writes the list of iPhones Pinky drives:
// $PINKY_HOME/ios.yaml. `pinky ios add|remove|list` edit it and
// pinky-driver-ios reads it, picking up changes while it runs.
//
// The file holds each phone's pairing secret, the key that authenticates
// and encrypts its broadcast (drivers/ios/VIDEO.md), so it is written
// readable by its owner only, and replaced atomically (a temporary file
// renamed over it) so a reader never sees half a file. A file with secrets
// that others can read is refused, as ssh refuses such a key.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/pinky-gateway/pinky/drivers/ios/video"
	"github.com/pinky-gateway/pinky/internal/atomicfile"
)

// FileName is the file's name in the data folder.
const FileName = "ios.yaml"

// File is the content of ios.yaml.
type File struct {
	Phones []Phone `yaml:"phones"`
}

// Phone is one iPhone.
type Phone struct {
	// ID is the phone's id in Pinky; it never changes, so a phone that drops
	// and comes back keeps its leases and history.
	ID   string `yaml:"id"`
	Name string `yaml:"name"`
	// WDA is WebDriverAgent's base URL, e.g. http://192.168.1.20:8100.
	WDA string `yaml:"wda"`
	// MJPEG is WebDriverAgent's MJPEG server as HOST:PORT; "" means the
	// WDA host on port 9100, "off" none.
	MJPEG string `yaml:"mjpeg,omitempty"`
	// Video is where the phone's broadcast sends H.264; nil when it has none.
	Video *Video `yaml:"video,omitempty"`
	// Apps are listed besides iOS's own apps (WebDriverAgent cannot list
	// what is installed).
	Apps []App `yaml:"apps,omitempty"`
}

// App is an installed app the person names so agents can launch it by label.
type App struct {
	ID    string `yaml:"id"` // bundle id
	Label string `yaml:"label,omitempty"`
}

// Video says how the phone's broadcast reaches the driver.
type Video struct {
	// Listen is the HOST:PORT the driver listens on for the broadcast to
	// dial; Dial is the phone's HOST:PORT for the driver to dial. One is set.
	Listen string `yaml:"listen,omitempty"`
	Dial   string `yaml:"dial,omitempty"`
	// Secret is the pairing secret in its text form (video.FormatSecret),
	// as the person enters it in the phone's broadcast app. It
	// authenticates both ends and keys the broadcast's encryption.
	Secret string `yaml:"secret"`
}

// Path is the file's path in the data folder home.
func Path(home string) string { return filepath.Join(home, FileName) }

// Load reads the file at path; a missing file is an empty list. A file
// that holds pairing secrets and that its group or others may read is an
// error that says how to fix it: whoever read a secret can watch the
// phone's screen.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &File{}, nil
	}
	if err != nil {
		return nil, err
	}
	f, err := Parse(data)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o077 != 0 && f.hasSecrets() {
		return nil, fmt.Errorf("%s is readable by others (mode %04o) and holds pairing secrets: run chmod 600 %s, "+
			"and if someone else may have read it, pair the phones again (pinky ios remove, then pinky ios add)",
			path, st.Mode().Perm(), path)
	}
	return f, nil
}

// hasSecrets reports whether a phone in f has a pairing secret.
func (f *File) hasSecrets() bool {
	for _, p := range f.Phones {
		if p.Video != nil {
			return true
		}
	}
	return false
}

// Parse parses and checks the file's content.
func Parse(data []byte) (*File, error) {
	var f File
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) { // io.EOF: an empty file
		return nil, fmt.Errorf("%s: %w", FileName, err)
	}
	if err := f.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", FileName, err)
	}
	return &f, nil
}

var idRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

// Check reports the first problem in f: ids unique and well-formed, a WDA
// URL on each phone, addresses that parse, a secret with each video.
func (f *File) Check() error {
	seen := map[string]bool{}
	for i, p := range f.Phones {
		where := fmt.Sprintf("phone %d", i+1)
		if p.ID != "" {
			where = fmt.Sprintf("phone %q", p.ID)
		}
		if !idRE.MatchString(p.ID) {
			return fmt.Errorf("%s: id %q: want lowercase letters, digits, '.', '_' or '-' (at most 63)", where, p.ID)
		}
		if seen[p.ID] {
			return fmt.Errorf("%s: id used twice", where)
		}
		seen[p.ID] = true
		if err := CheckWDA(p.WDA); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if p.MJPEG != "" && p.MJPEG != "off" {
			if err := checkHostPort(p.MJPEG, false); err != nil {
				return fmt.Errorf("%s: mjpeg: %w", where, err)
			}
		}
		if v := p.Video; v != nil {
			switch {
			case (v.Listen == "") == (v.Dial == ""):
				return fmt.Errorf("%s: video: set exactly one of listen and dial", where)
			case v.Listen != "":
				if err := checkHostPort(v.Listen, true); err != nil {
					return fmt.Errorf("%s: video listen: %w", where, err)
				}
			default:
				if err := checkHostPort(v.Dial, false); err != nil {
					return fmt.Errorf("%s: video dial: %w", where, err)
				}
			}
			if strings.TrimSpace(v.Secret) == "" {
				return fmt.Errorf("%s: video: no pairing secret (pinky ios add makes one)", where)
			}
			if _, err := video.ParseSecret(v.Secret); err != nil {
				return fmt.Errorf("%s: video: %w", where, err)
			}
		}
		for _, a := range p.Apps {
			if a.ID == "" || strings.ContainsAny(a.ID, " /") {
				return fmt.Errorf("%s: app %q: want a bundle id such as com.example.app", where, a.ID)
			}
		}
	}
	return nil
}

// CheckWDA checks a WebDriverAgent base URL.
func CheckWDA(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("wda %q: want a URL such as http://192.168.1.20:8100", s)
	}
	return nil
}

// checkHostPort checks HOST:PORT; a listen address may leave HOST empty.
func checkHostPort(s string, listen bool) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Errorf("%q: want HOST:PORT", s)
	}
	if host == "" && !listen {
		return fmt.Errorf("%q: no host", s)
	}
	if port == "" {
		return fmt.Errorf("%q: no port", s)
	}
	return nil
}

// MJPEGAddr is where p's MJPEG stream is, or "" for none.
func (p Phone) MJPEGAddr() string {
	switch p.MJPEG {
	case "off":
		return ""
	case "":
		u, err := url.Parse(p.WDA)
		if err != nil || u.Hostname() == "" {
			return ""
		}
		return net.JoinHostPort(u.Hostname(), "9100")
	}
	return p.MJPEG
}

// Find returns the phone with the id or name key.
func (f *File) Find(key string) (int, bool) {
	for i, p := range f.Phones {
		if p.ID == key {
			return i, true
		}
	}
	for i, p := range f.Phones {
		if strings.EqualFold(p.Name, key) {
			return i, true
		}
	}
	return -1, false
}

// NewID makes an id for a phone called name that no phone in f has.
func (f *File) NewID(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	base := "ios-" + strings.Trim(b.String(), "-")
	if base == "ios-" {
		base = "ios-iphone"
	}
	if len(base) > 56 {
		base = strings.TrimRight(base[:56], "-")
	}
	id := base
	for n := 2; ; n++ {
		if _, taken := f.Find(id); !taken {
			return id
		}
		id = fmt.Sprintf("%s-%d", base, n)
	}
}

// Save writes f to path, readable by its owner only, replacing the file
// atomically.
func Save(path string, f *File) error {
	if err := f.Check(); err != nil {
		return err
	}
	var buf bytes.Buffer
	buf.WriteString("# The iPhones Pinky drives through WebDriverAgent. Edit with `pinky ios add|remove|list`;\n" +
		"# pinky-driver-ios picks up changes while it runs. Video secrets are pairing secrets: keep this file private.\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(f); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(path, buf.Bytes())
}
