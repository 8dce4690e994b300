package driverhost

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// SettingsFile is the person's settings of the drivers, in $PINKY_HOME.
const SettingsFile = "drivers.yaml"

// Setting is what the person chose for one driver: every driver is treated
// alike, by name.
type Setting struct {
	// Enabled starts the driver (nil: the daemon's default, which is on for
	// every driver but those the daemon is told to leave off).
	Enabled *bool `yaml:"enabled"`
	// Env is more of the driver's environment, Args more arguments.
	Env  map[string]string `yaml:"env"`
	Args []string          `yaml:"args"`
}

// LoadSettings reads home/drivers.yaml; a missing file is no settings. An
// unknown field, a bad name or a bad environment name is an error naming the
// file.
//
//	android:
//	  env: {SCRCPY_SERVER_PATH: /opt/scrcpy/scrcpy-server}
//	sim:
//	  enabled: true
//	  env: {PINKY_SIM_WORLD: /home/ana/world.yaml}
func LoadSettings(home string) (map[string]Setting, error) {
	path := filepath.Join(home, SettingsFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out map[string]Setting
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&out); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for name, s := range out {
		if !validName(name) {
			return nil, fmt.Errorf("%s: driver %q: a name is letters, digits, - and _", path, name)
		}
		for k := range s.Env {
			if k == "" || strings.ContainsAny(k, "= \t\n") {
				return nil, fmt.Errorf("%s: driver %q: environment name %q", path, name, k)
			}
		}
	}
	return out, nil
}

// Apply puts settings into cfg: a driver enabled is taken off Disabled, one
// disabled put on it, and its environment and arguments added.
func (c *Config) Apply(settings map[string]Setting) {
	names := make([]string, 0, len(settings))
	for n := range settings {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		s := settings[name]
		if s.Enabled != nil {
			c.SetEnabled(name, *s.Enabled)
		}
		keys := make([]string, 0, len(s.Env))
		for k := range s.Env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			c.AddEnv(name, k+"="+s.Env[k])
		}
		if len(s.Args) > 0 {
			if c.Args == nil {
				c.Args = map[string][]string{}
			}
			c.Args[name] = append(c.Args[name], s.Args...)
		}
	}
}

// SetEnabled starts or leaves off the named driver.
func (c *Config) SetEnabled(name string, on bool) {
	if c.Disabled == nil {
		c.Disabled = map[string]bool{}
	}
	if on {
		delete(c.Disabled, name)
	} else {
		c.Disabled[name] = true
	}
}

// AddEnv adds a KEY=VALUE to the named driver's environment.
func (c *Config) AddEnv(name, kv string) {
	if c.Env == nil {
		c.Env = map[string][]string{}
	}
	c.Env[name] = append(c.Env[name], kv)
}
