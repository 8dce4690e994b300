package daemon

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/api"
)

func TestInputAction(t *testing.T) {
	for _, tc := range []struct {
		in   api.InputParams
		want sdk.Action
		err  bool
	}{
		{in: api.InputParams{Kind: "tap", X: 5, Y: 6}, want: sdk.Action{Kind: sdk.ActTap, Point: sdk.Point{X: 5, Y: 6}}},
		{in: api.InputParams{Kind: "long_press", X: 1, Y: 2, DurationMS: 800}, want: sdk.Action{Kind: sdk.ActLongPress, Point: sdk.Point{X: 1, Y: 2}, Duration: 800_000_000}},
		{in: api.InputParams{Kind: "swipe", X: 1, Y: 2, X2: 3, Y2: 4, DurationMS: 300}, want: sdk.Action{Kind: sdk.ActSwipe, Point: sdk.Point{X: 1, Y: 2}, To: sdk.Point{X: 3, Y: 4}, Duration: 300_000_000}},
		{in: api.InputParams{Kind: "type", Text: "héllo"}, want: sdk.Action{Kind: sdk.ActType, Text: "héllo"}},
		{in: api.InputParams{Kind: "key", Key: "app_switch"}, want: sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyRecents}},
		{in: api.InputParams{Kind: "key", Key: "escape"}, want: sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyBack}},
		{in: api.InputParams{Kind: "key", Key: "self_destruct"}, err: true},
		{in: api.InputParams{Kind: "type"}, err: true},
		{in: api.InputParams{Kind: "launch"}, err: true},
		{in: api.InputParams{Kind: "tap", DurationMS: -1}, err: true},
	} {
		got, err := inputAction(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("%+v: error %v, want error %v", tc.in, err, tc.err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); !tc.err && diff != "" {
			t.Errorf("%+v (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestScale(t *testing.T) {
	// A 576x1280 mirror of a 1080x2400 screen.
	got := scale(sdk.Point{X: 288, Y: 640}, 576, 1280, sdk.Point{X: 1080, Y: 2400})
	if got != (sdk.Point{X: 540, Y: 1200}) {
		t.Errorf("the mirror's centre maps to %v, want the screen's (540,1200)", got)
	}
}
