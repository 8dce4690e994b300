// Command pinky-driver-fake serves fakedriver; its name is the part of the
// executable's name after "pinky-driver-" (build it, or link it, under
// several names to run several).
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/driverhost/testdata/fakedriver"
)

func main() {
	name := strings.TrimPrefix(filepath.Base(os.Args[0]), "pinky-driver-")
	fmt.Fprintf(os.Stderr, "fake driver %s starting\n", name)
	if err := sdk.Serve(fakedriver.FromEnv(name)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
