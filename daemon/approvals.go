package daemon

import (
	"context"
	"encoding/json"

	"github.com/pinky-gateway/pinky/gateway/api"
)

// approvalRoutes lets the person's clients list and decide approvals. This
// is the only path to a decision: no MCP tool reaches it.
func (g *Gateway) approvalRoutes() {
	g.api.Handle(api.MethodApprovals, func(_ context.Context, p json.RawMessage) (any, error) {
		var f api.ApprovalFilter
		if err := api.Params(p, &f); err != nil {
			return nil, err
		}
		return g.approvals.List(!f.All), nil
	})
	g.api.Handle(api.MethodDecide, func(_ context.Context, p json.RawMessage) (any, error) {
		var d api.DecideParams
		if err := api.Params(p, &d); err != nil {
			return nil, err
		}
		return g.approvals.Decide(d.ID, d.Allow, d.ForTask, d.Reason)
	})
}
