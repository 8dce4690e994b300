// Command demo plays an agent on the virtual phones, end to end: it spawns
// `pinky mcp` exactly as an agent host does (a private PINKY_HOME, the
// virtual phones on), lists the phones, connects with a task, asks the
// person to unlock the phone (and plays the person: `pinky unlock`, then
// `pinky hand-back`), opens Messages, replies to a contact (sending asks
// the person: the script reads the card with `pinky approvals` and approves
// it), goes home and releases; then it prints `pinky history show` for the
// task and exports its report, with the task's screen recording, to
// $TMPDIR/pinky-demo-report. Every call and its result are printed.
//
//	go run ./scripts/demo bin/pinky
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

const device = "sim-android-1"

// thinkTime is the pause before each of the agent's calls.
const thinkTime = 600 * time.Millisecond

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: demo PATH-TO-PINKY")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// demo is the agent side: an MCP client and a printer.
type demo struct {
	pinky string
	env   []string
	c     *client.Client
	ctx   context.Context
}

func run(pinky string) error {
	pinky, err := filepath.Abs(pinky)
	if err != nil {
		return err
	}
	home, err := os.MkdirTemp("", "pinky-demo-")
	if err != nil {
		return err
	}
	if os.Getenv("DEMO_KEEP") == "" {
		defer os.RemoveAll(home)
	}
	// Virtual phones only: the Android driver would start an adb server.
	env := append(os.Environ(), "PINKY_HOME="+home, "PINKY_SIM=1", "XDG_RUNTIME_DIR=", "PINKY_DISABLE_DRIVERS=android,ios")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	d := &demo{pinky: pinky, env: env, ctx: ctx}
	defer d.person("stop-daemon")
	fmt.Printf("PINKY_HOME=%s\n$ %s mcp   (spawned as an agent host would)\n", home, pinky)
	c, err := client.NewStdioMCPClient(pinky, env, "mcp")
	if err != nil {
		return err
	}
	defer c.Close()
	d.c = c
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "pinky-demo", Version: "1.0"}
	res, err := c.Initialize(ctx, init)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	fmt.Printf("connected to %s %s\n", res.ServerInfo.Name, res.ServerInfo.Version)

	if _, err := d.call("phone_list", nil); err != nil {
		return err
	}
	connect, err := d.call("phone_connect", map[string]any{"device": device, "task": "Reply to Ben that I got the tickets"})
	if err != nil {
		return err
	}
	task := taskID(connect)

	// The phone is locked: the agent hands it to the person, who unlocks it.
	asked := make(chan error, 1)
	go func() {
		_, err := d.call("phone_ask_person", map[string]any{"device": device, "message": "Please unlock the phone, then hand it back."})
		asked <- err
	}()
	time.Sleep(thinkTime + 500*time.Millisecond) // the agent thinks, then asks
	if err := d.personWithInput("1234\n", "unlock", device); err != nil {
		return err
	}
	if err := d.person("hand-back", device); err != nil {
		return err
	}
	if err := <-asked; err != nil {
		return err
	}

	for _, step := range []struct {
		tool string
		args map[string]any
	}{
		{"phone_launch", map[string]any{"device": device, "app": "Messages"}},
		{"phone_tap", map[string]any{"device": device, "text": "Ben Okafor"}},
		{"phone_type", map[string]any{"device": device, "field": "Text message", "text": "Yes, got them! See you Friday."}},
	} {
		if _, err := d.call(step.tool, step.args); err != nil {
			return err
		}
	}

	// Sending a message commits: the policy asks the person. The agent's
	// call waits while the person reads the card and approves it.
	sent := make(chan error, 1)
	go func() {
		_, err := d.call("phone_tap", map[string]any{"device": device, "text": "Send"})
		sent <- err
	}()
	id, err := d.waitForCard()
	if err != nil {
		return err
	}
	if err := d.person("approvals"); err != nil {
		return err
	}
	if err := d.person("approve", id); err != nil {
		return err
	}
	if err := <-sent; err != nil {
		return err
	}
	for _, step := range []struct {
		tool string
		args map[string]any
	}{
		{"phone_key", map[string]any{"device": device, "key": "home"}},
		{"phone_release", map[string]any{"device": device}},
	} {
		if _, err := d.call(step.tool, step.args); err != nil {
			return err
		}
	}
	if task == "" {
		return fmt.Errorf("no task id in the connect result")
	}
	if err := d.person("history", "show", task); err != nil {
		return err
	}
	return d.export(task)
}

