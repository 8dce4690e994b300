// Command pinky-driver-sim serves Pinky's virtual phones as a driver plugin.
// Stdout belongs to the plugin handshake; logs go to stderr.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim"
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
	log.Info("serving virtual phones", "phones", len(w.Phones), "world", *world)
	return sdk.Serve(d)
}

func loadWorld(path string) (*sim.World, error) {
	if path == "" {
		return sim.DefaultWorld()
	}
	return sim.Load(path)
}
