package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/pinky-gateway/pinky/gateway/pin"
)

// pinStore is the keychain store the pin commands use; tests replace it.
var pinStore = pin.OS

func newPinCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pin",
		Short: "Save or forget a phone's PIN in the OS keychain, for automatic unlock",
		Long: `Save a phone's PIN in the OS keychain (macOS Keychain, Windows Credential
Manager, a Secret Service such as GNOME Keyring or KWallet on Linux), under
service "pinky" and the device id. A daemon started with --auto-unlock uses
it to unlock a locked phone an agent acts on: once per lock, never retrying
a PIN the phone refused, never logging or recording it.

Where no keychain is reachable these commands refuse: Pinky never stores a
PIN in a plain file. They talk to the keychain directly: no daemon needed.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "set DEVICE",
		Short: "Save the PIN of a phone (read from stdin, not echoed)",
		Long: `Save the PIN of a phone in the OS keychain, replacing a saved one. The PIN is
read from the first line of stdin (not echoed on a terminal), so that it
stays out of your shell history. Run it again after the phone refused a
saved PIN: the daemon does not retry a refused one.

  pinky pin set sim-android-1        # then type the PIN and press Enter`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := readPIN(cmd)
			if err != nil {
				return err
			}
			if err := pinStore().Set(args[0], p); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "saved the PIN of %s in the keychain (used by pinky daemon --auto-unlock)\n", args[0])
			return nil
		},
	}, &cobra.Command{
		Use:   "forget DEVICE",
		Short: "Remove the saved PIN of a phone from the OS keychain",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			err := pinStore().Forget(args[0])
			if errors.Is(err, pin.ErrNoPIN) {
				return fmt.Errorf("no PIN is saved for %s", args[0])
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "forgot the PIN of %s\n", args[0])
			return nil
		},
	})
	return cmd
}

// readPIN reads a PIN: without echo from a terminal, else the first line of
// stdin (at most 64 bytes).
func readPIN(cmd *cobra.Command) (string, error) {
	var line string
	if f, ok := cmd.InOrStdin().(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(cmd.ErrOrStderr(), "PIN: ")
		b, err := term.ReadPassword(int(f.Fd())) // not echoed
		fmt.Fprintln(cmd.ErrOrStderr())
		if err != nil {
			return "", fmt.Errorf("reading the PIN: %w", err)
		}
		line = string(b)
	} else {
		var err error
		line, err = bufio.NewReader(io.LimitReader(cmd.InOrStdin(), 64)).ReadString('\n')
		if err != nil && line == "" {
			return "", fmt.Errorf("reading the PIN from stdin: %w", err)
		}
	}
	return strings.TrimSpace(line), nil
}
