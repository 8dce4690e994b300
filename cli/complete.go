package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/gateway/policy"
	"github.com/pinky-gateway/pinky/internal/safetext"
)

// Shell completion (`pinky completion bash|zsh|fish|powershell`, cobra's
// own command) offers the ids that only the running daemon knows: devices,
// tasks, approvals and drivers, asked through the local API. Without a
// daemon a completion offers nothing and prints nothing: the shell must not
// show an error in the middle of a command line.

// completeTimeout bounds a completion's call to the daemon: the shell waits
// for it, and a stuck daemon must not freeze the person's prompt.
const completeTimeout = 2 * time.Second

// descWidth is the longest description a candidate gets, in runes.
const descWidth = 60

// completeArgs names, by command path, the completion of each command's
// arguments.
var completeArgs = []struct {
	path string
	fn   cobra.CompletionFunc
}{
	{"takeover", firstArg(completeDevices)},
	{"handback", firstArg(completeDevices)},
	{"unlock", firstArg(completeDevices)},
	{"stop", firstArg(completeDevices)},
	{"driver screen", firstArg(completeDevices)},
	{"pin set", firstArg(completeDevices)},
	{"pin forget", firstArg(completeDevices)},
	{"history show", firstArg(completeTasks)},
	{"export", completeExport},
	{"approve", firstArg(completeApprovals)},
	{"deny", firstArg(completeApprovals)},
	{"driver restart", firstArg(completeDrivers)},
	{"driver run", completeDriverRun},
}

// completeFlags names, by command path and flag, the completion of each
// flag's value.
var completeFlags = []struct {
	path, flag string
	fn         cobra.CompletionFunc
}{
	{"history", "device", completeDevices},
	{"policy check", "device", completeDevices},
	{"policy check", "action", fixed(policy.Actions)},
	{"policy check", "commit", fixed(policy.Commits)},
}

// attachCompletions gives the commands of the tree under root their
// completions. It panics when a command or flag it names is missing: the
// tree is built in code, so that is a bug the tests catch.
func attachCompletions(root *cobra.Command) {
	for _, a := range completeArgs {
		find(root, a.path).ValidArgsFunction = a.fn
	}
	for _, f := range completeFlags {
		if err := find(root, f.path).RegisterFlagCompletionFunc(f.flag, f.fn); err != nil {
			panic(fmt.Sprintf("completion of %s --%s: %v", f.path, f.flag, err))
		}
	}
}

// find returns the command at path under root.
func find(root *cobra.Command, path string) *cobra.Command {
	cmd, rest, err := root.Find(strings.Fields(path))
	if err != nil || len(rest) > 0 || cmd == root {
		panic(fmt.Sprintf("completion of %q: no such command", path))
	}
	return cmd
}

// firstArg completes the first argument with fn and nothing after it.
func firstArg(fn cobra.CompletionFunc) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return fn(cmd, args, toComplete)
	}
}

// fixed completes with a fixed list of values.
func fixed(values []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var cs []cobra.Completion
		for _, v := range values {
			if strings.HasPrefix(v, toComplete) {
				cs = append(cs, v)
			}
		}
		return cs, cobra.ShellCompDirectiveNoFileComp
	}
}

// ask makes one call to the daemon for a completion; false when there is
// no daemon or it fails, which the completion shows as nothing.
func ask(cmd *cobra.Command, method string, params, result any) bool {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, completeTimeout)
	defer cancel()
	return call(ctx, method, params, result) == nil
}

// candidate is one id with its description, if it starts with prefix and
// is not already among the arguments.
func candidate(cs []cobra.Completion, id, desc, prefix string, args []string) []cobra.Completion {
	if id == "" || !strings.HasPrefix(id, prefix) || slices.Contains(args, id) {
		return cs
	}
	// The description may come from an agent or a phone: one line, no
	// controls, short.
	desc = strings.Join(strings.Fields(safetext.Line(desc)), " ")
	if utf8.RuneCountInString(desc) > descWidth {
		desc = string([]rune(desc)[:descWidth-1]) + "…"
	}
	return append(cs, cobra.CompletionWithDesc(id, desc))
}

// completeDevices offers the daemon's devices.
func completeDevices(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var ds []api.Device
	if !ask(cmd, api.MethodDevices, nil, &ds) {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var cs []cobra.Completion
	for _, d := range ds {
		name := d.Name
		if name == "" {
			name = d.Model
		}
		cs = candidate(cs, d.ID, strings.TrimSpace(name+" "+d.Platform+", "+d.State), toComplete, args)
	}
	return cs, cobra.ShellCompDirectiveNoFileComp
}

// tasks offers the daemon's latest tasks.
func tasks(cmd *cobra.Command, args []string, toComplete string) []cobra.Completion {
	var ts []api.Task
	if !ask(cmd, api.MethodTasks, api.TaskFilter{Limit: 50}, &ts) {
		return nil
	}
	var cs []cobra.Completion
	for _, t := range ts {
		cs = candidate(cs, t.ID, t.Agent+" on "+t.Device+": "+t.Text, toComplete, args)
	}
	return cs
}

// completeTasks offers the daemon's latest tasks.
func completeTasks(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return tasks(cmd, args, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeExport offers tasks for `export TASK... DIR`: the first argument
// is a task; after it, a task or the folder, so the shell falls back to
// file names when no task matches.
func completeExport(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	cs := tasks(cmd, args, toComplete)
	if len(args) == 0 {
		return cs, cobra.ShellCompDirectiveNoFileComp
	}
	return cs, cobra.ShellCompDirectiveDefault
}

// completeApprovals offers the pending approvals.
func completeApprovals(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var cards []api.Card
	if !ask(cmd, api.MethodApprovals, api.ApprovalFilter{}, &cards) {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var cs []cobra.Completion
	for _, c := range cards {
		what := c.Summary
		if what == "" {
			what = c.Tool + " " + c.Target
		}
		cs = candidate(cs, c.ID, c.Agent+" on "+c.Device+": "+what, toComplete, args)
	}
	return cs, cobra.ShellCompDirectiveNoFileComp
}

// completeDrivers offers the daemon's drivers.
func completeDrivers(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var ds []api.Driver
	if !ask(cmd, api.MethodDrivers, nil, &ds) {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var cs []cobra.Completion
	for _, d := range ds {
		cs = candidate(cs, d.Name, d.State, toComplete, args)
	}
	return cs, cobra.ShellCompDirectiveNoFileComp
}

// completeDriverRun offers a driver for `driver run NAME [ARGS...]`; the
// arguments after it are the driver's own, so the shell's default applies.
func completeDriverRun(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveDefault
	}
	return completeDrivers(cmd, args, toComplete)
}
