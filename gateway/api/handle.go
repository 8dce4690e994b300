package api

import (
	"context"
	"encoding/json"
)

// NoParams is the params type of a method that takes none. Handle does not
// decode a request's params for it: a method that takes nothing ignores
// whatever the request sends, as the daemon always has.
type NoParams struct{}

// Empty is the result of a method that answers nothing; it is sent as {}.
type Empty struct{}

// Handle registers method on s with a typed handler. The request's params
// are decoded strictly into P, as Params does: bad JSON or a field P does
// not have is a CodeInvalidParams error and f does not run; absent or null
// params leave P at its zero value. The result f returns is what the
// caller receives; an error is sent as Server.Handle says.
func Handle[P, R any](s *Server, method string, f func(context.Context, P) (R, error)) {
	s.Handle(method, func(ctx context.Context, raw json.RawMessage) (any, error) {
		var p P
		if _, none := any(p).(NoParams); !none {
			if err := Params(raw, &p); err != nil {
				return nil, err
			}
		}
		r, err := f(ctx, p)
		if err != nil {
			return nil, err
		}
		return r, nil
	})
}
