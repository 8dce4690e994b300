package cli_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pinky-gateway/pinky/internal/e2e"
)

// TestSkill checks that the binary carries docs/SKILL.md as it is, prints
// it, and installs it where the Agent Skills layout wants it: a folder
// named after the skill.
func TestSkill(t *testing.T) {
	want, err := os.ReadFile(filepath.Join(e2e.Root(), "docs", "SKILL.md"))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	out, errs, code := e.Run("skill")
	if code != 0 || out != string(want) {
		t.Errorf("pinky skill: exit %d, %d bytes (%s); want docs/SKILL.md's %d bytes", code, len(out), errs, len(want))
	}
	dir := filepath.Join(t.TempDir(), "skills")
	for range 2 { // the second time replaces the first copy
		if out, errs, code := e.Run("skill", "--install", dir); code != 0 {
			t.Fatalf("pinky skill --install: exit %d\n%s%s", code, out, errs)
		}
	}
	got, err := os.ReadFile(filepath.Join(dir, "pinky-phones", "SKILL.md"))
	if err != nil || string(got) != string(want) {
		t.Errorf("installed SKILL.md: %d bytes, %v; want docs/SKILL.md", len(got), err)
	}
}
