package readmodel

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"massgen/internal/event"
	"massgen/internal/provider"
)

// The critical path of a session: the chain of model and tool calls that determined when it
// ended. Walking back from the last call to end, each step's predecessor is the call that
// ended last before it started: the agent's own previous call when it went straight on, or
// the call of another agent whose answer (or vote) it was waiting for. The wall time minus
// the path is time no call on the path was running: orchestration, and waits for nothing.

// maxSteps caps the calls recorded: a run of hundreds of agents makes thousands.
const maxSteps = 20000

// Step kinds.
const (
	StepModel = "model"
	StepTool  = "tool"
)

// Step is one model or tool call.
type Step struct {
	Agent      string
	Kind       string // StepModel or StepTool
	Name       string // the stage (initial, enforcement, presentation, ...) or the tool
	Start, End time.Time
	// Outcome is what the agent did with the call's response: "agent1.2" (the answer it
	// submitted), "vote for agent1.2" or "final answer"; "" for a call that led to neither.
	Outcome string
}

// What names the step by what it led to, as the critical path shows it: "agent1.2" (an
// answer), "vote for agent1.2", "stale vote for agent2", "researcher's refused new_answer",
// "final answer"; else by its agent and what it was: "researcher ran read_file",
// "researcher's presentation call", "researcher's call with no answer".
func (s Step) What() string {
	switch {
	case strings.HasPrefix(s.Outcome, "refused "):
		return s.Agent + "'s " + s.Outcome
	case s.Outcome != "":
		return s.Outcome
	case s.Kind == StepTool:
		return s.Agent + " ran " + s.Name
	case s.Name == string(provider.StagePresentation):
		return s.Agent + "'s presentation call" // one round of a presentation's tool calls
	case s.Name == string(provider.StagePostEvaluation):
		return s.Agent + "'s post-evaluation"
	}
	return s.Agent + "'s call with no answer" // its answer was dropped (new answers came in), or it failed
}

// Seconds is how long the call ran.
func (s Step) Seconds() float64 { return s.End.Sub(s.Start).Seconds() }

// latency records calls from events.
type latency struct {
	steps []Step
	open  map[string]int // agent -> index of its model call still running
	last  map[string]int // agent -> index of its latest call
	over  bool           // maxSteps reached: the path is not computed
}

func (l *latency) apply(e event.Event) {
	agent := ""
	switch p := e.Payload.(type) {
	case event.ModelCalled:
		l.close(p.Agent, e.Time)
		l.add(Step{Agent: p.Agent, Kind: StepModel, Name: string(p.Stage), Start: e.Time, End: e.Time}, true)
		return
	case event.TextDelta, event.ReasoningDelta, event.ToolCallStreaming, event.ToolOutput, event.ToolImage:
		return // the call is still streaming
	case event.ToolResult:
		l.close(p.Agent, e.Time)
		d := time.Duration(p.DurationMS * float64(time.Millisecond))
		l.add(Step{Agent: p.Agent, Kind: StepTool, Name: p.Tool, Start: e.Time.Add(-d), End: e.Time}, false)
		return
	case event.UsageReported:
		agent = p.Agent
	case event.AnswerSubmitted:
		l.close(p.Agent, e.Time)
		l.outcome(p.Agent, p.Label)
		return
	case event.VoteCast:
		l.close(p.Agent, e.Time)
		l.outcome(p.Agent, "vote for "+p.AnswerLabel)
		return
	case event.VoteIgnored:
		// The call led to a vote, one that came too late to count: named so, the path reads
		// as the dashboard's votes do (stale votes struck through).
		l.close(p.Agent, e.Time)
		l.outcome(p.Agent, "stale vote for "+p.TargetLabel)
		return
	case event.VoteDeferred:
		agent = p.Agent
	case event.ToolRejected:
		if p.Tool == "new_answer" || p.Tool == "vote" {
			// A workflow call refused (a second answer past the cap, a vote for no one): the
			// step led to that, not to nothing.
			l.close(p.Agent, e.Time)
			l.outcome(p.Agent, "refused "+p.Tool)
			return
		}
		agent = p.Agent
	case event.ToolCalled:
		agent = p.Agent
	case event.EnforcementSent:
		agent = p.Agent
	case event.AgentError:
		agent = p.Agent
	case event.ChecklistSubmitted:
		agent = p.Agent
	case event.FinalAnswer:
		l.close(p.Agent, e.Time)
		l.outcome(p.Agent, "final answer")
		return
	case event.SessionEnded:
		for a := range l.open {
			l.close(a, e.Time)
		}
		return
	}
	if agent != "" {
		l.close(agent, e.Time)
	}
}

func (l *latency) add(s Step, open bool) {
	if len(l.steps) >= maxSteps {
		l.over = true
		return
	}
	l.steps = append(l.steps, s)
	if l.last == nil {
		l.last = map[string]int{}
	}
	l.last[s.Agent] = len(l.steps) - 1
	if open {
		if l.open == nil {
			l.open = map[string]int{}
		}
		l.open[s.Agent] = len(l.steps) - 1
	}
}

// outcome records what agent's latest call led to, unless it led to something already.
func (l *latency) outcome(agent, what string) {
	if k, ok := l.last[agent]; ok && l.steps[k].Outcome == "" {
		l.steps[k].Outcome = what
	}
}

