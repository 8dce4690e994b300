package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/pinky-gateway/pinky/drivers/ios/config"
	"github.com/pinky-gateway/pinky/drivers/ios/video"
	"github.com/pinky-gateway/pinky/drivers/ios/wda"
	"github.com/pinky-gateway/pinky/gateway/home"
)

func newIOSCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ios",
		Short: "Add, remove and list the iPhones Pinky drives",
		Long: `The iPhones Pinky drives are listed in $PINKY_HOME/ios.yaml. Each runs
WebDriverAgent (WDA), which Pinky reaches over Wi-Fi; for video, a broadcast
on the phone sends its screen as H.264 (drivers/ios/VIDEO.md), encrypted and
authenticated with a pairing secret that ` + "`pinky ios add`" + ` makes. A running
daemon picks up changes within a few seconds; no daemon needs to run.`,
	}
	cmd.AddCommand(newIOSAddCmd(), newIOSRemoveCmd(), newIOSListCmd())
	return cmd
}

// loadIOS reads the phone list, and returns its path to save it back.
func loadIOS() (string, *config.File, error) {
	dirs, err := home.Resolve()
	if err != nil {
		return "", nil, err
	}
	if err := dirs.Ensure(); err != nil {
		return "", nil, fmt.Errorf("data folder: %w", err)
	}
	path := config.Path(dirs.Home)
	f, err := config.Load(path)
	return path, f, err
}

