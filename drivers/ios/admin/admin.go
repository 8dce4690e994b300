// Package admin is the person's setup of the iOS driver: adding, removing
// and listing the iPhones in $PINKY_HOME/ios.yaml. It runs as subcommands
// of pinky-driver-ios (`pinky-driver-ios add|remove|list`), which `pinky
// ios …` calls the way it calls any driver's setup (`pinky driver run ios
// …`): the gateway knows nothing of iPhones.
package admin

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/pinky-gateway/pinky/drivers/ios/config"
	"github.com/pinky-gateway/pinky/drivers/ios/video"
	"github.com/pinky-gateway/pinky/drivers/ios/wda"
	"github.com/pinky-gateway/pinky/internal/safetext"
)

// Usage is the driver's setup help.
const Usage = `Add, remove and list the iPhones Pinky drives.

The iPhones are listed in $PINKY_HOME/ios.yaml. Each runs WebDriverAgent
(WDA), which Pinky reaches over Wi-Fi; for video, a broadcast on the phone
sends its screen as H.264 (drivers/ios/VIDEO.md), encrypted and
authenticated with a pairing secret that add makes. A running daemon picks
up changes within a few seconds; no daemon needs to run.

  pinky ios add NAME --wda URL [--video-listen HOST:PORT | --video-dial HOST:PORT]
                [--mjpeg HOST:PORT|off] [--id ID] [--app BUNDLE_ID[=LABEL]]...
  pinky ios remove ID|NAME
  pinky ios list [--json]

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
(--app com.example.shop=Shop); iOS's own apps are always listed.
`

// Commands are the setup subcommands Main serves.
var Commands = []string{"add", "remove", "list"}

// Main runs a setup subcommand on the phone list in home and returns the
// exit status: 0, 1 for a failure (said on stderr), 2 for bad usage.
func Main(args []string, home string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stdout, Usage)
		return 0
	}
	if home == "" {
		fmt.Fprintln(stderr, "pinky ios: no data folder: PINKY_HOME is not set")
		return 1
	}
	var err error
	switch args[0] {
	case "add":
		err = add(args[1:], home, stdout, stderr)
	case "remove":
		err = remove(args[1:], home, stdout)
	case "list":
		err = list(args[1:], home, stdout)
	default:
		fmt.Fprintf(stderr, "pinky ios: unknown command %q: want add, remove or list\n", args[0])
		return 2
	}
	var usage usageError
	switch {
	case errors.As(err, &usage):
		fmt.Fprintf(stderr, "pinky ios %s: %s\n", args[0], safetext.Line(usage.msg))
		return 2
	case err != nil:
		fmt.Fprintf(stderr, "pinky ios %s: %s\n", args[0], safetext.Line(err.Error()))
		return 1
	}
	return 0
}

type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// flags parses a subcommand's flags, which may come before or after its
// arguments (as `pinky ios add NAME --wda URL`), and returns the arguments.
func flags(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, usagef("%v", err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return rest, nil
		}
		rest = append(rest, args[0])
		args = args[1:]
	}
}

// load reads the phone list in home.
func load(home string) (string, *config.File, error) {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return "", nil, fmt.Errorf("data folder: %w", err)
	}
	path := config.Path(home)
	f, err := config.Load(path)
	return path, f, err
}

type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

