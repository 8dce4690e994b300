// Command pinky is the Pinky gateway's command line: the daemon, and the
// person's commands that talk to it.
package main

import (
	"context"
	"os"

	"github.com/pinky-gateway/pinky/cli"
)

func main() {
	os.Exit(cli.Execute(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}