// export writes the task's report, with its screen recording, into a
// folder that outlives the demo's data folder.
func (d *demo) export(task string) error {
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var tasks []struct{ Recording bool }
		out, err := d.command("history", "--json").Output()
		if err == nil && json.Unmarshal(out, &tasks) == nil && len(tasks) > 0 && tasks[0].Recording {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the task has no recording after 5 s")
		}
	}
	report := filepath.Join(os.TempDir(), "pinky-demo-report")
	if err := os.RemoveAll(report); err != nil {
		return err
	}
	if err := d.person("export", task, report); err != nil {
		return err
	}
	fmt.Printf("\nOpen %s in a browser: the steps, their screenshots, the approval and the screen recording.\n", filepath.Join(report, "index.html"))
	return nil
}

// waitForCard waits until an approval is open and returns its id, reading
// the person's local API as their client does.
func (d *demo) waitForCard() (string, error) {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		cmd := exec.CommandContext(d.ctx, d.pinky, "approvals", "--json")
		cmd.Env = d.env
		out, err := cmd.Output()
		if err == nil {
			var cards []struct{ ID string }
			if json.Unmarshal(out, &cards) == nil && len(cards) > 0 {
				return cards[0].ID, nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return "", fmt.Errorf("no approval opened for the Send tap")
}

// call makes one tool call and prints it and its result. A tool error is
// printed and returned.
func (d *demo) call(tool string, args map[string]any) (*mcp.CallToolResult, error) {
	// A model thinks between calls; so does the demo, briefly, which also
	// gives the task's screen recording something to show.
	time.Sleep(thinkTime)
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	a, _ := json.Marshal(args)
	fmt.Printf("\n\033[1m→ %s %s\033[0m\n", tool, a)
	start := time.Now()
	res, err := d.c.CallTool(d.ctx, req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	for _, c := range res.Content {
		if t, ok := c.(mcp.TextContent); ok {
			for _, line := range strings.Split(strings.TrimRight(t.Text, "\n"), "\n") {
				fmt.Printf("  %s\n", line)
			}
		}
	}
	fmt.Printf("  (%s)\n", time.Since(start).Round(time.Millisecond))
	if res.IsError {
		return res, fmt.Errorf("%s answered an error", tool)
	}
	return res, nil
}

// person runs a pinky command as the person would.
func (d *demo) person(args ...string) error { return d.personWithInput("", args...) }

func (d *demo) personWithInput(input string, args ...string) error {
	shown := strings.Join(args, " ")
	if input != "" {
		shown = "echo **** | pinky " + shown
	} else {
		shown = "pinky " + shown
	}
	fmt.Printf("\n\033[1m[person] $ %s\033[0m\n", shown)
	cmd := d.command(args...)
	cmd.Stdin = strings.NewReader(input)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	return cmd.Run()
}

// command is pinky with the demo's data folder, run quietly.
func (d *demo) command(args ...string) *exec.Cmd {
	cmd := exec.CommandContext(d.ctx, d.pinky, args...)
	cmd.Env = d.env
	return cmd
}

var taskRE = regexp.MustCompile(`"task_id":\s*"([^"]+)"`)

// taskID finds the task id in a connect result's structured content.
func taskID(res *mcp.CallToolResult) string {
	b, _ := json.Marshal(res.StructuredContent)
	if m := taskRE.FindSubmatch(b); m != nil {
		return string(m[1])
	}
	for _, c := range res.Content {
		if t, ok := c.(mcp.TextContent); ok {
			if m := regexp.MustCompile(`\bt_[0-9a-f]{16}\b`).FindString(t.Text); m != "" {
				return m
			}
		}
	}
	return ""
}
