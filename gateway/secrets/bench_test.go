package secrets

import (
	"image"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/dump"
	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// fixture parses one of the dump package's captured screens.
func fixture(b testing.TB, name string) *sdk.Screen {
	b.Helper()
	f, err := os.Open(filepath.Join("..", "..", "drivers", "dump", "testdata", name))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	s, err := dump.ParseUIAutomator(f)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkMaskScreen masks the largest captured screen (SystemUI quick
// settings, 109 nodes), as it is and with a code notification in it.
func BenchmarkMaskScreen(b *testing.B) {
	s := fixture(b, "systemui-quick-settings-en.xml")
	withCode := clone(s)
	withCode.Elements = append(withCode.Elements,
		sdk.Element{ID: 1000, ParentID: 1, Text: "Your Bank verification code is 482913. Don't share it.", Bounds: sdk.Rect{Right: 1080, Bottom: 100}})
	// A shade row of a blocked app, and a phone that remembers codes.
	withRow := clone(s)
	withRow.Elements = append(withRow.Elements,
		sdk.Element{ID: 1001, ParentID: 1, ResourceID: "com.android.systemui:id/expandableNotificationRow", Bounds: sdk.Rect{Top: 200, Right: 1080, Bottom: 400}},
		sdk.Element{ID: 1002, ParentID: 1001, ResourceID: "android:id/app_name_text", Text: "Bank", Bounds: sdk.Rect{Top: 200, Right: 1080, Bottom: 260}},
		sdk.Element{ID: 1003, ParentID: 1001, ResourceID: "android:id/text", Text: "Salary received +$1,850.00", Bounds: sdk.Rect{Top: 260, Right: 1080, Bottom: 400}})
	recall := NewRecall(time.Minute)
	recall.Add("305 118")
	recall.Add("771 042")
	hide := func(n Notice) bool { return n.App == "Bank" }
	for _, bc := range []struct {
		name string
		s    *sdk.Screen
		opts Options
	}{
		{"quick-settings", s, Options{}},
		{"quick-settings+code", withCode, Options{}},
		{"quick-settings+notification", withRow, Options{Hide: hide}},
		{"quick-settings+recall", s, Options{Recall: recall}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				MaskScreen(bc.s, bc.opts)
			}
		})
	}
}

// BenchmarkFindCodes reads notification-sized texts.
func BenchmarkFindCodes(b *testing.B) {
	for _, bc := range []struct{ name, text string }{
		{"en-code", "G-482913 is your Google verification code. Don't share it with anyone; Google will never ask for it."},
		{"zh-code", "【银行】您的验证码是482913，5分钟内有效，请勿泄露给他人。如非本人操作，请忽略本短信。"},
		{"en-no-code", "Ben: Did you get the tickets for Saturday? Doors open at 19:30, it's $45 each."},
		{"no-digits", "Ana Silva: Here are the photos! Which one should we print?"},
		{"en-spaced-invisible", "Your verification code is 4 8 2\u200b9 1 3. Don't share it with anyone."},
		{"en-password", "Your temporary password is Xk7#pq2. Change it after you sign in."},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				FindCodes(bc.text)
			}
		})
	}
}

// BenchmarkCoverJPEG covers two boxes on a full-size phone screenshot.
func BenchmarkCoverJPEG(b *testing.B) {
	m := testImage(1080, 2400, []image.Rectangle{image.Rect(100, 300, 700, 420)})
	data := encJPEG(b, m)
	boxes := []sdk.Rect{{Left: 100, Top: 300, Right: 700, Bottom: 420}, {Left: 40, Top: 900, Right: 1040, Bottom: 1100}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := CoverJPEG(data, 1080, 2400, boxes, 80); err != nil {
			b.Fatal(err)
		}
	}
}
