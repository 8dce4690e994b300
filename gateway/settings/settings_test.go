package settings_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pinky-gateway/pinky/gateway/settings"
)

func TestOpenSetReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	st, err := settings.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(settings.Defaults(), st.Get()); diff != "" {
		t.Errorf("a new data folder's settings (-want +got):\n%s", diff)
	}
	var seen []settings.Settings
	st.OnChange(func(old, new settings.Settings) { seen = append(seen, old, new) })
	want := settings.Settings{Recording: false, RetentionDays: 7, ReadOnly: true}
	if _, err := st.Set(want); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]settings.Settings{settings.Defaults(), want}, seen); diff != "" {
		t.Errorf("OnChange saw (-want +got):\n%s", diff)
	}
	again, err := settings.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, again.Get()); diff != "" {
		t.Errorf("settings after a restart (-want +got):\n%s", diff)
	}
}

func TestSetRefusesBadValues(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	st, _ := settings.Open(path)
	for _, days := range []int{-1, settings.MaxRetentionDays + 1} {
		if _, err := st.Set(settings.Settings{RetentionDays: days}); err == nil || !strings.Contains(err.Error(), "retention_days") {
			t.Errorf("retention of %d days: %v, want an error naming retention_days", days, err)
		}
	}
	if diff := cmp.Diff(settings.Defaults(), st.Get()); diff != "" {
		t.Errorf("a refused Set changed the settings (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a refused Set wrote the file: %v", err)
	}
}

func TestOpenKeepsDefaultsOfMissingFieldsAndRefusesGarbage(t *testing.T) {
	dir := t.TempDir()
	partial := filepath.Join(dir, "partial.json")
	os.WriteFile(partial, []byte(`{"read_only": true}`), 0o600)
	st, err := settings.Open(partial)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Get(); !got.Recording || got.RetentionDays != 30 || !got.ReadOnly {
		t.Errorf("partial file read as %+v, want defaults with read_only", got)
	}
	for name, body := range map[string]string{"garbage": "{not json", "range": `{"retention_days": -3}`} {
		p := filepath.Join(dir, name+".json")
		os.WriteFile(p, []byte(body), 0o600)
		if _, err := settings.Open(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v, want an error naming the file", name, err)
		}
	}
}
