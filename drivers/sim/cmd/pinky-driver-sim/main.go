// Command pinky-driver-sim serves Pinky's virtual phones as a driver plugin.
// Stdout belongs to the plugin handshake; logs go to stderr.
//
// With --adb-listen it is instead a plain server (no plugin handshake) that
// gives one phone an adb face: an emulated adbd that `adb connect` attaches
// (see package adbd). With --wda-listen it gives the world's iPhone a
// WebDriverAgent face (package wdad), and with --video-dial or
// --video-listen its broadcast sends H.264 by drivers/ios/VIDEO.md,
// encrypted with the pairing secret as a real broadcast app does. The
// faces can run together; they stop on SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/pinky-gateway/pinky/drivers/ios/video"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim"
	"github.com/pinky-gateway/pinky/drivers/sim/adbd"
	"github.com/pinky-gateway/pinky/drivers/sim/scrcpyd"
	"github.com/pinky-gateway/pinky/drivers/sim/timing"
	"github.com/pinky-gateway/pinky/drivers/sim/wdad"
)

func main() {
	log := sdk.Logger(slog.LevelInfo)
	if err := run(log); err != nil {
		log.Error("pinky-driver-sim", "err", err)
		os.Exit(1)
	}
}

func run(log *slog.Logger) error {
	world := flag.String("world", os.Getenv("PINKY_SIM_WORLD"), "world file (default: the bundled world; env PINKY_SIM_WORLD)")
	adbListen := flag.String("adb-listen", "", "serve one phone as an emulated adbd on `HOST:PORT` instead of as a plugin (then: adb connect HOST:PORT)")
	adbDevice := flag.String("adb-device", "", "with --adb-listen: the phone's `ID` (default: the world's first Android phone)")
	adbUnauthorized := flag.Bool("adb-unauthorized", false, "with --adb-listen: never authorize, so adb lists the phone as unauthorized")
	wdaListen := flag.String("wda-listen", "", "serve the iPhone as WebDriverAgent on `HOST:PORT` instead of as a plugin")
	wdaDevice := flag.String("wda-device", "", "with --wda-listen: the phone's `ID` (default: the world's first iPhone)")
	wdaMJPEG := flag.Bool("wda-mjpeg", true, "with --wda-listen: serve WDA's MJPEG stream on a second port (its address is logged)")
	videoDial := flag.String("video-dial", "", "with --wda-listen: send the iPhone's broadcast to the iOS driver at `HOST:PORT`")
	videoListen := flag.String("video-listen", "", "with --wda-listen: wait for the iOS driver's connection on `HOST:PORT`")
	videoSecret := flag.String("video-secret", os.Getenv("PINKY_SIM_VIDEO_SECRET"), "the broadcast's pairing `SECRET`, as pinky ios add printed it (env PINKY_SIM_VIDEO_SECRET)")
	videoDevice := flag.String("video-device", "", "the `ID` the iOS driver knows the phone by (its id in ios.yaml)")
	flag.CommandLine.SetOutput(os.Stderr)
	flag.Parse()
	w, err := loadWorld(*world)
	if err != nil {
		return err
	}
	faults := w.Faults
	if err := faults.Set(os.Getenv("PINKY_SIM_FAULTS")); err != nil {
		return fmt.Errorf("PINKY_SIM_FAULTS: %w", err)
	}
	d := sim.New(w, sim.WithFaults(faults), sim.WithLogger(log))
	defer d.Close()
	if *adbListen != "" || *wdaListen != "" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		var faces []func() error
		if *adbListen != "" {
			end, err := serveADB(log, d, *adbListen, *adbDevice, *adbUnauthorized)
			if err != nil {
				return err
			}
			faces = append(faces, end)
		}
		if *wdaListen != "" {
			vc := videoFace{dial: *videoDial, listen: *videoListen, secret: *videoSecret, device: *videoDevice}
			end, err := serveWDA(ctx, log, d, *wdaListen, *wdaDevice, *wdaMJPEG, filepath.Dir(*world), vc)
			if err != nil {
				return err
			}
			faces = append(faces, end)
		}
		<-ctx.Done()
		log.Info("stopping")
		for _, end := range faces {
			end()
		}
		return nil
	}
	log.Info("serving virtual phones", "phones", len(w.Phones), "world", *world)
	return sdk.Serve(d)
}

// serveADB starts one phone's adb face.
func serveADB(log *slog.Logger, d *sim.Driver, addr, device string, unauthorized bool) (func() error, error) {
	prof, err := timing.FromEnv()
	if err != nil {
		return nil, err
	}
	srv, err := adbd.Listen(addr, adbd.Config{
		Driver: d, DeviceID: device, Unauthorized: unauthorized, Logger: log, Timing: prof,
		// app_process runs the scrcpy server, the way the Android driver
		// starts it on a real phone.
		AppProcess: scrcpyd.AppProcess(d),
	})
	if err != nil {
		return nil, err
	}
	log.Info("serving a virtual phone over adb", "addr", srv.Addr().String(), "device", srv.Device().ID(),
		"connect", "adb connect "+srv.Addr().String())
	return srv.Close, nil
}

// videoFace is where the iPhone's broadcast goes.
type videoFace struct{ dial, listen, secret, device string }

// serveWDA starts the iPhone's WebDriverAgent face and, when asked, its
// broadcast.
func serveWDA(ctx context.Context, log *slog.Logger, d *sim.Driver, addr, device string, mjpeg bool, worldDir string, vc videoFace) (func() error, error) {
	if vc.dial != "" || vc.listen != "" {
		if vc.secret == "" || vc.device == "" {
			return nil, errors.New("--video-dial and --video-listen need --video-secret and --video-device")
		}
	}
	dir := ""
	if worldDir != "." {
		dir = worldDir // a world file's captured screens are relative to it
	}
	prof, err := timing.FromEnv()
	if err != nil {
		return nil, err
	}
	srv, err := wdad.Listen(addr, wdad.Config{Driver: d, DeviceID: device, MJPEG: mjpeg, WorldDir: dir, Logger: log, Timing: prof})
	if err != nil {
		return nil, err
	}
	attrs := []any{"addr", srv.Addr().String(), "device", srv.Device(), "wda", "http://" + srv.Addr().String()}
	if m := srv.MJPEGAddr(); m != nil {
		attrs = append(attrs, "mjpeg", m.String())
	}
	log.Info("serving a virtual iPhone as WebDriverAgent", attrs...)
	if vc.dial == "" && vc.listen == "" {
		return srv.Close, nil
	}
	secret, err := video.ParseSecret(vc.secret)
	if err != nil {
		srv.Close()
		return nil, fmt.Errorf("--video-secret: %w", err)
	}
	src, err := wdad.Broadcast(d, srv.Device(), wdad.BroadcastConfig{DeviceID: vc.device, Secret: secret, Dial: vc.dial, Listen: vc.listen, Logger: log})
	if err != nil {
		srv.Close()
		return nil, err
	}
	if a := src.Addr(); a != nil {
		log.Info("the broadcast waits for the driver", "video", a.String())
	}
	bctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := src.Run(bctx); err != nil {
			log.Error("broadcast", "err", err)
		}
	}()
	return func() error {
		cancel()
		<-done
		return srv.Close()
	}, nil
}

func loadWorld(path string) (*sim.World, error) {
	if path == "" {
		return sim.DefaultWorld()
	}
	return sim.Load(path)
}
