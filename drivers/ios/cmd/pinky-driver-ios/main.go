// Command pinky-driver-ios is the Pinky driver of iPhones, a plugin the
// gateway starts. It drives the phones listed in $PINKY_HOME/ios.yaml
// ($PINKY_IOS_CONFIG names another file) through WebDriverAgent, and
// receives their screens as H.264 from a broadcast on each phone. See
// package ios and drivers/ios/VIDEO.md.
//
// Run with a setup command it edits that list instead (package admin):
//
//	pinky-driver-ios add|remove|list …   (what `pinky ios …` runs)
package main

import (
	"errors"
	"log/slog"
	"os"
	"slices"

	"github.com/pinky-gateway/pinky/drivers/ios"
	"github.com/pinky-gateway/pinky/drivers/ios/admin"
	"github.com/pinky-gateway/pinky/drivers/ios/config"
	"github.com/pinky-gateway/pinky/drivers/sdk"
)

func main() {
	if len(os.Args) > 1 && (slices.Contains(admin.Commands, os.Args[1]) || os.Args[1] == "help" || os.Args[1] == "--help" || os.Args[1] == "-h") {
		os.Exit(admin.Main(os.Args[1:], os.Getenv("PINKY_HOME"), os.Stdout, os.Stderr))
	}
	log := sdk.Logger(slog.LevelInfo)
	path, err := listPath()
	if err == nil {
		var d *ios.Driver
		if d, err = ios.New(ios.Config{Path: path, Logger: log}); err == nil {
			log.Info("reading the phone list", "path", path)
			err = sdk.Serve(d)
			d.Close()
		}
	}
	if err != nil {
		log.Error("pinky-driver-ios", "err", err)
		os.Exit(1)
	}
}

// listPath is $PINKY_IOS_CONFIG, else ios.yaml in $PINKY_HOME, which the
// gateway passes to every driver it starts.
func listPath() (string, error) {
	if p := os.Getenv("PINKY_IOS_CONFIG"); p != "" {
		return p, nil
	}
	if h := os.Getenv("PINKY_HOME"); h != "" {
		return config.Path(h), nil
	}
	return "", errors.New("no phone list: the gateway passes PINKY_HOME; run by hand, set PINKY_HOME or PINKY_IOS_CONFIG")
}
