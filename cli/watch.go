package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/internal/safetext"
)

// watchWait is how long one events.since call waits for an event.
const watchWait = 25 * time.Second

func newWatchCmd() *cobra.Command {
	var asJSON bool
	var since uint64
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "Follow what happens: approvals, take-overs, leases, steps, phones",
		Long: `Print the daemon's events as they happen, one line each: time, number,
kind, phone, agent, task, then details as key=value. Steps show the tool and
its outcome, never what was typed or read. Stop with Ctrl-C.

Events are numbered from 1 each time the daemon starts. --since N prints
the events after N first (the daemon keeps the last 10 000): a watcher that
restarts with the last number it printed misses nothing. A "gap" line says
that events were lost in between.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			c, _, err := dial(ctx)
			if err != nil {
				return err
			}
			defer c.Close()
			after := since
			if !cmd.Flags().Changed("since") { // live events only
				var p api.EventPage
				if err := c.Call(ctx, api.MethodEvents, api.EventsParams{Max: 1}, &p); err != nil {
					return err
				}
				after = p.Last
			}
			out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
			for {
				var p api.EventPage
				err := c.Call(ctx, api.MethodEvents, api.EventsParams{After: after, WaitMS: int(watchWait / time.Millisecond)}, &p)
				if ctx.Err() != nil {
					return nil // Ctrl-C
				}
				if err != nil {
					fmt.Fprintf(errw, "pinky: the daemon went away (%v); the last event printed is %d\n", err, after)
					return exitError{1}
				}
				for _, e := range p.Events {
					if err := printEvent(out, e, asJSON); err != nil {
						if errors.Is(err, syscall.EPIPE) {
							return nil // the reader is gone, as with `| head`
						}
						return err
					}
				}
				after = p.Next
				if p.Closed {
					fmt.Fprintf(errw, "pinky: the daemon is stopping; the last event printed is %d\n", after)
					return exitError{1}
				}
			}
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per line")
	cmd.Flags().Uint64Var(&since, "since", 0, "print the events after this number first (0: all the daemon kept)")
	return cmd
}

// printEvent writes one event as a line.
func printEvent(w io.Writer, e api.Event, asJSON bool) error {
	if asJSON {
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		_, err = w.Write(append(safetext.JSON(b), '\n'))
		return err
	}
	// Every field may come from an agent or a phone: show keeps the event
	// on its one line and the terminal as it was.
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %6d  %-16s  %-14s  %-12s  %s", e.Time.Local().Format("15:04:05.000"), e.Seq, show(e.Kind), show(dash(e.Device)),
		show(dash(e.Agent)), show(dash(e.Task)))
	for _, k := range slices.Sorted(maps.Keys(e.Data)) {
		v := e.Data[k]
		v = show(v)
		if v == "" || strings.ContainsAny(v, " \"=") {
			v = `"` + strings.ReplaceAll(v, `"`, `\"`) + `"`
		}
		fmt.Fprintf(&b, "  %s=%s", show(k), v)
	}
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}
