package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"

	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/spf13/cobra"
)

func newOpenCmd() *cobra.Command {
	var noBrowser bool
	cmd := &cobra.Command{
		Use:   "open",
		Short: "Open the web console: prints a one-time login link and opens it in your browser",
		Long: `Open the web console of the running daemon: the live mirror of each phone,
take-over with mouse and keyboard, approvals, the history with its
recordings, and the settings. The link logs one browser in, once, within two
minutes; run it again for another browser.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var l api.ConsoleLink
			if err := call(cmd.Context(), api.MethodConsoleLink, nil, &l); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), l.URL)
			if noBrowser {
				return nil
			}
			if err := openBrowser(l.URL); err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "could not open a browser (%v); open the link above\n", err)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&noBrowser, "no-browser", false, "only print the link")
	return cmd
}

// openBrowser opens url with the desktop's opener, without waiting for it.
func openBrowser(url string) error {
	name, args := "xdg-open", []string{url}
	switch runtime.GOOS {
	case "darwin":
		name = "open"
	case "windows": // not `start`, whose shell would read the link's & and ^
		name, args = "rundll32", []string{"url.dll,FileProtocolHandler", url}
	}
	if os.Getenv("PINKY_BROWSER") != "" { // tests and unusual desktops
		name, args = os.Getenv("PINKY_BROWSER"), []string{url}
	}
	c := exec.Command(name, args...)
	if err := c.Start(); err != nil {
		return err
	}
	go c.Wait()
	return nil
}

func newExportCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "export TASK... DIR",
		Short: "Write tasks' report (steps, diffs, screenshots, approvals, recording) into a folder",
		Long: `Write a self-contained report of one or more tasks into DIR, which must not
exist or be empty: index.html opens from disk in a browser, with every step,
its diff and its before/after screenshots, the approvals, and the task's
recording with a mark per step that seeks the video.`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := filepath.Abs(args[len(args)-1])
			if err != nil {
				return err
			}
			var r api.ExportResult
			if err := call(cmd.Context(), api.MethodExport, api.ExportParams{Tasks: args[:len(args)-1], Dir: dir}, &r); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\n", r.Index)
			return nil
		},
	}
}

func newSettingsCmd() *cobra.Command {
	var asJSON bool
	var recording, readOnly, retention string
	cmd := &cobra.Command{
		Use:   "settings",
		Short: "Show or change the settings: recording, retention, read-only mode",
		Long: `Show the settings, or change the ones named:
  --recording on|off     record each agent task's screen (on by default)
  --retention-days N     delete tasks that ended more than N days ago, with
                         their screenshots and recordings (30; 0 keeps all)
  --read-only on|off     agents may read the phones but not act on them
A change applies at once and survives restarts.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var s api.Settings
			if err := call(cmd.Context(), api.MethodSettings, nil, &s); err != nil {
				return err
			}
			changed := false
			for _, f := range []struct {
				val string
				to  *bool
				fl  string
			}{{recording, &s.Recording, "--recording"}, {readOnly, &s.ReadOnly, "--read-only"}} {
				switch f.val {
				case "":
				case "on":
					*f.to, changed = true, true
				case "off":
					*f.to, changed = false, true
				default:
					return fmt.Errorf("%s %q: want on or off", f.fl, f.val)
				}
			}
			if retention != "" {
				n, err := strconv.Atoi(retention)
				if err != nil {
					return errors.New("--retention-days wants a number of days (0 keeps everything)")
				}
				s.RetentionDays, changed = n, true
			}
			if changed {
				if err := call(cmd.Context(), api.MethodSetSettings, s, &s); err != nil {
					return err
				}
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), s)
			}
			keep := fmt.Sprintf("%d days", s.RetentionDays)
			if s.RetentionDays == 0 {
				keep = "forever"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "recording  %s\nretention  %s\nread-only  %s\n", onOff(s.Recording), keep, onOff(s.ReadOnly))
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	cmd.Flags().StringVar(&recording, "recording", "", "on or off")
	cmd.Flags().StringVar(&readOnly, "read-only", "", "on or off")
	cmd.Flags().StringVar(&retention, "retention-days", "", "days to keep ended tasks (0: forever)")
	return cmd
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
