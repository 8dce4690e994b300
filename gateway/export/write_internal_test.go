package export

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A failure while writing removes what the export wrote, from a folder it
// created and from an empty folder it was given.
func TestWriteCleansUp(t *testing.T) {
	home := t.TempDir()
	good := filepath.Join(home, "good.jpg")
	if err := os.WriteFile(good, []byte("jpeg"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := &report{copies: []copyFile{
		{src: good, dst: "media/k1/good.jpg"},
		{src: filepath.Join(home, "gone.jpg"), dst: "media/k1/gone.jpg"}, // deleted since load
	}}
	tests := []struct {
		name    string
		created bool
	}{
		{"new folder", true},
		{"empty folder", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(home, tt.name)
			if !tt.created {
				if err := os.Mkdir(dir, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			err := r.write(context.Background(), dir, tt.created)
			if !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("write: got %v; want the missing file's error", err)
			}
			entries, err := os.ReadDir(dir)
			switch {
			case tt.created && !errors.Is(err, os.ErrNotExist):
				t.Errorf("the new folder after a failed export: %d entries, %v; want it gone", len(entries), err)
			case !tt.created && (err != nil || len(entries) != 0):
				t.Errorf("the given folder after a failed export: %d entries, %v; want it empty", len(entries), err)
			}
		})
	}
	// A cancelled export writes nothing either.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := filepath.Join(home, "cancelled")
	if err := r.write(ctx, dir, true); !errors.Is(err, context.Canceled) {
		t.Errorf("write after cancel: got %v; want context.Canceled", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the folder of a cancelled export: %v; want it gone", err)
	}
}
