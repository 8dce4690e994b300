package approval

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

var bind = Binding{Session: "s1", Device: "d1", Task: "t1", Tool: "phone_tap", Args: `{"text":"Send"}`}

func TestDecideAndClaim(t *testing.T) {
	for _, tt := range []struct {
		name  string
		allow bool
		want  Status
	}{
		{"allow", true, Approved},
		{"deny", false, Denied},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bk := NewBook(time.Minute)
			c := bk.Open(Card{Device: "d1", TaskID: "t1", Commit: "send_message", TargetKey: "send"}, bind)
			if c.Status != Pending || c.ID == "" {
				t.Fatalf("opened: %+v", c)
			}
			if got, err := bk.Claim(c.ID, bind); err != nil || got.Status != Pending {
				t.Errorf("claim while pending: %v, %v", got.Status, err)
			}
			if _, err := bk.Decide(c.ID, tt.allow, false, "no"); err != nil {
				t.Fatal(err)
			}
			if _, err := bk.Decide(c.ID, true, false, ""); !errors.Is(err, ErrDecided) {
				t.Errorf("second decision: got %v; want ErrDecided", err)
			}
			got, err := bk.Claim(c.ID, bind)
			if err != nil || got.Status != tt.want {
				t.Errorf("claim: got %v, %v; want %s", got.Status, err, tt.want)
			}
			if tt.allow {
				if _, err := bk.Claim(c.ID, bind); !errors.Is(err, ErrUsed) {
					t.Errorf("reuse: got %v; want ErrUsed", err)
				}
			}
		})
	}
}

func TestClaimRefusesForeignAndAltered(t *testing.T) {
	bk := NewBook(time.Minute)
	c := bk.Open(Card{Device: "d1"}, bind)
	bk.Decide(c.ID, true, false, "")
	for name, b := range map[string]Binding{
		"another session": {Session: "s2", Device: "d1", Task: "t1", Tool: "phone_tap", Args: bind.Args},
		"another device":  {Session: "s1", Device: "d2", Task: "t1", Tool: "phone_tap", Args: bind.Args},
		"another tool":    {Session: "s1", Device: "d1", Task: "t1", Tool: "phone_key", Args: bind.Args},
		"altered args":    {Session: "s1", Device: "d1", Task: "t1", Tool: "phone_tap", Args: `{"text":"Delete"}`},
		"another task":    {Session: "s1", Device: "d1", Task: "t2", Tool: "phone_tap", Args: bind.Args},
	} {
		if _, err := bk.Claim(c.ID, b); !errors.Is(err, ErrForeign) {
			t.Errorf("%s: got %v; want ErrForeign", name, err)
		}
	}
	if _, err := bk.Claim("ap_nope", bind); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown id: got %v", err)
	}
	// The refusals did not use it up.
	if got, err := bk.Claim(c.ID, bind); err != nil || got.Status != Approved {
		t.Errorf("the rightful claim: %v, %v", got.Status, err)
	}
}

func TestExpiry(t *testing.T) {
	bk := NewBook(time.Minute)
	now := time.Now()
	bk.now = func() time.Time { return now }
	c := bk.Open(Card{Device: "d1"}, bind)
	if _, ok := bk.OpenFor("d1"); !ok {
		t.Error("OpenFor: the open approval is not found")
	}
	now = now.Add(61 * time.Second)
	if _, err := bk.Decide(c.ID, true, false, ""); !errors.Is(err, ErrDecided) {
		t.Errorf("decide after expiry: %v; want ErrDecided", err)
	}
	got, _ := bk.Claim(c.ID, bind)
	if got.Status != Expired {
		t.Errorf("status: %s; want expired", got.Status)
	}
	if _, ok := bk.OpenFor("d1"); ok {
		t.Error("OpenFor found an expired approval")
	}
}

func TestWait(t *testing.T) {
	bk := NewBook(time.Minute)
	c := bk.Open(Card{Device: "d1"}, bind)
	var changes []Status
	var mu sync.Mutex
	bk.OnChange = func(c Card) { mu.Lock(); changes = append(changes, c.Status); mu.Unlock() }
	go func() { time.Sleep(50 * time.Millisecond); bk.Decide(c.ID, true, true, "") }()
	got, err := bk.Wait(context.Background(), c.ID, 5*time.Second)
	if err != nil || got.Status != Approved || !got.ForTask {
		t.Fatalf("wait: %+v, %v", got, err)
	}
	// A wait that runs out returns the pending state.
	c2 := bk.Open(Card{Device: "d1"}, bind)
	got, err = bk.Wait(context.Background(), c2.ID, 20*time.Millisecond)
	if err != nil || got.Status != Pending {
		t.Errorf("short wait: %v, %v; want pending", got.Status, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := bk.Wait(ctx, c2.ID, time.Minute); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled wait: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(changes) != 2 || changes[0] != Approved || changes[1] != Pending {
		t.Errorf("changes: %v; want [approved pending] (the decision, then the second opening)", changes)
	}
}

func TestForTask(t *testing.T) {
	bk := NewBook(time.Minute)
	c := bk.Open(Card{Device: "d1", TaskID: "t1", Commit: "send_message", TargetKey: "button:send", Counterpart: "Ana Silva"}, bind)
	if bk.AllowedForTask("t1", "send_message", "button:send", "Ana Silva") {
		t.Error("allowed before any decision")
	}
	bk.Decide(c.ID, true, true, "")
	if !bk.AllowedForTask("t1", "send_message", "button:send", "Ana Silva") {
		t.Error("not allowed after an allow for the task")
	}
	for _, k := range [][4]string{
		{"t2", "send_message", "button:send", "Ana Silva"},
		{"t1", "payment", "button:send", "Ana Silva"},
		{"t1", "send_message", "button:pay", "Ana Silva"},
		{"t1", "send_message", "button:send", "Ben Okafor"}, // a send to Ana does not allow a send to Ben
		{"t1", "send_message", "button:send", ""},
	} {
		if bk.AllowedForTask(k[0], k[1], k[2], k[3]) {
			t.Errorf("%v allowed; the allow covers only its task, kind, target and counterpart", k)
		}
	}
}

func TestList(t *testing.T) {
	bk := NewBook(time.Minute)
	a := bk.Open(Card{Device: "d1"}, bind)
	b := bk.Open(Card{Device: "d2"}, bind)
	bk.Decide(a.ID, false, false, "")
	if l := bk.List(true); len(l) != 1 || l[0].ID != b.ID {
		t.Errorf("pending: %+v", l)
	}
	if l := bk.List(false); len(l) != 2 || l[0].ID != b.ID {
		t.Errorf("all, pending first: %+v", l)
	}
}
