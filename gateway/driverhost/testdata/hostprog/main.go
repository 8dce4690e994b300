// Command hostprog runs a driver host over the drivers in the folder named by
// its argument, prints {"name": pid, ...} of the running drivers as one JSON
// line, and waits to be killed. The tests SIGKILL it and check that its
// drivers exit on their own.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"

	"github.com/pinky-gateway/pinky/gateway/driverhost"
)

func main() {
	h := driverhost.New(driverhost.Config{ExeDir: os.Args[1], Logger: slog.New(slog.DiscardHandler)})
	if err := h.Start(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pids := map[string]int{}
	for _, s := range h.Drivers() {
		pids[s.Name] = s.Pid
	}
	line, _ := json.Marshal(pids)
	fmt.Println(string(line))
	select {}
}
