package api

// MethodStopLease ends an agent's lease on a phone, or every lease with
// All, at the person's word: StopParams → StopResult.
const MethodStopLease = "leases.stop"

// MethodTakeOver gives a phone to the person: agents' actions on it wait
// until MethodHandBack. DeviceParams → {}.
const MethodTakeOver = "devices.takeover"

// StopParams names the phone whose lease ends, or all of them.
type StopParams struct {
	Device string `json:"device,omitempty"`
	All    bool   `json:"all,omitempty"`
}

// StopResult counts the leases ended.
type StopResult struct {
	Stopped int `json:"stopped"`
}
