package daemon

import (
	"context"

	"github.com/pinky-gateway/pinky/gateway/api"
)

// The person's side of the approvals on the local API. This is the only
// path to a decision: no MCP tool reaches it.

// listApprovals is the approvals waiting for the person, or all of them.
func (g *Gateway) listApprovals(_ context.Context, f api.ApprovalFilter) ([]api.Card, error) {
	return apiCards(g.approvals.List(!f.All)), nil
}

// decide is the person's decision on an approval.
func (g *Gateway) decide(_ context.Context, d api.DecideParams) (api.Card, error) {
	c, err := g.approvals.Decide(d.ID, d.Allow, d.ForTask, d.Reason)
	if err != nil {
		return api.Card{}, err
	}
	return apiCard(c), nil
}
