package agent

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/approval"
)

// askFilesPush asks about pushes and allows the rest.
type askFilesPush struct{}

func (askFilesPush) Check(c Check) Verdict {
	if c.Action.Kind == "files_push" {
		return Verdict{Decision: Ask, Rule: "test: files", Reason: "copying files onto a phone asks"}
	}
	return Verdict{Decision: Allow}
}

func (askFilesPush) Blocked(string) bool { return false }

func filesFixture(t *testing.T) (*fixture, *Session, *approval.Book, string) {
	t.Helper()
	dir := t.TempDir()
	book := approval.NewBook(time.Minute)
	f := newFixture(t, Config{Guard: askFilesPush{}, Approvals: book, ApprovalWait: 5 * time.Second, Files: dir})
	s := f.session(t, "agent")
	if _, err := s.Connect(context.Background(), ConnectRequest{Device: "sim-android-1", Task: "files"}); err != nil {
		t.Fatal(err)
	}
	return f, s, book, filepath.Join(dir, "sim-android-1")
}

func whereOf(files []File, name string) string {
	for _, f := range files {
		if f.Name == name {
			return f.Where
		}
	}
	return ""
}

func TestFilesListPullPush(t *testing.T) {
	f, s, book, local := filesFixture(t)
	ctx := context.Background()
	const dev = "sim-android-1"

	r, err := s.Files(ctx, dev, FilesRequest{}, nil)
	if err != nil || whereOf(r.Files, "welcome.txt") != WherePhone {
		t.Fatalf("list before pull: %+v, %v; want welcome.txt on the phone", r, err)
	}
	if r, err = s.Files(ctx, dev, FilesRequest{Action: "pull", Path: "welcome.txt"}, nil); err != nil {
		t.Fatal(err)
	}
	var onPhone bytes.Buffer
	if err := f.drv.d.PullFile(ctx, dev, "welcome.txt", &onPhone); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(local, "welcome.txt"))
	if err != nil || !bytes.Equal(got, onPhone.Bytes()) || r.Size != int64(len(got)) {
		t.Fatalf("pulled %q (%d), %v; want %q", got, r.Size, err, onPhone.Bytes())
	}
	if fi, _ := os.Stat(filepath.Join(local, "welcome.txt")); fi.Mode().Perm() != 0o600 {
		t.Errorf("pulled file mode %v; want 0600", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(local); fi.Mode().Perm() != 0o700 {
		t.Errorf("device folder mode %v; want 0700", fi.Mode().Perm())
	}
	r, _ = s.Files(ctx, dev, FilesRequest{}, nil)
	if w := whereOf(r.Files, "welcome.txt"); w != WhereBoth {
		t.Errorf("after pull: welcome.txt is %q; want both", w)
	}
	os.WriteFile(filepath.Join(local, "welcome.txt"), []byte("changed here"), 0o600)
	r, _ = s.Files(ctx, dev, FilesRequest{}, nil)
	if w := whereOf(r.Files, "welcome.txt"); w != WhereDiffers {
		t.Errorf("after a local edit: welcome.txt is %q; want differs", w)
	}

	// Upload lands on the computer only; a push asks, then the phone has it.
	if _, err := s.Upload(ctx, dev, "notes/hello.txt", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(local, "notes", "hello.txt")); err != nil || string(got) != "hello" {
		t.Fatalf("uploaded: %q, %v", got, err)
	}
	r, _ = s.Files(ctx, dev, FilesRequest{}, nil)
	if w := whereOf(r.Files, "notes"); w != WhereComputer {
		t.Errorf("after upload: notes is %q; want computer", w)
	}
	decideWhenAsked(t, book, false)
	_, err = s.Files(ctx, dev, FilesRequest{Action: "push", Path: "notes/hello.txt"}, nil)
	wantCode(t, "denied push", err, CodeDenied)
	decideWhenAsked(t, book, true)
	if r, err = s.Files(ctx, dev, FilesRequest{Action: "push", Path: "notes/hello.txt"}, nil); err != nil || r.Size != 5 {
		t.Fatalf("approved push: %+v, %v", r, err)
	}
	cards := book.List(false)
	if len(cards) != 2 || cards[1].Rule != "test: files" || cards[1].Device != dev {
		t.Errorf("cards: %+v", cards)
	}
	var pushed bytes.Buffer
	if err := f.drv.d.PullFile(ctx, dev, "notes/hello.txt", &pushed); err != nil || pushed.String() != "hello" {
		t.Errorf("on the phone after push: %q, %v", pushed.String(), err)
	}
	r, _ = s.Files(ctx, dev, FilesRequest{Path: "notes"}, nil)
	if w := whereOf(r.Files, "hello.txt"); w != WhereBoth {
		t.Errorf("after push: hello.txt is %q; want both", w)
	}
}

func TestFilesRefuseEscapes(t *testing.T) {
	f, s, _, local := filesFixture(t)
	ctx := context.Background()
	const dev = "sim-android-1"
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret"), 0o600)
	os.MkdirAll(local, 0o700)
	if err := os.Symlink(outside, filepath.Join(local, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(local, "link.txt")); err != nil {
		t.Fatal(err)
	}
	for _, req := range []FilesRequest{
		{Action: "pull", Path: "../x.txt"},
		{Action: "pull", Path: "/etc/passwd"},
		{Action: "push", Path: "../x.txt"},
		{Action: "list", Path: "a/../../b"},
		{Action: "push", Path: "out/secret.txt"},
		{Action: "push", Path: "link.txt"},
		{Action: "pull", Path: "out/welcome.txt"},
		{Action: "pull", Path: "link.txt"},
		{Action: "list", Path: "out"},
	} {
		_, err := s.Files(ctx, dev, req, nil)
		wantCode(t, req.Action+" "+req.Path, err, CodeInvalidArgument)
	}
	for _, p := range []string{"../up.txt", "/abs.txt", "out/x.txt", "bad:name.txt", "a/./b", "link.txt"} {
		_, err := s.Upload(ctx, dev, p, []byte("x"))
		wantCode(t, "upload "+p, err, CodeInvalidArgument)
	}
	if got, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(got) != "secret" {
		t.Errorf("the file outside changed: %q", got)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 1 {
		t.Errorf("the folder outside holds %d entries; want 1", len(ents))
	}
	// Nothing reached the phone.
	if err := f.drv.d.PullFile(ctx, dev, "secret.txt", &bytes.Buffer{}); err == nil {
		t.Error("secret.txt reached the phone")
	}
	var _ sdk.Filer = f.drv.d
}

func TestFilesPushPendingThenPhoneApproval(t *testing.T) {
	dir := t.TempDir()
	book := approval.NewBook(time.Minute)
	f := newFixture(t, Config{Guard: askFilesPush{}, Approvals: book, ApprovalWait: 50 * time.Millisecond, Files: dir})
	s := f.session(t, "agent")
	ctx := context.Background()
	const dev = "sim-android-1"
	if _, err := s.Connect(ctx, ConnectRequest{Device: dev, Task: "files"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Upload(ctx, dev, "a.txt", []byte("abc")); err != nil {
		t.Fatal(err)
	}
	_, err := s.Files(ctx, dev, FilesRequest{Action: "push", Path: "a.txt"}, nil)
	wantCode(t, "push with nobody answering", err, CodeApprovalPending)
	cards := book.List(true)
	if len(cards) != 1 {
		t.Fatalf("pending cards: %+v", cards)
	}
	book.Decide(cards[0].ID, true, false, "")
	obs, err := s.Approval(ctx, cards[0].ID, nil)
	if err != nil {
		t.Fatalf("phone_approval: %v", err)
	}
	var got bytes.Buffer
	if err := f.drv.d.PullFile(ctx, dev, "a.txt", &got); err != nil || got.String() != "abc" {
		t.Errorf("on the phone: %q, %v (obs %+v)", got.String(), err, obs)
	}
}
