package history

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Memory is a Store kept in memory, for tests. It behaves as SQLite does,
// down to the millisecond precision of times and the errors it returns.
type Memory struct {
	health meter
	// fail is the cause every write fails with while it is set (FailWrites).
	fail atomic.Pointer[string]

	mu       sync.Mutex
	devices  map[string]Device
	agents   map[string]Agent
	sessions map[string]Session
	tasks    map[string]*memTask
	steps    map[string]*Step
	media    map[string]Media
	approvs  map[string]Approval
	recs     map[string]Recording // by task ID
}

type memTask struct {
	Task
	steps map[int]*Step // by Seq
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty in-memory Store.
func NewMemory() *Memory {
	return &Memory{
		devices:  make(map[string]Device),
		agents:   make(map[string]Agent),
		sessions: make(map[string]Session),
		tasks:    make(map[string]*memTask),
		steps:    make(map[string]*Step),
		media:    make(map[string]Media),
		approvs:  make(map[string]Approval),
		recs:     make(map[string]Recording),
	}
}

// FailWrites makes every later write fail as a store that cannot be
// written does, with cause as its Cause, until FailWrites(""): a test's
// full disk. Reads go on working.
func (m *Memory) FailWrites(cause string) {
	m.fail.Store(&cause)
}

// writable fails a write while FailWrites is in force, and keeps the
// store's Health.
func (m *Memory) writable() error {
	cause := m.fail.Load()
	if cause == nil || *cause == "" {
		m.health.worked()
		return nil
	}
	err := &WriteError{Cause: *cause, Err: errors.New("the test made the store fail its writes")}
	m.health.failed(*cause, "call FailWrites(\"\")", err)
	return err
}

// Health implements Store.
func (m *Memory) Health() Health { return m.health.get() }

// Close implements Store; it keeps the data.
func (m *Memory) Close() error { return nil }

// UpsertDevice implements Store.
func (m *Memory) UpsertDevice(_ context.Context, d Device) error {
	if err := checkID("device", d.ID); err != nil {
		return err
	}
	d.FirstSeen, d.LastSeen = ms(d.FirstSeen), ms(d.LastSeen)
	if d.FirstSeen.IsZero() {
		d.FirstSeen = d.LastSeen
	}
	if err := m.writable(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.devices[d.ID]; ok && !old.FirstSeen.IsZero() {
		d.FirstSeen = old.FirstSeen
	}
	m.devices[d.ID] = d
	return nil
}

// Device implements Store.
func (m *Memory) Device(_ context.Context, id string) (Device, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.devices[id]
	if !ok {
		return Device{}, fmt.Errorf("device %q: %w", id, ErrNotFound)
	}
	return d, nil
}

// UpsertAgent implements Store.
func (m *Memory) UpsertAgent(_ context.Context, a Agent) error {
	if err := checkID("agent", a.ID); err != nil {
		return err
	}
	a.FirstSeen, a.LastSeen = ms(a.FirstSeen), ms(a.LastSeen)
	if a.FirstSeen.IsZero() {
		a.FirstSeen = a.LastSeen
	}
	if err := m.writable(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.agents[a.ID]; ok && !old.FirstSeen.IsZero() {
		a.FirstSeen = old.FirstSeen
	}
	m.agents[a.ID] = a
	return nil
}

// Agent implements Store.
func (m *Memory) Agent(_ context.Context, id string) (Agent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.agents[id]
	if !ok {
		return Agent{}, fmt.Errorf("agent %q: %w", id, ErrNotFound)
	}
	return a, nil
}

// StartSession implements Store.
func (m *Memory) StartSession(_ context.Context, s Session) error {
	if err := checkID("session", s.ID); err != nil {
		return err
	}
	s.StartedAt, s.EndedAt = ms(s.StartedAt), time.Time{}
	if err := m.writable(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.sessions[s.ID]; ok {
		return fmt.Errorf("session %q: %w", s.ID, ErrExists)
	}
	if err := m.refs("session", s.ID, "", s.AgentID, ""); err != nil {
		return err
	}
	m.sessions[s.ID] = s
	return nil
}

// refs checks that the non-empty references exist.
func (m *Memory) refs(what, id, session, agent, device string) error {
	if _, ok := m.sessions[session]; session != "" && !ok {
		return fmt.Errorf("%s %q: session %q: %w", what, id, session, ErrNotFound)
	}
	if _, ok := m.agents[agent]; agent != "" && !ok {
		return fmt.Errorf("%s %q: agent %q: %w", what, id, agent, ErrNotFound)
	}
	if _, ok := m.devices[device]; device != "" && !ok {
		return fmt.Errorf("%s %q: device %q: %w", what, id, device, ErrNotFound)
	}
	return nil
}

// EndSession implements Store.
func (m *Memory) EndSession(_ context.Context, id string, at time.Time) error {
	if err := checkAt("session", id, at); err != nil {
		return err
	}
	if err := m.writable(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	switch {
	case !ok:
		return fmt.Errorf("session %q: %w", id, ErrNotFound)
	case !s.EndedAt.IsZero():
		return fmt.Errorf("session %q: %w", id, ErrEnded)
	}
	s.EndedAt = ms(at)
	m.sessions[id] = s
	return nil
}

// Session implements Store.
func (m *Memory) Session(_ context.Context, id string) (Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok {
		return Session{}, fmt.Errorf("session %q: %w", id, ErrNotFound)
	}
	return s, nil
}

// StartTask implements Store.
func (m *Memory) StartTask(_ context.Context, t Task) error {
	if err := checkID("task", t.ID); err != nil {
		return err
	}
	t.Apps = cloneApps(t.Apps)
	t.StartedAt, t.EndedAt, t.Outcome = ms(t.StartedAt), time.Time{}, ""
	if err := m.writable(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.tasks[t.ID]; ok {
		return fmt.Errorf("task %q: %w", t.ID, ErrExists)
	}
	if err := m.refs("task", t.ID, t.SessionID, t.AgentID, t.DeviceID); err != nil {
		return err
	}
	m.tasks[t.ID] = &memTask{Task: t, steps: make(map[int]*Step)}
	return nil
}

// EndTask implements Store.
func (m *Memory) EndTask(_ context.Context, id string, at time.Time, outcome string) error {
	if err := checkAt("task", id, at); err != nil {
		return err
	}
	if err := checkOutcome("task", id, outcome); err != nil {
		return err
	}
	if err := m.writable(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tasks[id]
	switch {
	case !ok:
		return fmt.Errorf("task %q: %w", id, ErrNotFound)
	case !t.EndedAt.IsZero():
		return fmt.Errorf("task %q: %w", id, ErrEnded)
	}
	t.EndedAt, t.Outcome = ms(at), outcome
	return nil
}

// Tasks implements Store.
func (m *Memory) Tasks(_ context.Context, f TaskFilter) ([]TaskSummary, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []TaskSummary
	for _, t := range m.tasks {
		if f.Device != "" && t.DeviceID != f.Device ||
			f.Agent != "" && t.AgentID != f.Agent ||
			!f.Before.IsZero() && (t.StartedAt.IsZero() || t.StartedAt.UnixMilli() >= f.Before.UnixMilli()) {
			continue
		}
		out = append(out, m.summary(t))
	}
	// Newest first, as SQLite orders them: a zero start (NULL) is the oldest.
	slices.SortFunc(out, func(a, b TaskSummary) int {
		return cmp.Or(cmp.Compare(startKey(b.Task), startKey(a.Task)), cmp.Compare(b.ID, a.ID))
	})
	if len(out) > f.limit() {
		out = out[:f.limit()]
	}
	return out, nil
}

// startKey orders tasks by start as SQLite does, a zero start (NULL) first.
func startKey(t Task) int64 {
	if t.StartedAt.IsZero() {
		return math.MinInt64
	}
	return t.StartedAt.UnixMilli()
}

func (m *Memory) summary(t *memTask) TaskSummary {
	ts := TaskSummary{Task: t.Task, Steps: len(t.steps), Recording: m.recs[t.ID].Bytes > 0}
	ts.Apps = cloneApps(t.Apps)
	if a, ok := m.agents[t.AgentID]; ok {
		ts.AgentName, ts.AgentVersion = a.Name, a.Version
	}
	if d, ok := m.devices[t.DeviceID]; ok {
		ts.DeviceName = d.Name
	}
	last := -1
	for seq, st := range t.steps {
		if last == -1 || seq > last {
			last, ts.LastOutcome = seq, st.Outcome
		}
	}
	return ts
}

// Task implements Store.
func (m *Memory) Task(_ context.Context, id string) (TaskSummary, []Step, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tasks[id]
	if !ok {
		return TaskSummary{}, nil, fmt.Errorf("task %q: %w", id, ErrNotFound)
	}
	var rec *Recording
	if r, ok := m.recs[id]; ok && r.Bytes > 0 {
		rec = &r
	}
	var steps []Step
	for _, st := range t.steps {
		cp := *st
		cp.VideoAt = videoAt(cp.StartedAt, rec)
		steps = append(steps, cp)
	}
	slices.SortFunc(steps, func(a, b Step) int { return cmp.Compare(a.Seq, b.Seq) })
	return m.summary(t), steps, nil
}

// OpenTasks implements Store.
func (m *Memory) OpenTasks(_ context.Context) ([]Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Task
	for _, t := range m.tasks {
		if t.EndedAt.IsZero() {
			tt := t.Task
			tt.Apps = cloneApps(tt.Apps)
			out = append(out, tt)
		}
	}
	slices.SortFunc(out, func(a, b Task) int {
		return cmp.Or(cmp.Compare(startKey(a), startKey(b)), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// CloseOpen implements Store.
func (m *Memory) CloseOpen(_ context.Context, at time.Time, outcome string) (int, error) {
	if err := checkAt("open tasks", "*", at); err != nil {
		return 0, err
	}
	if err := checkOutcome("open tasks", "*", outcome); err != nil {
		return 0, err
	}
	if err := m.writable(); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, t := range m.tasks {
		if t.EndedAt.IsZero() {
			t.EndedAt, t.Outcome = ms(at), outcome
			n++
		}
	}
	for id, s := range m.sessions {
		if s.EndedAt.IsZero() {
			s.EndedAt = ms(at)
			m.sessions[id] = s
		}
	}
	return n, nil
}

// AddStep implements Store.
func (m *Memory) AddStep(_ context.Context, st Step) error {
	if err := checkStep(st); err != nil {
		return err
	}
	st.StartedAt = ms(st.StartedAt)
	if err := m.writable(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.steps[st.ID]; ok {
		return fmt.Errorf("step %q: %w", st.ID, ErrExists)
	}
	t, ok := m.tasks[st.TaskID]
	if !ok {
		return fmt.Errorf("step %q: task %q: %w", st.ID, st.TaskID, ErrNotFound)
	}
	if _, ok := t.steps[st.Seq]; ok {
		return fmt.Errorf("step %q: task %q, seq %d: %w", st.ID, st.TaskID, st.Seq, ErrExists)
	}
	p := &st
	m.steps[st.ID] = p
	t.steps[st.Seq] = p
	return nil
}

// FinishStep implements Store.
func (m *Memory) FinishStep(_ context.Context, st Step) error {
	if err := checkFinish(st); err != nil {
		return err
	}
	if err := m.writable(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.steps[st.ID]
	switch {
	case !ok:
		return fmt.Errorf("step %q: %w", st.ID, ErrNotFound)
	case p.Outcome != StepRunning:
		return fmt.Errorf("step %q: %w", st.ID, ErrEnded)
	}
	p.Outcome, p.Message, p.Diff, p.Duration = st.Outcome, st.Message, st.Diff, st.Duration
	return nil
}

// SettleSteps implements Store.
func (m *Memory) SettleSteps(_ context.Context, outcome, message string) (int, error) {
	if outcome == StepRunning {
		return 0, fmt.Errorf("running steps: outcome %q does not end them: %w", outcome, ErrInvalid)
	}
	if err := checkOutcome("running steps", "*", outcome); err != nil {
		return 0, err
	}
	if err := m.writable(); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, p := range m.steps {
		if p.Outcome == StepRunning {
			p.Outcome, p.Message = outcome, message
			n++
		}
	}
	return n, nil
}

// SetStepMedia implements Store.
func (m *Memory) SetStepMedia(_ context.Context, stepID, before, after string) error {
	if err := m.writable(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	st, ok := m.steps[stepID]
	if !ok {
		return fmt.Errorf("step %q: %w", stepID, ErrNotFound)
	}
	if before != "" {
		st.Before = before
	}
	if after != "" {
		st.After = after
	}
	return nil
}

// CountSteps implements Store.
func (m *Memory) CountSteps(_ context.Context, taskID string) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if taskID == "" {
		return len(m.steps), nil
	}
	t, ok := m.tasks[taskID]
	if !ok {
		return 0, fmt.Errorf("task %q: %w", taskID, ErrNotFound)
	}
	return len(t.steps), nil
}

// AddMedia implements Store.
func (m *Memory) AddMedia(_ context.Context, md Media) error {
	if err := checkMedia(md); err != nil {
		return err
	}
	md.CreatedAt = ms(md.CreatedAt)
	if err := m.writable(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.media[md.ID]; ok {
		return fmt.Errorf("media %q: %w", md.ID, ErrExists)
	}
	if _, ok := m.tasks[md.TaskID]; !ok {
		return fmt.Errorf("media %q: task %q: %w", md.ID, md.TaskID, ErrNotFound)
	}
	if _, ok := m.steps[md.StepID]; md.StepID != "" && !ok {
		return fmt.Errorf("media %q: step %q: %w", md.ID, md.StepID, ErrNotFound)
	}
	m.media[md.ID] = md
	return nil
}

// Media implements Store.
func (m *Memory) Media(_ context.Context, id string) (Media, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	md, ok := m.media[id]
	if !ok {
		return Media{}, fmt.Errorf("media %q: %w", id, ErrNotFound)
	}
	return md, nil
}

// UpsertApproval implements Store.
func (m *Memory) UpsertApproval(_ context.Context, a Approval) error {
	if err := checkApproval(a); err != nil {
		return err
	}
	a.CreatedAt, a.DecidedAt = ms(a.CreatedAt), ms(a.DecidedAt)
	if err := m.writable(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.tasks[a.TaskID]; !ok {
		return fmt.Errorf("approval %q: task %q: %w", a.ID, a.TaskID, ErrNotFound)
	}
	if _, ok := m.steps[a.StepID]; a.StepID != "" && !ok {
		return fmt.Errorf("approval %q: step %q: %w", a.ID, a.StepID, ErrNotFound)
	}
	if old, ok := m.approvs[a.ID]; ok && !old.CreatedAt.IsZero() {
		a.CreatedAt = old.CreatedAt
	}
	m.approvs[a.ID] = a
	return nil
}

// Approvals implements Store.
func (m *Memory) Approvals(_ context.Context, taskID string) ([]Approval, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.tasks[taskID]; !ok {
		return nil, fmt.Errorf("task %q: %w", taskID, ErrNotFound)
	}
	var out []Approval
	for _, a := range m.approvs {
		if a.TaskID == taskID {
			a.Screenshot = ""
			if _, ok := m.media[ApprovalMediaID(a.ID)]; ok {
				a.Screenshot = ApprovalMediaID(a.ID)
			}
			out = append(out, a)
		}
	}
	// Oldest first, as SQLite orders them: a zero time (NULL) first.
	key := func(a Approval) int64 {
		if a.CreatedAt.IsZero() {
			return math.MinInt64
		}
		return a.CreatedAt.UnixMilli()
	}
	slices.SortFunc(out, func(a, b Approval) int {
		return cmp.Or(cmp.Compare(key(a), key(b)), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// PutRecording implements Store.
func (m *Memory) PutRecording(_ context.Context, r Recording) error {
	if err := checkRecording(r); err != nil {
		return err
	}
	r.StartedAt, r.UpdatedAt = ms(r.StartedAt), ms(r.UpdatedAt)
	r.Duration = r.Duration.Truncate(time.Millisecond)
	if err := m.writable(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.tasks[r.TaskID]; !ok {
		return fmt.Errorf("recording of task %q: %w", r.TaskID, ErrNotFound)
	}
	m.recs[r.TaskID] = r
	return nil
}

// Recording implements Store.
func (m *Memory) Recording(_ context.Context, taskID string) (Recording, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.recs[taskID]
	if !ok {
		return Recording{}, fmt.Errorf("recording of task %q: %w", taskID, ErrNotFound)
	}
	return r, nil
}

// Prune implements Store. Nothing in it can fail once it has begun to
// delete, and it holds the lock throughout, so it is all or nothing as
// SQLite's transaction is.
func (m *Memory) Prune(_ context.Context, before time.Time) (Pruned, error) {
	if err := checkAt("prune", "*", before); err != nil {
		return Pruned{}, err
	}
	cut := before.UnixMilli()
	if err := m.writable(); err != nil {
		return Pruned{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var p Pruned
	doomed := make(map[string]bool)
	for id, t := range m.tasks {
		if !t.EndedAt.IsZero() && t.EndedAt.UnixMilli() < cut {
			doomed[id] = true
		}
	}
	p.Tasks = len(doomed)
	for id, a := range m.approvs {
		if doomed[a.TaskID] {
			delete(m.approvs, id)
			p.Approvals++
		} else if st, ok := m.steps[a.StepID]; ok && doomed[st.TaskID] {
			a.StepID = ""
			m.approvs[id] = a
		}
	}
	for id, md := range m.media {
		if doomed[md.TaskID] {
			delete(m.media, id)
			p.Media++
			p.Files.Media = append(p.Files.Media, md.Path)
		} else if st, ok := m.steps[md.StepID]; ok && doomed[st.TaskID] {
			md.StepID = ""
			m.media[id] = md
		}
	}
	for id, r := range m.recs {
		if doomed[id] {
			delete(m.recs, id)
			p.Recordings++
			p.Files.Recordings = append(p.Files.Recordings, r.Path)
		}
	}
	for id, st := range m.steps {
		if doomed[st.TaskID] {
			delete(m.steps, id)
			p.Steps++
		}
	}
	for id := range doomed {
		delete(m.tasks, id)
	}
	busy := make(map[string]bool) // sessions with a task left
	for _, t := range m.tasks {
		busy[t.SessionID] = true
	}
	for id, s := range m.sessions {
		if !busy[id] && !s.EndedAt.IsZero() && s.EndedAt.UnixMilli() < cut {
			delete(m.sessions, id)
			p.Sessions++
		}
	}
	p.Files.Media = sortedSet(p.Files.Media)
	p.Files.Recordings = sortedSet(p.Files.Recordings)
	return p, nil
}

// NamedFiles implements Store.
func (m *Memory) NamedFiles(_ context.Context, f Files) (Files, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	media := make(map[string]bool, len(m.media))
	for _, md := range m.media {
		media[md.Path] = true
	}
	recs := make(map[string]bool, len(m.recs))
	for _, r := range m.recs {
		recs[r.Path] = true
	}
	var out Files
	for _, p := range f.Media {
		if media[p] {
			out.Media = append(out.Media, p)
		}
	}
	for _, p := range f.Recordings {
		if recs[p] {
			out.Recordings = append(out.Recordings, p)
		}
	}
	out.Media, out.Recordings = sortedSet(out.Media), sortedSet(out.Recordings)
	return out, nil
}

// sortedSet sorts ps and drops repeats; nil stays nil.
func sortedSet(ps []string) []string {
	slices.Sort(ps)
	return slices.Compact(ps)
}

func cloneApps(apps []string) []string {
	if len(apps) == 0 {
		return nil
	}
	return slices.Clone(apps)
}
