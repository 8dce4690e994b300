// Command pinky-driver-sim serves Pinky's virtual phones as a driver plugin.
// Stdout belongs to the plugin handshake; logs go to stderr.
//
// With --adb-listen it is instead a plain server (no plugin handshake) that
// gives one phone an adb face: an emulated adbd that `adb connect` attaches
// (see package adbd). It stops on SIGINT or SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim"
	"github.com/pinky-gateway/pinky/drivers/sim/adbd"
	"github.com/pinky-gateway/pinky/drivers/sim/scrcpyd"
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
	if *adbListen != "" {
		return serveADB(log, d, *adbListen, *adbDevice, *adbUnauthorized)
	}
	log.Info("serving virtual phones", "phones", len(w.Phones), "world", *world)
	return sdk.Serve(d)
}

// serveADB serves one phone's adb face until SIGINT or SIGTERM.
func serveADB(log *slog.Logger, d *sim.Driver, addr, device string, unauthorized bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := adbd.Listen(addr, adbd.Config{
		Driver: d, DeviceID: device, Unauthorized: unauthorized, Logger: log,
		// app_process runs the scrcpy server, the way the Android driver
		// starts it on a real phone.
		AppProcess: scrcpyd.AppProcess(d),
	})
	if err != nil {
		return err
	}
	log.Info("serving a virtual phone over adb", "addr", srv.Addr().String(), "device", srv.Device().ID(),
		"connect", "adb connect "+srv.Addr().String())
	<-ctx.Done()
	log.Info("stopping the adb face")
	return srv.Close()
}

func loadWorld(path string) (*sim.World, error) {
	if path == "" {
		return sim.DefaultWorld()
	}
	return sim.Load(path)
}
