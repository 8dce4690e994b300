package agent

import "time"

// Long waits. Some agent hosts end a tool call at 60 s whatever the server
// tells them (a progress notification does not keep the call alive there),
// and the answer of a call they ended is lost. So no call waits for long:
// each wait stops before 55 s with an answer that says how to go on (wait
// again with the same tool, or observe later), and reports its progress
// every ProgressEvery meanwhile.
//
// The caps are on the waiting. What a call does after its wait (the
// approved action, the read after a hand-back) runs on in the same call,
// which is why the approval wait leaves more room than the others.
const (
	// MaxWait is the longest a call waits for the screen or for the
	// person's hand-back (phone_wait_for, phone_ask_person).
	MaxWait = 50 * time.Second
	// MaxApprovalWait is the longest a call waits for the person's
	// approval: the approved action still runs in the same call, with its
	// reads and its settling, in the time left before the hosts' cut.
	MaxApprovalWait = 45 * time.Second
	// defaultProgressEvery is Config.ProgressEvery's default.
	defaultProgressEvery = 5 * time.Second
	// readGrace is how far past its deadline a screen read of
	// phone_wait_for may run before it is cut.
	readGrace = 2 * time.Second
)
