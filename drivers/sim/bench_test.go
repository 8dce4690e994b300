package sim

import (
	"context"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

func benchPhone(b *testing.B) *Driver {
	d := newDefault(b)
	unlock(b, d, android)
	act(b, d, android, sdk.Action{Kind: sdk.ActLaunch, AppID: "settings"})
	return d
}

func BenchmarkScreen(b *testing.B) {
	d := benchPhone(b)
	for b.Loop() {
		if _, err := d.Screen(context.Background(), android, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAct(b *testing.B) {
	d := benchPhone(b)
	for b.Loop() {
		if _, err := d.Act(context.Background(), android, sdk.Action{Kind: sdk.ActScroll, Direction: sdk.ScrollDown, Amount: 100}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkScreenshot(b *testing.B) {
	for _, req := range []sdk.ScreenshotRequest{
		{DeviceID: android, Format: sdk.FormatPNG},
		{DeviceID: android, Format: sdk.FormatJPEG},
		{DeviceID: android, Format: sdk.FormatPNG, MaxSide: 800},
	} {
		b.Run(string(req.Format)+map[bool]string{true: "-800", false: ""}[req.MaxSide > 0], func(b *testing.B) {
			d := benchPhone(b)
			for b.Loop() {
				if _, err := d.Screenshot(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
