package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
)

type greetParams struct {
	Name string `json:"name"`
}

type greeting struct {
	Text string `json:"text"`
}

func typedServer() *Server {
	s := NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)))
	Handle(s, "greet", func(_ context.Context, p greetParams) (greeting, error) {
		return greeting{Text: "hello " + p.Name}, nil
	})
	Handle(s, "ping", func(context.Context, NoParams) (greeting, error) { return greeting{Text: "pong"}, nil })
	Handle(s, "done", func(context.Context, greetParams) (Empty, error) { return Empty{}, nil })
	Handle(s, "list", func(_ context.Context, p greetParams) ([]string, error) {
		if p.Name == "" {
			return nil, nil
		}
		return []string{p.Name}, nil
	})
	Handle(s, "fail", func(context.Context, NoParams) (greeting, error) {
		return greeting{Text: "not sent"}, errors.New("it broke")
	})
	Handle(s, "refuse", func(context.Context, NoParams) (*greeting, error) {
		return nil, &Error{CodeInvalidParams, "no such name"}
	})
	return s
}

func TestHandle(t *testing.T) {
	s := typedServer()
	for _, tt := range []struct {
		name, method, params string // params "" is a request without them
		want                 string // the result's JSON
		code                 int    // the error's code, 0 for none
		text                 string // in the error's message
	}{
		{name: "params decoded", method: "greet", params: `{"name":"Ada"}`, want: `{"text":"hello Ada"}`},
		{name: "no params is the zero value", method: "greet", want: `{"text":"hello "}`},
		{name: "null params is the zero value", method: "greet", params: `null`, want: `{"text":"hello "}`},
		{name: "empty object", method: "greet", params: `{}`, want: `{"text":"hello "}`},
		{name: "unknown field", method: "greet", params: `{"name":"Ada","age":3}`, code: CodeInvalidParams, text: `bad params: json: unknown field "age"`},
		{name: "wrong type", method: "greet", params: `{"name":7}`, code: CodeInvalidParams, text: "bad params: json: cannot unmarshal number"},
		{name: "not an object", method: "greet", params: `[1]`, code: CodeInvalidParams, text: "bad params"},
		{name: "bad JSON", method: "greet", params: `{"name":`, code: CodeInvalidParams, text: "bad params"},
		{name: "no params taken, none sent", method: "ping", want: `{"text":"pong"}`},
		{name: "no params taken, empty object", method: "ping", params: `{}`, want: `{"text":"pong"}`},
		{name: "no params taken, null", method: "ping", params: `null`, want: `{"text":"pong"}`},
		{name: "no params taken, some sent are ignored", method: "ping", params: `{"x":1}`, want: `{"text":"pong"}`},
		{name: "empty result", method: "done", params: `{}`, want: `{}`},
		{name: "nil slice", method: "list", want: `null`},
		{name: "slice", method: "list", params: `{"name":"a"}`, want: `["a"]`},
		{name: "error drops the result", method: "fail", code: CodeFailed, text: "it broke"},
		{name: "an *Error is kept", method: "refuse", code: CodeInvalidParams, text: "no such name"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var raw json.RawMessage
			if tt.params != "" {
				raw = json.RawMessage(tt.params)
			}
			res, err := s.Call(context.Background(), tt.method, raw)
			if tt.code != 0 {
				var e *Error
				if err != nil && !errors.As(err, &e) {
					e = &Error{CodeFailed, err.Error()} // as the socket sends it
				}
				if e == nil || e.Code != tt.code || !strings.Contains(e.Message, tt.text) {
					t.Fatalf("got %v, %v; want code %d containing %q", res, err, tt.code, tt.text)
				}
				if res != nil {
					t.Errorf("got result %v with the error; want none", res)
				}
				return
			}
			if err != nil {
				t.Fatalf("got %v; want %s", err, tt.want)
			}
			b, err := json.Marshal(res)
			if err != nil || string(b) != tt.want {
				t.Errorf("got %s (%v); want %s", b, err, tt.want)
			}
		})
	}
}

// TestHandleOverSocket checks a typed method end to end, the way the CLI
// calls it.
func TestHandleOverSocket(t *testing.T) {
	s, path := serve(t)
	Handle(s, "greet", func(_ context.Context, p greetParams) (greeting, error) {
		return greeting{Text: "hello " + p.Name}, nil
	})
	Handle(s, "done", func(context.Context, NoParams) (Empty, error) { return Empty{}, nil })
	c, err := Dial(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var g greeting
	if err := c.Call(context.Background(), "greet", greetParams{Name: "Ada"}, &g); err != nil || g.Text != "hello Ada" {
		t.Errorf("greet: got %+v, %v; want hello Ada", g, err)
	}
	var raw json.RawMessage
	if err := c.Call(context.Background(), "done", nil, &raw); err != nil || string(raw) != "{}" {
		t.Errorf("done: got %s, %v; want {}", raw, err)
	}
}
