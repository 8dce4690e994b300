package agent

import (
	"context"
	"path"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim"
)

// lsFiler answers ListFiles on a file with that file as the only entry,
// as the Android driver does; the virtual phones answer an error.
type lsFiler struct{ *sim.Driver }

func (l lsFiler) ListFiles(ctx context.Context, device, p string) ([]sdk.FileInfo, error) {
	files, err := l.Driver.ListFiles(ctx, device, p)
	if err == nil || p == "" {
		return files, err
	}
	siblings, perr := l.Driver.ListFiles(ctx, device, path.Dir(p))
	if path.Dir(p) == "." {
		siblings, perr = l.Driver.ListFiles(ctx, device, "")
	}
	for _, fi := range siblings {
		if fi.Name == path.Base(p) && !fi.Dir && perr == nil {
			return []sdk.FileInfo{fi}, nil
		}
	}
	return files, err
}

// TestFilesListAFile: list on a path that names a file lists that one
// file, with where it is, whichever way the driver answers.
func TestFilesListAFile(t *testing.T) {
	for _, style := range []string{"error", "one entry"} {
		t.Run(style, func(t *testing.T) {
			f, s, _, _ := filesFixture(t)
			if style == "one entry" {
				f.drv.wrap = func(d sdk.Driver) sdk.Driver { return lsFiler{d.(*sim.Driver)} }
			}
			ctx := context.Background()
			const dev = "sim-android-1"
			list := func(p string) ([]File, error) {
				r, err := s.Files(ctx, dev, FilesRequest{Path: p}, nil)
				if err != nil {
					return nil, err
				}
				return r.Files, nil
			}
			files, err := list("welcome.txt")
			if err != nil || len(files) != 1 || files[0].Name != "welcome.txt" || files[0].Dir || files[0].Where != WherePhone || files[0].Size == 0 {
				t.Fatalf("list welcome.txt: %+v, %v; want that one file, on the phone", files, err)
			}
			if _, err := s.Files(ctx, dev, FilesRequest{Action: "pull", Path: "welcome.txt"}, nil); err != nil {
				t.Fatal(err)
			}
			if files, err = list("welcome.txt/"); err != nil || len(files) != 1 || files[0].Where != WhereBoth {
				t.Errorf("list welcome.txt after a pull: %+v, %v; want it on both sides", files, err)
			}
			if _, err := s.Upload(ctx, dev, "docs/mine.txt", []byte("mine")); err != nil {
				t.Fatal(err)
			}
			if files, err = list("docs/mine.txt"); err != nil || len(files) != 1 || files[0].Where != WhereComputer || files[0].Size != 4 {
				t.Errorf("list docs/mine.txt: %+v, %v; want it on the computer", files, err)
			}
			if _, err := list("nope.txt"); err == nil {
				t.Error("list nope.txt: no error; want not_found")
			} else if e, ok := AsError(err); !ok || e.Code != CodeNotFound {
				t.Errorf("list nope.txt: %v; want not_found", err)
			}
			// A folder still lists its entries.
			if files, err = list("docs"); err != nil || whereOf(files, "mine.txt") != WhereComputer {
				t.Errorf("list docs: %+v, %v; want mine.txt in it", files, err)
			}
		})
	}
}
