package scrcpyd

import (
	"context"
	"fmt"
	"io"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim/adbd"
)

// AppProcess is the adb face's app_process for drv's phones: it runs the
// scrcpy server the way a real phone does when the driver starts it
// (CLASSPATH=… app_process / com.genymobile.scrcpy.Server VERSION args),
// listening on the local abstract socket the driver's forward reaches.
func AppProcess(drv sdk.Driver) func(ctx context.Context, args []string, stdout, stderr io.Writer, dev *adbd.Device) error {
	return func(ctx context.Context, args []string, stdout, stderr io.Writer, dev *adbd.Device) error {
		name, err := SocketName(args)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return err
		}
		lis, err := dev.ListenAbstract(name)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return err
		}
		defer lis.Close()
		// Displays go through the face, which lists them in its dumps.
		return serve(ctx, args, lis, drv, dev, dev.ID(), stdout, stderr)
	}
}