func newIOSAddCmd() *cobra.Command {
	var (
		wdaURL, mjpeg, listen, dial, id string
		apps                            []string
	)
	cmd := &cobra.Command{
		Use:   "add NAME --wda URL [--video-listen HOST:PORT | --video-dial HOST:PORT]",
		Short: "Add an iPhone",
		Long: `Add an iPhone by its name and WebDriverAgent's address, e.g.

  pinky ios add "Ana's iPhone" --wda http://192.168.1.20:8100 --video-listen :7420

With --video-listen the driver listens there for the phone's broadcast to
connect; with --video-dial it connects to the phone. Either way a pairing
secret is made and printed once: enter it in the broadcast app on the phone.
Both ends prove with it that they are paired, and it keys the encryption of
the screen on the Wi-Fi (video protocol version 2); a broadcast app of
version 1, which sent the screen unencrypted, is refused. The secret is kept
in $PINKY_HOME/ios.yaml, readable only by you (a copy others can read is
refused); to pair again, remove the phone and add it.

--app names an installed app so agents can launch it by label
(--app com.example.shop=Shop); iOS's own apps are always listed.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, f, err := loadIOS()
			if err != nil {
				return err
			}
			name := strings.TrimSpace(args[0])
			if name == "" {
				return fmt.Errorf("the phone needs a name")
			}
			if _, taken := f.Find(name); taken {
				return fmt.Errorf("%q is in the list already (pinky ios list); remove it first to change it", name)
			}
			if id == "" {
				id = f.NewID(name)
			} else if _, taken := f.Find(id); taken {
				return fmt.Errorf("id %q is taken", id)
			}
			p := config.Phone{ID: id, Name: name, WDA: wdaURL, MJPEG: mjpeg}
			for _, a := range apps {
				bundle, label, _ := strings.Cut(a, "=")
				p.Apps = append(p.Apps, config.App{ID: strings.TrimSpace(bundle), Label: strings.TrimSpace(label)})
			}
			var secret string
			if listen != "" || dial != "" {
				raw, err := video.NewSecret()
				if err != nil {
					return err
				}
				secret = video.FormatSecret(raw)
				p.Video = &config.Video{Listen: listen, Dial: dial, Secret: secret}
			}
			f.Phones = append(f.Phones, p)
			if err := f.Check(); err != nil {
				return err
			}
			if err := config.Save(path, f); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "added %s (%s)\n", name, id)
			if secret != "" {
				fmt.Fprintf(out, "pairing secret: %s\n", secret)
				where := "connect to this computer, port " + portOf(listen)
				if dial != "" {
					where = "listen on " + dial
				}
				fmt.Fprintf(out, "in the broadcast app on the phone: device id %s, this secret, and %s\n", id, where)
				fmt.Fprintln(out, "the broadcast is encrypted with this secret (video protocol version 2); an app that speaks only version 1 is refused: update it")
				fmt.Fprintln(out, "the secret is not shown again (it is in ios.yaml, readable only by you)")
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 3*time.Second)
			defer cancel()
			if st := probeWDA(ctx, p.WDA); st != "online" {
				fmt.Fprintf(cmd.ErrOrStderr(), "pinky: %s\n", show(st))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&wdaURL, "wda", "", "WebDriverAgent's URL, e.g. http://192.168.1.20:8100 (required)")
	cmd.Flags().StringVar(&mjpeg, "mjpeg", "", "WDA's MJPEG server HOST:PORT (default: the WDA host, port 9100; off for none)")
	cmd.Flags().StringVar(&listen, "video-listen", "", "listen on HOST:PORT for the phone's broadcast")
	cmd.Flags().StringVar(&dial, "video-dial", "", "connect to the phone's broadcast at HOST:PORT")
	cmd.Flags().StringVar(&id, "id", "", "the phone's id in Pinky (default: made from the name)")
	cmd.Flags().StringArrayVar(&apps, "app", nil, "an installed app as BUNDLE_ID[=LABEL] (repeatable)")
	cmd.MarkFlagRequired("wda")
	return cmd
}

func newIOSRemoveCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "remove ID|NAME",
		Short: "Remove an iPhone from the list",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, f, err := loadIOS()
			if err != nil {
				return err
			}
			i, ok := f.Find(args[0])
			if !ok {
				return fmt.Errorf("no iPhone %q in the list (pinky ios list)", args[0])
			}
			p := f.Phones[i]
			f.Phones = append(f.Phones[:i], f.Phones[i+1:]...)
			if err := config.Save(path, f); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "removed %s (%s)\n", p.Name, p.ID)
			return nil
		},
	}
}

// iosRow is one phone as `pinky ios list` shows it.
type iosRow struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	WDA    string `json:"wda"`
	Video  string `json:"video"`
	Status string `json:"status"`
}

func newIOSListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the iPhones and whether their WebDriverAgent answers",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, f, err := loadIOS()
			if err != nil {
				return err
			}
			rows := make([]iosRow, len(f.Phones))
			ctx, cancel := context.WithTimeout(cmd.Context(), 3*time.Second)
			defer cancel()
			var wg sync.WaitGroup
			for i, p := range f.Phones {
				video := "none"
				if v := p.Video; v != nil && v.Listen != "" {
					video = "listens on " + v.Listen
				} else if v != nil {
					video = "dials " + v.Dial
				}
				rows[i] = iosRow{ID: p.ID, Name: p.Name, WDA: p.WDA, Video: video}
				wg.Go(func() { rows[i].Status = probeWDA(ctx, p.WDA) })
			}
			wg.Wait()
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(rows)
			}
			printIOS(cmd.OutOrStdout(), rows)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func printIOS(w io.Writer, rows []iosRow) {
	if len(rows) == 0 {
		fmt.Fprintln(w, "no iPhones; add one with: pinky ios add NAME --wda http://PHONE:8100")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tWDA\tVIDEO\tSTATUS")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", show(r.ID), show(r.Name), show(r.WDA), show(r.Video), show(r.Status))
	}
	tw.Flush()
}

// portOf is the port of a HOST:PORT.
func portOf(addr string) string {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return port
}

// probeWDA says whether WebDriverAgent answers at url, and what to do when
// it does not.
func probeWDA(ctx context.Context, url string) string {
	c, err := wda.New(url)
	if err != nil {
		return err.Error()
	}
	st, err := c.Status(ctx)
	switch {
	case err != nil:
		return "WDA not answering: start WebDriverAgent on the phone and check that it is on this Wi-Fi"
	case !st.Ready:
		return "WDA answers but is not ready: " + st.Message
	}
	return "online"
}
