package api

// Approval methods: the person's side of the approvals.
const (
	MethodApprovals = "approvals.list"   // ApprovalFilter → []Card
	MethodDecide    = "approvals.decide" // DecideParams → Card
)

// ApprovalFilter selects approvals.
type ApprovalFilter struct {
	All bool `json:"all,omitempty"` // decided ones too
}

// DecideParams is the person's decision.
type DecideParams struct {
	ID      string `json:"id"`
	Allow   bool   `json:"allow"`
	ForTask bool   `json:"for_task,omitempty"`
	Reason  string `json:"reason,omitempty"`
}
