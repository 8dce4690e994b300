package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/server"
)

// replay returns the messages replayed after id, or the error.
func replay(t *testing.T, s *eventStore, session, id string) (string, []string, error) {
	t.Helper()
	var got []string
	stream, err := s.ReplayEventsAfter(context.Background(), session, id, func(_ string, m json.RawMessage) error {
		got = append(got, string(m))
		return nil
	})
	return stream, got, err
}

func store(t *testing.T, s *eventStore, session, stream, msg string) string {
	t.Helper()
	id, err := s.StoreEvent(context.Background(), session, stream, json.RawMessage(msg))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestEventStoreReplaysItsStream(t *testing.T) {
	s := newEventStore(time.Minute, 1<<20, 1<<20)
	a1 := store(t, s, "s1", "post-1", `"progress 1"`)
	store(t, s, "s1", "get", `"a notification"`)
	store(t, s, "s2", "post-1", `"another session's"`)
	store(t, s, "s1", "post-1", `"progress 2"`)
	a3 := store(t, s, "s1", "post-1", `"the result"`)
	stream, got, err := replay(t, s, "s1", a1)
	if err != nil || stream != "post-1" {
		t.Fatalf("replay after %s: %q, %v", a1, stream, err)
	}
	if diff := cmp.Diff([]string{`"progress 2"`, `"the result"`}, got); diff != "" {
		t.Errorf("replayed (-want +got):\n%s", diff)
	}
	if _, got, err := replay(t, s, "s1", a3); err != nil || len(got) != 0 {
		t.Errorf("replay after the last: %v, %v; want nothing", got, err)
	}
	for _, c := range []struct{ session, id string }{{"s2", a1}, {"s1", "999"}, {"s1", "x"}, {"nobody", a1}} {
		if _, _, err := replay(t, s, c.session, c.id); !errors.Is(err, server.ErrUnknownEventID) {
			t.Errorf("replay of %s in %s: %v; want ErrUnknownEventID", c.id, c.session, err)
		}
	}
	if err := s.PurgeSession(context.Background(), "s1"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := replay(t, s, "s1", a1); !errors.Is(err, server.ErrUnknownEventID) {
		t.Errorf("replay after the purge: %v", err)
	}
	if sessions, events, bytes := s.stats(); sessions != 1 || events != 1 || bytes != len(`"another session's"`) {
		t.Errorf("after the purge: %d sessions, %d events, %d bytes; want s2's one event", sessions, events, bytes)
	}
}

func TestEventStoreForgets(t *testing.T) {
	now := time.Unix(1000, 0)
	s := newEventStore(time.Minute, 100, 250)
	s.now = func() time.Time { return now }
	old := store(t, s, "s1", "p", `"old"`)
	now = now.Add(61 * time.Second)
	fresh := store(t, s, "s1", "p", `"fresh"`)
	if _, _, err := replay(t, s, "s1", old); !errors.Is(err, server.ErrUnknownEventID) || !strings.Contains(err.Error(), "kept 1m0s") {
		t.Errorf("replay after an event older than keep: %v; want unknown, saying how long events are kept", err)
	}
	if _, got, err := replay(t, s, "s1", fresh); err != nil || len(got) != 0 {
		t.Errorf("replay after the fresh one: %v, %v", got, err)
	}
	// A session over its budget drops its oldest, never its newest.
	big := `"` + strings.Repeat("x", 60) + `"`
	first := store(t, s, "s1", "p", big)
	second := store(t, s, "s1", "p", big)
	if _, _, err := replay(t, s, "s1", first); !errors.Is(err, server.ErrUnknownEventID) {
		t.Errorf("the session's older event over its budget: %v; want it dropped", err)
	}
	if _, got, err := replay(t, s, "s1", second); err != nil || len(got) != 0 {
		t.Errorf("the newest: %v, %v; want it kept", got, err)
	}
	huge := `"` + strings.Repeat("y", 200) + `"`
	id := store(t, s, "s3", "p", huge)
	if _, _, err := replay(t, s, "s3", id); err != nil {
		t.Errorf("an event over the budget on its own: %v; want it kept until the next", err)
	}
	// The store's total drops the oldest of every session.
	if _, _, bytes := s.stats(); bytes > 250+len(huge) {
		t.Errorf("%d bytes kept; want the total budget held", bytes)
	}
	if _, _, err := replay(t, s, "s1", second); !errors.Is(err, server.ErrUnknownEventID) {
		t.Errorf("s1's event after s3's big one: %v; want it dropped for the total", err)
	}
}
