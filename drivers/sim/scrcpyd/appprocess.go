package scrcpyd

import (
	"context"
	"fmt"
	"io"
	"net"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim/adbd"
)

// AppProcess is the adb face's app_process for drv's phones: it runs the
// scrcpy server the way a real phone does when the driver starts it
// (CLASSPATH=… app_process / com.genymobile.scrcpy.Server VERSION args),
// listening on the local abstract socket the driver's forward reaches, or
// with tunnel_forward=false connecting to it through the client's adb
// reverse.
//
// It is a server of version ServerVersion; AppProcessVersion makes one of
// another version.
func AppProcess(drv sdk.Driver) func(ctx context.Context, args []string, stdout, stderr io.Writer, dev *adbd.Device) error {
	return AppProcessVersion(drv, ServerVersion)
}

// AppProcessVersion is AppProcess with a server of version, which starts
// for no other version.
func AppProcessVersion(drv sdk.Driver, version string) func(ctx context.Context, args []string, stdout, stderr io.Writer, dev *adbd.Device) error {
	return func(ctx context.Context, args []string, stdout, stderr io.Writer, dev *adbd.Device) error {
		name, err := SocketName(args)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return err
		}
		srv := Server{Version: version, Driver: drv, Device: dev.ID()}
		if !tunnelForward(args) {
			// A reverse tunnel: the server connects to the name, which
			// the client's adb reverse holds; it listens on nothing.
			srv.Dial = func(ctx context.Context) (net.Conn, error) { return dev.DialAbstract(ctx, name) }
			return srv.serve(ctx, args, nil, dev, stdout, stderr)
		}
		lis, err := dev.ListenAbstract(name)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return err
		}
		defer lis.Close()
		// Displays go through the face, which lists them in its dumps.
		return srv.serve(ctx, args, lis, dev, stdout, stderr)
	}
}