// close ends agent's running model call at t: the first sign of its response being acted on.
func (l *latency) close(agent string, t time.Time) {
	k, ok := l.open[agent]
	if !ok {
		return
	}
	l.steps[k].End = t
	delete(l.open, agent)
}

// CriticalPath is a session's critical path.
type CriticalPath struct {
	Start time.Time // the session's start; zero when unknown
	Wall  time.Duration
	Path  time.Duration // the calls on the path, added up
	Steps []Step        // in time order
	// Calls is how many calls the session made in all.
	Calls int
}

// Calls records a session's model and tool calls from its events, for its critical path. The
// zero value is ready to use; it is not safe for concurrent use.
type Calls struct {
	start time.Time
	l     latency
}

// Apply records one event.
func (c *Calls) Apply(e event.Event) {
	if _, ok := e.Payload.(event.SessionStarted); ok {
		c.start = e.Time
	}
	c.l.apply(e)
}

// CriticalPath returns the critical path of the calls recorded so far (see Calls.CriticalPath).
func (s *State) CriticalPath(end time.Time) CriticalPath { return s.lat.CriticalPath(end) }

// CriticalPath returns the critical path of the calls recorded so far, up to end. A call still
// running counts until end.
func (c *Calls) CriticalPath(end time.Time) CriticalPath {
	l := &c.l
	cp := CriticalPath{Start: c.start, Calls: len(l.steps)}
	if !c.start.IsZero() {
		cp.Wall = max(end.Sub(c.start), 0)
	}
	if l.over || len(l.steps) == 0 {
		return cp
	}
	steps := make([]Step, len(l.steps))
	copy(steps, l.steps)
	for _, k := range l.open {
		steps[k].End = max2(steps[k].End, end)
	}
	// Back from the last call to end, through predecessors, found by binary search over the
	// calls sorted by their end (all of them, and each agent's).
	byEnd := sortedByEnd(steps, func(Step) bool { return true })
	own := map[string][]int{}
	for _, k := range byEnd {
		own[steps[k].Agent] = append(own[steps[k].Agent], k)
	}
	var rev []Step
	for cur := byEnd[len(byEnd)-1]; cur >= 0; {
		st := steps[cur]
		rev = append(rev, st)
		cp.Path += st.End.Sub(st.Start)
		cur = predecessor(steps, byEnd, own[st.Agent], cur)
	}
	for i := len(rev) - 1; i >= 0; i-- {
		cp.Steps = append(cp.Steps, rev[i])
	}
	return cp
}

func sortedByEnd(steps []Step, keep func(Step) bool) []int {
	idx := make([]int, 0, len(steps))
	for k, st := range steps {
		if keep(st) {
			idx = append(idx, k)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return steps[a].End.Compare(steps[b].End) })
	return idx
}

// slack is how close to a call's start its own agent's previous call must end to count as
// what it went straight on from, rather than a wait on another agent.
const slack = 5 * time.Millisecond

// predecessor is the call that ended last at or before steps[k] started (another call of the
// same agent preferred when it ended within slack of that), or -1. all and own are indexes of
// steps sorted by end.
func predecessor(steps []Step, all, own []int, k int) int {
	best := latestBefore(steps, all, k)
	mine := latestBefore(steps, own, k)
	if mine >= 0 && best >= 0 && steps[best].End.Sub(steps[mine].End) <= slack {
		return mine
	}
	return best
}

// latestBefore is the call of sorted (by end) that ended last at or before steps[k] started,
// other than k and calls starting no earlier than it, or -1.
func latestBefore(steps []Step, sorted []int, k int) int {
	start := steps[k].Start
	n, _ := slices.BinarySearchFunc(sorted, start, func(j int, t time.Time) int {
		if steps[j].End.After(t) {
			return 1
		}
		return -1
	})
	for i := n - 1; i >= 0; i-- {
		if j := sorted[i]; j != k && steps[j].Start.Before(start) {
			return j
		}
	}
	return -1
}

func max2(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Summary is the critical path in one line: its share of the wall time, then its calls as
// what each led to (Step.What) and when it ended, counted from the session's start: "wall
// 6.90s, critical path 6.10s over 4 of 12 calls: agent3.1 at +1.0s → agent1.2 at +4.0s →
// vote for agent1.2 at +5.1s → final answer at +6.9s". The last 8 calls are shown.
func (cp CriticalPath) Summary() string {
	if len(cp.Steps) == 0 {
		return fmt.Sprintf("wall %.2fs", cp.Wall.Seconds())
	}
	shown := cp.Steps
	if len(shown) > 8 {
		shown = shown[len(shown)-8:]
	}
	parts := make([]string, 0, len(shown))
	for _, st := range shown {
		what := st.What()
		at := st.End.Sub(cp.Start).Seconds()
		if cp.Start.IsZero() {
			at = st.End.Sub(cp.Steps[0].Start).Seconds()
		}
		parts = append(parts, fmt.Sprintf("%s at +%.1fs", what, at))
	}
	more := ""
	if n := len(cp.Steps) - len(shown); n > 0 {
		more = fmt.Sprintf("%d more, then ", n)
	}
	return fmt.Sprintf("wall %.2fs, critical path %.2fs over %d of %d calls: %s%s", cp.Wall.Seconds(), cp.Path.Seconds(),
		len(cp.Steps), cp.Calls, more, strings.Join(parts, " → "))
}