func add(args []string, home string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("add", flag.ContinueOnError)
	wdaURL := fs.String("wda", "", "WebDriverAgent's URL (required)")
	mjpeg := fs.String("mjpeg", "", "WDA's MJPEG server HOST:PORT, or off")
	listen := fs.String("video-listen", "", "listen on HOST:PORT for the phone's broadcast")
	dial := fs.String("video-dial", "", "connect to the phone's broadcast at HOST:PORT")
	id := fs.String("id", "", "the phone's id in Pinky")
	var apps repeated
	fs.Var(&apps, "app", "an installed app as BUNDLE_ID[=LABEL]")
	rest, err := flags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usagef("want one NAME (got %d arguments)", len(rest))
	}
	if *wdaURL == "" {
		return usagef(`--wda URL is required, e.g. --wda http://192.168.1.20:8100`)
	}
	path, f, err := load(home)
	if err != nil {
		return err
	}
	name := strings.TrimSpace(rest[0])
	if name == "" {
		return fmt.Errorf("the phone needs a name")
	}
	if _, taken := f.Find(name); taken {
		return fmt.Errorf("%q is in the list already (pinky ios list); remove it first to change it", name)
	}
	if *id == "" {
		*id = f.NewID(name)
	} else if _, taken := f.Find(*id); taken {
		return fmt.Errorf("id %q is taken", *id)
	}
	p := config.Phone{ID: *id, Name: name, WDA: *wdaURL, MJPEG: *mjpeg}
	for _, a := range apps {
		bundle, label, _ := strings.Cut(a, "=")
		p.Apps = append(p.Apps, config.App{ID: strings.TrimSpace(bundle), Label: strings.TrimSpace(label)})
	}
	var secret string
	if *listen != "" || *dial != "" {
		raw, err := video.NewSecret()
		if err != nil {
			return err
		}
		secret = video.FormatSecret(raw)
		p.Video = &config.Video{Listen: *listen, Dial: *dial, Secret: secret}
	}
	f.Phones = append(f.Phones, p)
	if err := f.Check(); err != nil {
		return err
	}
	if err := config.Save(path, f); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "added %s (%s)\n", safetext.Line(name), safetext.Line(*id))
	if secret != "" {
		fmt.Fprintf(stdout, "pairing secret: %s\n", secret)
		where := "connect to this computer, port " + portOf(*listen)
		if *dial != "" {
			where = "listen on " + safetext.Line(*dial)
		}
		fmt.Fprintf(stdout, "in the broadcast app on the phone: device id %s, this secret, and %s\n", safetext.Line(*id), where)
		fmt.Fprintln(stdout, "the broadcast is encrypted with this secret (video protocol version 2); an app that speaks only version 1 is refused: update it")
		fmt.Fprintln(stdout, "the secret is not shown again (it is in ios.yaml, readable only by you)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if st := probeWDA(ctx, p.WDA); st != "online" {
		fmt.Fprintf(stderr, "pinky: %s\n", safetext.Line(st))
	}
	return nil
}

func remove(args []string, home string, stdout io.Writer) error {
	fs := flag.NewFlagSet("remove", flag.ContinueOnError)
	rest, err := flags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usagef("want one ID or NAME (got %d arguments)", len(rest))
	}
	path, f, err := load(home)
	if err != nil {
		return err
	}
	i, ok := f.Find(rest[0])
	if !ok {
		return fmt.Errorf("no iPhone %q in the list (pinky ios list)", rest[0])
	}
	p := f.Phones[i]
	f.Phones = append(f.Phones[:i], f.Phones[i+1:]...)
	if err := config.Save(path, f); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "removed %s (%s)\n", safetext.Line(p.Name), safetext.Line(p.ID))
	return nil
}

// Row is one phone as list shows it.
type Row struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	WDA    string `json:"wda"`
	Video  string `json:"video"`
	Status string `json:"status"`
}

func list(args []string, home string, stdout io.Writer) error {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	rest, err := flags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return usagef("takes no arguments")
	}
	_, f, err := load(home)
	if err != nil {
		return err
	}
	rows := make([]Row, len(f.Phones))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for i, p := range f.Phones {
		video := "none"
		if v := p.Video; v != nil && v.Listen != "" {
			video = "listens on " + v.Listen
		} else if v != nil {
			video = "dials " + v.Dial
		}
		rows[i] = Row{ID: p.ID, Name: p.Name, WDA: p.WDA, Video: video}
		wg.Go(func() { rows[i].Status = probeWDA(ctx, p.WDA) })
	}
	wg.Wait()
	if *asJSON {
		b, err := json.MarshalIndent(rows, "", "  ")
		if err != nil {
			return err
		}
		_, err = stdout.Write(append(safetext.JSON(b), '\n'))
		return err
	}
	printRows(stdout, rows)
	return nil
}

func printRows(w io.Writer, rows []Row) {
	if len(rows) == 0 {
		fmt.Fprintln(w, "no iPhones; add one with: pinky ios add NAME --wda http://PHONE:8100")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tWDA\tVIDEO\tSTATUS")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", safetext.Line(r.ID), safetext.Line(r.Name), safetext.Line(r.WDA), safetext.Line(r.Video), safetext.Line(r.Status))
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
