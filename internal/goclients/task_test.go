package goclients

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// TestClientsDoATask: each client library, over stdio and over HTTP,
// speaking the protocol version it asks for by itself, lists the tools and
// does a real task on the virtual phone, one agent after the other.
func TestClientsDoATask(t *testing.T) {
	r := newRig(t)
	for _, c := range connectors {
		for _, tr := range r.transports() {
			t.Run(c.name+"/"+tr.name, func(t *testing.T) {
				ctx := testContext(t)
				a, err := c.connect(ctx, tr.conn, "")
				if err != nil {
					t.Fatal(err)
				}
				defer a.close()
				v := a.version()
				t.Logf("negotiated protocol version %s", v)
				if v < "2025-06-18" {
					t.Errorf("negotiated %s; want a recent version for a client that asked for its newest", v)
				}
				tools, err := a.tools(ctx)
				if err != nil {
					t.Fatalf("tools/list: %v", err)
				}
				doTask(ctx, t, a, checkTools(t, v, tools))
			})
		}
	}
}

// doTask connects to the phone, reads it, taps, and lets it go, checking
// the answers and that each failure is a tool result whose text starts
// with its stable code.
func doTask(ctx context.Context, t *testing.T, a agent, schemas map[string]*jsonschema.Resolved) {
	t.Helper()
	v := a.version()
	call := func(name string, args map[string]any) result {
		t.Helper()
		res, err := a.call(ctx, name, args)
		if err != nil {
			t.Fatalf("%s: %v; want a result", name, err)
		}
		checkStructured(t, v, name, res, schemas)
		return res
	}
	ok := func(name string, args map[string]any, want string) {
		t.Helper()
		if res := call(name, args); res.IsError || !strings.Contains(res.Text, want) {
			t.Errorf("%s %v: got error %v, %q; want success with %q", name, args, res.IsError, res.Text, want)
		}
	}
	fails := func(name string, args map[string]any, code string) {
		t.Helper()
		res := call(name, args)
		m := codeRE.FindStringSubmatch(res.Text)
		if !res.IsError || m == nil || m[1] != code {
			t.Errorf("%s %v: got error %v, %q; want an error result starting %q", name, args, res.IsError, res.Text, code+": ")
		}
	}
	on := func(kv ...any) map[string]any {
		m := map[string]any{"device": device}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}

	ok("phone_list", nil, device)
	fails("phone_observe", on(), "not_leased")
	fails("phone_tap", on("bogus", 1), "invalid_argument")
	ok("phone_connect", on("task", "goclients: open the Settings app"), device)
	ok("phone_key", on("key", "home"), "")
	ok("phone_observe", on("full", true), "Settings")
	ok("phone_tap", on("text", "Settings"), "Network & internet")
	fails("phone_tap", on("ref", 999999), "not_found")
	ok("phone_release", on(), "")
	fails("phone_tap", on("text", "Wi-Fi"), "not_leased")
}

// checkStructured checks a result's structured content: absent under a
// protocol version without it, present for the tools that read the
// screen or the phones under one with it, and valid by the tool's output
// schema whenever it is there.
func checkStructured(t *testing.T, v, name string, res result, schemas map[string]*jsonschema.Resolved) {
	t.Helper()
	has := res.Structured != nil && string(res.Structured) != "null"
	switch {
	case has && !hasStructured(v):
		t.Errorf("%s under %s: structured content %s; want none, the version has none", name, v, res.Structured)
	case !has && hasStructured(v) && !res.IsError && (name == "phone_list" || name == "phone_observe"):
		t.Errorf("%s under %s: no structured content; want it", name, v)
	}
	if !has || res.IsError {
		return
	}
	rs := schemas[name]
	if rs == nil {
		t.Errorf("%s: structured content but no output schema to check it by", name)
		return
	}
	var instance any
	if err := json.Unmarshal(res.Structured, &instance); err != nil {
		t.Fatal(err)
	}
	if err := rs.Validate(instance); err != nil {
		t.Errorf("%s: structured content does not match the output schema: %v\n%s", name, err, res.Structured)
	}
}
