package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/pinky-gateway/pinky/gateway/agent"
)

// PhoneList lists the phones and who holds each.
func PhoneList() Tool {
	return newTool(toolSpec{
		name:  agent.ToolList,
		title: "List phones",
		desc: "List the person's phones: id, model, platform, online and lock state, and who holds each one " +
			"(free, yours, or another agent with its task). Start here, then phone_connect to a free phone.",
		readOnly:   true,
		idempotent: true,
		output: outputSchema([]string{"phones"},
			arrayParam("phones", "", objectParam("", "",
				stringParam("id", "", 0, 0).req(),
				stringParam("name", "", 0, 0),
				stringParam("model", "", 0, 0),
				stringParam("platform", "", 0, 0),
				boolParam("online", ""),
				boolParam("locked", ""),
				objectParam("lease", "Absent when the phone is free.",
					stringParam("agent", "", 0, 0),
					stringParam("task", "", 0, 0),
					boolParam("yours", ""),
					stringParam("since", "", 0, 0),
					stringParam("task_id", "", 0, 0),
				),
			), 0),
		),
		codes: []agent.Code{agent.CodeInternal},
	}, func(ctx context.Context, c *call, _ struct{}) (*mcp.CallToolResult, error) {
		phones, err := c.sess.Phones(ctx)
		if err != nil {
			return nil, err
		}
		if phones == nil {
			phones = []agent.Phone{}
		}
		return textResult(phoneListText(phones), map[string]any{"phones": phones}), nil
	})
}

func phoneListText(phones []agent.Phone) string {
	if len(phones) == 0 {
		return "No phones are available. Ask the person to connect one."
	}
	var b strings.Builder
	for i, p := range phones {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.ID)
		label := p.Name
		if p.Model != "" && p.Model != p.Name {
			if label != "" {
				label += " (" + p.Model + ")"
			} else {
				label = p.Model
			}
		}
		if label != "" {
			b.WriteString(" · " + label)
		}
		if p.Platform != "" {
			b.WriteString(" · " + p.Platform)
		}
		if p.Online {
			b.WriteString(" · online")
		} else {
			b.WriteString(" · offline")
		}
		if p.Locked {
			b.WriteString(" · locked")
		} else {
			b.WriteString(" · unlocked")
		}
		switch {
		case p.Lease == nil:
			b.WriteString(" · free")
		case p.Lease.Yours:
			fmt.Fprintf(&b, " · yours, task %q", p.Lease.Task)
		default:
			fmt.Fprintf(&b, " · in use by %q for %q", p.Lease.Agent, p.Lease.Task)
		}
	}
	return b.String()
}

// PhoneConnect leases a phone for a task.
func PhoneConnect() Tool {
	return newTool(toolSpec{
		name:  agent.ToolConnect,
		title: "Connect to a phone for a task",
		desc: "Take a phone for one task, so no other agent can use it until you release it, and read its whole screen. " +
			"Leave out device when exactly one phone is free. " +
			"With background, the task runs on a display of the phone made for it (when its driver can), so the person keeps using the phone meanwhile; " +
			"the phone is never woken or unlocked for it. " +
			"Call phone_release when the task is done.",
		readOnly:   true,
		idempotent: false,
		output:     observationOutput(),
		codes: []agent.Code{
			agent.CodeInvalidArgument, agent.CodeNotFound, agent.CodeLeaseHeld,
			agent.CodeDeviceOffline, agent.CodeDriverRestarting, agent.CodeDeviceLocked, agent.CodeUnsupported, agent.CodeInternal,
		},
	}, func(ctx context.Context, c *call, a connectArgs) (*mcp.CallToolResult, error) {
		if strings.TrimSpace(a.Task) == "" {
			return nil, badArg("task", "must say what you are doing")
		}
		obs, err := c.sess.Connect(ctx, agent.ConnectRequest{Device: a.Device, Task: a.Task, Apps: a.Apps, Background: a.Background})
		if err != nil {
			return nil, err
		}
		return observationResult(obs), nil
	})
}

// connectArgs are phone_connect's arguments.
type connectArgs struct {
	Device     string   `json:"device" desc:"The id from phone_list." check:"len=1..128" pattern:"{devicePattern}" schema:"unlisted"`
	Task       string   `json:"task" desc:"What you are doing, in one plain sentence the person sees and the history keeps, e.g. \"book a table for 2 at Luigi's on Friday\"." check:"required,len=1..500"`
	Apps       []string `json:"apps" desc:"The only apps this task may use: ids or labels from phone_apps." check:"len=1..256,items=50"`
	Background bool     `json:"background" desc:"Run on a background display, leaving the phone's own screen to the person. Start with phone_launch there."`
}

// PhoneRelease ends a lease.
func PhoneRelease() Tool {
	return newTool(toolSpec{
		name:  agent.ToolRelease,
		title: "Release a phone",
		desc: "Give a phone back when your task is done (or abandoned): the task ends and other agents may take the phone. " +
			"Release as soon as you no longer need the phone.",
		readOnly:   true,
		idempotent: true,
		output: outputSchema([]string{"device", "released"},
			stringParam("device", "", 0, 0),
			boolParam("released", ""),
		),
		codes: []agent.Code{agent.CodeInvalidArgument, agent.CodeNotFound, agent.CodeNotLeased, agent.CodeInternal},
	}, func(ctx context.Context, c *call, a onDevice) (*mcp.CallToolResult, error) {
		if err := c.sess.Release(ctx, a.Device); err != nil {
			return nil, err
		}
		return textResult(fmt.Sprintf("Released %s; your task on it has ended.", a.Device),
			map[string]any{"device": a.Device, "released": true}), nil
	})
}
