package goclients

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"strings"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// agent is what a test needs of an MCP client, whichever library it is.
type agent interface {
	// version is the protocol version the session negotiated.
	version() string
	tools(ctx context.Context) ([]toolDef, error)
	call(ctx context.Context, name string, args map[string]any) (result, error)
	close() error
}

// toolDef is a tool as a client got it from tools/list.
type toolDef struct {
	Name   string
	Input  json.RawMessage // nil when absent
	Output json.RawMessage // nil when absent
}

// result is a tool result as a client got it.
type result struct {
	Text       string
	IsError    bool
	Structured json.RawMessage // nil when absent
}

// connection says how an agent reaches the daemon: over stdio by running
// cmd (`pinky mcp`), or over HTTP at url with the bearer token.
type connection struct {
	cmd   func() *exec.Cmd
	url   string
	token string
}

// clientInfo names the agents, so that the person sees which library it was.
func clientInfo(lib string) (name, version string) { return "goclients-" + lib, "1.0" }

// sdkAgent is the official Go SDK's client.
type sdkAgent struct{ cs *sdk.ClientSession }

// connectSDK connects the Go SDK's client; version "" lets it ask for its
// newest.
func connectSDK(ctx context.Context, conn connection, version string) (agent, error) {
	name, v := clientInfo("go-sdk")
	c := sdk.NewClient(&sdk.Implementation{Name: name, Version: v}, nil)
	var t sdk.Transport
	if conn.url != "" {
		t = &sdk.StreamableClientTransport{Endpoint: conn.url, MaxRetries: -1,
			HTTPClient: &http.Client{Transport: bearer{conn.token}}}
	} else {
		t = &sdk.CommandTransport{Command: conn.cmd()}
	}
	cs, err := c.Connect(ctx, t, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return nil, fmt.Errorf("go-sdk connect: %w", err)
	}
	return sdkAgent{cs}, nil
}

func (a sdkAgent) version() string { return a.cs.InitializeResult().ProtocolVersion }
func (a sdkAgent) close() error    { return a.cs.Close() }

func (a sdkAgent) tools(ctx context.Context) ([]toolDef, error) {
	var out []toolDef
	for tool, err := range a.cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		d := toolDef{Name: tool.Name}
		if tool.InputSchema != nil {
			d.Input, _ = json.Marshal(tool.InputSchema)
		}
		if tool.OutputSchema != nil {
			d.Output, _ = json.Marshal(tool.OutputSchema)
		}
		out = append(out, d)
	}
	return out, nil
}

func (a sdkAgent) call(ctx context.Context, name string, args map[string]any) (result, error) {
	res, err := a.cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return result{}, err
	}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	r := result{Text: strings.Join(texts, "\n"), IsError: res.IsError}
	if res.StructuredContent != nil {
		r.Structured, _ = json.Marshal(res.StructuredContent)
	}
	return r, nil
}

// mcpgoAgent is mcp-go's client.
type mcpgoAgent struct{ c *mcpgoclient.Client }

// connectMCPGo connects mcp-go's client; version "" lets it ask for its
// newest.
func connectMCPGo(ctx context.Context, conn connection, version string) (agent, error) {
	var (
		c   *mcpgoclient.Client
		err error
	)
	var opts []mcpgoclient.ClientOption
	if version != "" {
		opts = append(opts, mcpgoclient.WithProtocolVersion(version))
	}
	if conn.url != "" {
		var t *mcpgotransport.StreamableHTTP
		t, err = mcpgotransport.NewStreamableHTTP(conn.url, mcpgotransport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + conn.token}))
		if err == nil {
			c = mcpgoclient.NewClient(t, opts...)
			err = c.Start(ctx)
		}
	} else {
		t := mcpgotransport.NewStdioWithOptions("pinky", nil, []string{"mcp"},
			mcpgotransport.WithCommandFunc(func(context.Context, string, []string, []string) (*exec.Cmd, error) { return conn.cmd(), nil }))
		if err = t.Start(ctx); err == nil {
			c = mcpgoclient.NewClient(t, opts...)
			err = c.Start(ctx)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("mcp-go start: %w", err)
	}
	name, v := clientInfo("mcp-go")
	if _, err := c.Initialize(ctx, mcpgo.InitializeRequest{Params: mcpgo.InitializeParams{
		ProtocolVersion: version, ClientInfo: mcpgo.Implementation{Name: name, Version: v},
	}}); err != nil {
		c.Close()
		return nil, fmt.Errorf("mcp-go initialize: %w", err)
	}
	return mcpgoAgent{c}, nil
}

func (a mcpgoAgent) version() string { return a.c.ProtocolVersion() }
func (a mcpgoAgent) close() error    { return a.c.Close() }

func (a mcpgoAgent) tools(ctx context.Context) ([]toolDef, error) {
	list, err := a.c.ListTools(ctx, mcpgo.ListToolsRequest{})
	if err != nil {
		return nil, err
	}
	var out []toolDef
	for _, tool := range list.Tools {
		// The tool as mcp-go would send it on: what it decoded, encoded.
		b, err := json.Marshal(tool)
		if err != nil {
			return nil, err
		}
		var raw struct {
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		}
		if err := json.Unmarshal(b, &raw); err != nil {
			return nil, err
		}
		out = append(out, toolDef{Name: tool.Name, Input: raw.InputSchema, Output: raw.OutputSchema})
	}
	return out, nil
}

func (a mcpgoAgent) call(ctx context.Context, name string, args map[string]any) (result, error) {
	res, err := a.c.CallTool(ctx, mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{Name: name, Arguments: args}})
	if err != nil {
		return result{}, err
	}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(mcpgo.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	r := result{Text: strings.Join(texts, "\n"), IsError: res.IsError}
	if res.StructuredContent != nil {
		r.Structured, _ = json.Marshal(res.StructuredContent)
	}
	return r, nil
}

// bearer adds the bearer token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// connectors are the clients under test, by name.
var connectors = []struct {
	name    string
	connect func(ctx context.Context, conn connection, version string) (agent, error)
}{
	{"go-sdk", connectSDK},
	{"mcp-go", connectMCPGo},
}
