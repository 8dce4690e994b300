package cli

import (
	"fmt"
	"io"
	"net"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/pinky-gateway/pinky/gateway/api"
)

func newHostsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hosts",
		Short: "Pair, list and remove the phone hosts: machines whose phones this gateway serves",
		Long: `A phone host is another machine with phones plugged in, running
` + "`pinky host`" + `: it links to this gateway over mutual TLS, and its phones are
listed with this machine's. The daemon must listen for hosts
(pinky daemon --hosts-listen HOST:PORT). docs/farm.md tells the whole set-up.`,
	}
	cmd.AddCommand(newHostsAddCmd(), newHostsListCmd(), newHostsRemoveCmd())
	return cmd
}

func newHostsAddCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "add NAME",
		Short: "Offer a one-time pairing code to the phone host NAME",
		Long: `Print a pairing code for the phone host NAME: good once, for 5 minutes.
On the host, run the command it prints. The code holds the gateway's
certificate fingerprint, which the host pins, so a host never sends the
code to another machine. Pairing a name again gives that host a new
certificate and revokes the old one.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var p api.HostPairing
			if err := call(cmd.Context(), api.MethodHostAdd, api.HostName{Name: args[0]}, &p); err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), p)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "pairing code for %s (good once, until %s):\n\n  %s\n\n", show(p.Name), p.Expires.Local().Format("15:04:05"), p.Code)
			fmt.Fprintf(w, "on %s, run:\n\n  pinky host --gateway %s --pair %s\n\n", show(p.Name), gatewayAddr(p.Listen), p.Code)
			fmt.Fprintf(w, "gateway fingerprint: %s\n", p.Fingerprint)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	return cmd
}

// gatewayAddr is the address to give a host: the listen address, with a
// placeholder for this machine's name when it listens on every address.
func gatewayAddr(listen string) string {
	if host, port, err := net.SplitHostPort(listen); err == nil && (host == "" || net.ParseIP(host).IsUnspecified()) {
		return "THIS-MACHINE:" + port
	}
	return listen
}

func newHostsListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the phone hosts: online, offline since when, pending",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var hs api.Hosts
			if err := call(cmd.Context(), api.MethodHosts, nil, &hs); err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), hs)
			}
			printHosts(cmd.OutOrStdout(), hs)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	return cmd
}

func newHostsRemoveCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "remove NAME",
		Short: "Revoke the phone host NAME: its link closes and it is refused from now on",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var h api.Host
			if err := call(cmd.Context(), api.MethodHostRemove, api.HostName{Name: args[0]}, &h); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "removed %s: its certificate is revoked and its phones are no longer listed\n", show(args[0]))
			return nil
		},
	}
}

// printHosts shows the phone hosts as a table.
func printHosts(w io.Writer, hs api.Hosts) {
	fmt.Fprintf(w, "phone hosts: listening on %s, fingerprint %s\n", hs.Listen, hs.Fingerprint)
	if len(hs.Hosts) == 0 {
		fmt.Fprintln(w, "no phone hosts yet: pinky hosts add NAME")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATE\tSINCE\tVERSION\tDEVICES")
	for _, h := range hs.Hosts {
		since := "-"
		switch {
		case h.State == "pending":
			since = "code expires " + h.Expires.Local().Format("15:04:05")
		case !h.Since.IsZero():
			since = h.Since.Local().Format(time.DateTime)
		case h.State == "offline":
			since = "not linked since the daemon started"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\n", show(h.Name), h.State, since, show(dash(h.Version)), h.Devices)
	}
	tw.Flush()
	for _, h := range hs.Hosts {
		if h.LastError != "" && h.State != "online" {
			fmt.Fprintf(w, "%s: %s\n", show(h.Name), show(h.LastError))
		}
	}
}
