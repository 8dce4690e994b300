package wdad

import (
	"context"
	"log/slog"

	"github.com/pinky-gateway/pinky/drivers/ios/video"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim"
)

// BroadcastConfig says where a virtual iPhone's broadcast goes.
type BroadcastConfig struct {
	// DeviceID is the id the iOS driver knows the phone by (its id in
	// ios.yaml), which the broadcast must name.
	DeviceID string
	// Secret is the pairing secret (video.ParseSecret of what `pinky ios
	// add` printed): it authenticates both ends and keys the encryption.
	Secret []byte
	// Dial is the driver's HOST:PORT; Listen is where to wait for the
	// driver instead. One is set.
	Dial, Listen string
	Logger       *slog.Logger
}

// Broadcast returns the video face of the sim phone simID: a source that
// sends the phone's screen as H.264 by the protocol of drivers/ios/VIDEO.md
// (version 2: authenticated and encrypted with the pairing secret), as a
// broadcast extension on a real iPhone does, with stills made from the
// screen. Run it with Source.Run.
func Broadcast(drv *sim.Driver, simID string, bc BroadcastConfig) (*video.Source, error) {
	return video.NewSource(video.SourceConfig{
		DeviceID: bc.DeviceID, Secret: bc.Secret, Dial: bc.Dial, Listen: bc.Listen, Logger: bc.Logger,
		Stream: func(ctx context.Context, send func(sdk.VideoPacket) error) error {
			// A real broadcast downscales to stay within the extension's memory
			// limit (VIDEO.md); so does this one.
			err := drv.StreamVideo(ctx, sdk.VideoRequest{DeviceID: simID, Codec: sdk.CodecH264, MaxSide: 1280}, send)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		},
		KeyFrame: func() {
			// The sim answers at once; the context only bounds a phone gone away.
			drv.RequestKeyFrame(context.Background(), simID, 0)
		},
		Still: func(ctx context.Context, maxSide, quality int) ([]byte, error) {
			img, err := drv.Screenshot(ctx, sdk.ScreenshotRequest{DeviceID: simID, Format: sdk.FormatJPEG, MaxSide: maxSide, Quality: quality})
			if err != nil {
				return nil, err
			}
			return img.Data, nil
		},
	})
}
