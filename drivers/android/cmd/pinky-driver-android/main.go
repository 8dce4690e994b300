// Command pinky-driver-android is the Pinky driver of Android phones, a
// plugin the gateway starts: it reaches phones through the person's adb
// server (ANDROID_ADB_SERVER_PORT and ADB_SERVER_SOCKET are honoured, and
// the server is started when adb is installed and none runs), and pushes
// scrcpy's server (SCRCPY_SERVER_PATH, SCRCPY_SERVER_VERSION, or the
// scrcpy package's) for video and fast input. See package android.
package main

import (
	"log/slog"
	"os"

	"github.com/pinky-gateway/pinky/drivers/android"
	"github.com/pinky-gateway/pinky/drivers/sdk"
)

func main() {
	log := sdk.Logger(slog.LevelInfo)
	// The driver's settings come from its environment, read here only.
	path, version := os.Getenv("SCRCPY_SERVER_PATH"), os.Getenv("SCRCPY_SERVER_VERSION")
	find := func() (android.ScrcpyServer, error) {
		s, err := android.FindScrcpyServer(path, version)
		if err != nil {
			return android.ScrcpyServer{}, err // found but unusable: none
		}
		return s, nil
	}
	scrcpy, noScrcpy := find()
	// The person may install scrcpy while the driver runs: it looks again
	// while it has none, and its phones then serve video.
	d, err := android.New(android.Config{Logger: log, Scrcpy: scrcpy, NoScrcpy: noScrcpy, FindScrcpy: find})
	if err != nil {
		log.Error("pinky-driver-android", "err", err)
		os.Exit(1)
	}
	defer d.Close()
	if err := sdk.Serve(d); err != nil {
		log.Error("pinky-driver-android", "err", err)
		os.Exit(1)
	}
}
