package mcpclients

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// conformance is the suite's program in testdata/node.
const conformance = "node_modules/@modelcontextprotocol/conformance/dist/index.js"

// required are the suite's server scenarios that apply to a tools-only
// server: each must pass over both transports unless
// testdata/conformance-na.txt names it for one.
var required = []string{
	"server-initialize",           // the handshake: protocol version, server info, capabilities
	"ping",                        // ping answers an empty result
	"tools-list",                  // every tool has a name, a description and an input schema
	"server-sse-multiple-streams", // several POST streams of one session at once
	"dns-rebinding-protection",    // a foreign Host or Origin is refused, localhost accepted
}

// knownFailures are checks Pinky fails today, "transport/scenario/check"
// with the reason; a known failure is logged, not failed, and one that
// passes fails the test, so that the entry is deleted with the fix.
var knownFailures = map[string]string{}

// notApplicable is one line of testdata/conformance-na.txt:
// "scenario: reason", or "scenario [transport]: reason" for a scenario
// that does not apply over one transport only.
type notApplicable struct {
	scenario, transport, reason string
}

var naLine = regexp.MustCompile(`^([a-z0-9][a-z0-9-]*)(?: \[(stdio|http)\])?: (\S.*)$`)

// readNotApplicable reads testdata/conformance-na.txt; blank lines and
// lines starting with # are skipped.
func readNotApplicable(t *testing.T) []notApplicable {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "conformance-na.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []notApplicable
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := naLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("conformance-na.txt:%d: %q; want \"scenario: reason\" or \"scenario [stdio|http]: reason\"", n, line)
		}
		out = append(out, notApplicable{m[1], m[2], m[3]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

var scenarioLine = regexp.MustCompile(`^\s+- ([a-z0-9][a-z0-9-]*)(?: \[|$)`)

// suiteScenarios lists the suite's server scenarios (conformance list
// --server), the pending ones included.
func (r *rig) suiteScenarios(t *testing.T) []string {
	t.Helper()
	out, errs, code := r.run(t, time.Minute, conformance, "list", "--server")
	if code != 0 {
		t.Fatalf("conformance list --server: exit %d: %s", code, errs)
	}
	var names []string
	for _, line := range strings.Split(out, "\n") {
		if m := scenarioLine.FindStringSubmatch(line); m != nil {
			names = append(names, m[1])
		}
	}
	if len(names) == 0 {
		t.Fatalf("conformance list --server: no scenario in %q", out)
	}
	return names
}

// check is one entry of a scenario's checks.json.
type check struct {
	ID           string `json:"id"`
	Status       string `json:"status"` // SUCCESS, FAILURE, WARNING, INFO…
	Description  string `json:"description"`
	ErrorMessage string `json:"errorMessage"`
	Details      any    `json:"details"`
}

var resultDir = regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T[0-9-]+Z$`)

// runSuite runs every server scenario of the suite against url, the
// pending ones too, and returns each scenario's checks. The suite exits
// non-zero when a check fails, which the caller judges.
func (r *rig) runSuite(t *testing.T, url string) map[string][]check {
	t.Helper()
	dir := t.TempDir()
	_, errs, _ := r.run(t, 5*time.Minute, conformance, "server", "--url", url, "--suite", "all", "-o", dir)
	files, _ := filepath.Glob(filepath.Join(dir, "*", "checks.json"))
	out := map[string][]check{}
	for _, f := range files {
		m := resultDir.FindStringSubmatch(filepath.Base(filepath.Dir(f)))
		if m == nil {
			t.Fatalf("conformance server: a result folder %s; want server-SCENARIO-TIME", f)
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var checks []check
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Fatalf("%s: %v; want a list of checks: %s", f, err, b)
		}
		out[m[1]] = checks
	}
	if len(out) == 0 {
		t.Fatalf("conformance server --url %s: no results in %s\nstderr: %s", url, dir, errs)
	}
	return out
}

// TestConformance: the official conformance suite's server scenarios that
// apply to a tools-only server pass over Streamable HTTP (the suite sends
// no token, so a loopback proxy adds it) and over stdio, through the
// stdio-to-HTTP bridge supergateway, which spawns one `pinky mcp` per
// session. Every scenario of the suite is either required or listed as
// not applicable with a reason.
func TestConformance(t *testing.T) {
	r := newRig(t)
	na := readNotApplicable(t)
	scenarios := r.suiteScenarios(t)
	for _, s := range scenarios {
		listed := slices.ContainsFunc(na, func(n notApplicable) bool { return n.scenario == s })
		if !slices.Contains(required, s) && !listed {
			t.Errorf("scenario %s is new in the suite: require it, or list it in testdata/conformance-na.txt with the reason", s)
		}
	}
	for _, n := range na {
		if !slices.Contains(scenarios, n.scenario) {
			t.Errorf("conformance-na.txt lists %s, which the suite no longer has: delete the line", n.scenario)
		}
		if slices.Contains(required, n.scenario) != (n.transport != "") {
			t.Errorf("conformance-na.txt: %s [%s]: a required scenario may be listed for one transport only, and only a required one", n.scenario, n.transport)
		}
	}
	for _, s := range required {
		if !slices.Contains(scenarios, s) {
			t.Errorf("required scenario %s is not in the suite any more", s)
		}
	}

	urls := map[string]string{"http": r.tokenProxy(t), "stdio": r.bridge(t)}
	for _, transport := range []string{"http", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			results := r.runSuite(t, urls[transport])
			for _, s := range required {
				if slices.ContainsFunc(na, func(n notApplicable) bool { return n.scenario == s && n.transport == transport }) {
					continue
				}
				t.Run(s, func(t *testing.T) {
					checks := results[s]
					if len(checks) == 0 {
						t.Fatalf("the suite ran no check of %s", s)
					}
					for _, c := range checks {
						key := transport + "/" + s + "/" + c.ID
						reason, known := knownFailures[key]
						switch {
						case c.Status == "FAILURE" && known:
							t.Logf("known failure %s (%s): %s", key, reason, c.ErrorMessage)
						case c.Status == "FAILURE":
							details, _ := json.Marshal(c.Details)
							t.Errorf("check %s failed: %s: %s\ndetails: %s", c.ID, c.Description, c.ErrorMessage, details)
						case known:
							t.Errorf("check %s passes now: delete knownFailures[%q]", c.ID, key)
						case c.Status != "SUCCESS":
							details, _ := json.Marshal(c.Details)
							t.Logf("check %s: %s: %s %s %s", c.ID, c.Status, c.Description, c.ErrorMessage, details)
						}
					}
				})
			}
		})
	}
}
