package api

// MethodEvents reads the daemon's event log by long polling:
// EventsParams → EventPage. It answers at once when there are
// events after After, else when one comes or WaitMS passes.
const MethodEvents = "events.since"

// EventsParams asks for the events after a sequence number.
type EventsParams struct {
	After  uint64 `json:"after"`
	WaitMS int    `json:"wait_ms,omitempty"` // how long to wait for one; at most 30 000
	Max    int    `json:"max,omitempty"`     // the most events to return; 0 is 500
}
