package sim

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// TestScreenshotsAreEncodedOnce: the same screen asked again, or by many
// at once, is one encoding; a changed screen is a new one.
func TestScreenshotsAreEncodedOnce(t *testing.T) {
	d := newDefault(t)
	const id = "sim-android-1"
	unlock(t, d, id)
	shot := func() *sdk.Image {
		t.Helper()
		img, err := d.Screenshot(context.Background(), sdk.ScreenshotRequest{DeviceID: id, Format: sdk.FormatPNG})
		if err != nil {
			t.Fatal(err)
		}
		return img
	}
	var wg sync.WaitGroup
	imgs := make([]*sdk.Image, 8)
	for i := range imgs {
		wg.Go(func() { imgs[i] = shot() })
	}
	wg.Wait()
	for _, img := range imgs[1:] {
		if &img.Data[0] != &imgs[0].Data[0] {
			t.Fatal("eight screenshots of the same screen at once were encoded more than once")
		}
	}
	tapOn(t, d, id, "Settings")
	after := shot()
	if bytes.Equal(after.Data, imgs[0].Data) {
		t.Error("the screenshot after opening Settings is the home screen's")
	}
	small, err := d.Screenshot(context.Background(), sdk.ScreenshotRequest{DeviceID: id, Format: sdk.FormatPNG, MaxSide: 200})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(small.Data, after.Data) {
		t.Error("a smaller screenshot of the same screen is the full-size one")
	}
}
