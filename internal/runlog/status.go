package runlog

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"time"

	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/readmodel"
)

// Preview lengths, in runes, as MassGen cuts them.
const (
	reasonPreview = 100
	finalPreview  = 200
)

// statusFile is status.json. Field names and order follow MassGen's save_status_file; fields
// that are ours have keys MassGen does not use.
type statusFile struct {
	Meta         statusMeta    `json:"meta"`
	Coordination statusCoord   `json:"coordination"`
	Agents       statusAgents  `json:"agents"`
	Results      statusResults `json:"results"`
	Usage        usageJSON     `json:"usage"` // ours: the whole session
	// Ours: the session's usage by round (round n: every agent's n-th coordination round).
	Rounds []roundJSON `json:"rounds"`
	// Ours: the MCP servers and their latest status ("died" once one died mid-run).
	MCPServers map[string]statusServer `json:"mcp_servers,omitempty"`
	// Writes are write_mode's reports on the writable context paths (ours).
	Writes []statusServer `json:"writes,omitempty"`
	// Ours: the wall time and the critical path, the calls that determined it.
	Latency *Latency `json:"latency,omitempty"`
	// Ours, on Temporal: the calls of turn attempts lost with their worker, paid for and made
	// again (their cost is within usage's).
	Retried *retriedJSON `json:"retried,omitempty"`
}

type retriedJSON struct {
	Calls   int     `json:"calls"`
	CostUSD float64 `json:"cost_usd"`
}

// Latency is a session's wall time and critical path (readmodel.CriticalPath), as status.json
// and reports write it.
type Latency struct {
	WallSeconds         float64    `json:"wall_seconds"`
	CriticalPathSeconds float64    `json:"critical_path_seconds"`
	Calls               int        `json:"calls"`
	CriticalPath        []PathStep `json:"critical_path"`
	// Omitted counts the earliest steps of the path left out of CriticalPath.
	Omitted int `json:"critical_path_omitted,omitempty"`
	// Summary is the path in one line, as massgen logs prints it.
	Summary string `json:"summary"`
}

// PathStep is one call on the critical path.
type PathStep struct {
	Agent string `json:"agent"`
	Kind  string `json:"kind"`
	Name  string `json:"name"`
	// Outcome is what the call led to: "agent1.2", "vote for agent1.2", "final answer" or "".
	Outcome string `json:"outcome,omitempty"`
	// What names the step as the summary does (readmodel.Step.What): its outcome, or its
	// agent and what it was ("bob's presentation call").
	What string `json:"what"`
	// StartSeconds is when the call started, from the session's start.
	StartSeconds float64 `json:"start_seconds"`
	Seconds      float64 `json:"seconds"`
}

// latencyOf is s's critical path up to end; nil before the first call.
func latencyOf(s *readmodel.State, end time.Time) *Latency {
	cp := s.CriticalPath(end)
	if cp.Calls == 0 {
		return nil
	}
	l := &Latency{WallSeconds: round3(cp.Wall.Seconds()), CriticalPathSeconds: round3(cp.Path.Seconds()), Calls: cp.Calls,
		CriticalPath: []PathStep{}, Summary: cp.Summary()}
	steps := cp.Steps
	if len(steps) > maxPathShown {
		l.Omitted = len(steps) - maxPathShown
		steps = steps[l.Omitted:]
	}
	for _, st := range steps {
		l.CriticalPath = append(l.CriticalPath, PathStep{Agent: st.Agent, Kind: st.Kind, Name: st.Name, Outcome: st.Outcome, What: st.What(),
			StartSeconds: round3(st.Start.Sub(s.StartTime).Seconds()), Seconds: round3(st.Seconds())})
	}
	return l
}

// maxPathShown caps the steps status.json lists; the rest are counted.
const maxPathShown = 40

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

type statusServer struct {
	Status string  `json:"status"`
	Detail string  `json:"detail,omitempty"`
	Time   float64 `json:"timestamp"`
}

type statusMeta struct {
	LastUpdated    float64 `json:"last_updated"`
	SessionID      string  `json:"session_id"`
	LogDir         string  `json:"log_dir"`
	Question       string  `json:"question"`
	StartTime      float64 `json:"start_time"`
	ElapsedSeconds float64 `json:"elapsed_seconds"`
	Status         string  `json:"status"` // ours: running|completed|timeout|interrupted|failed
	Turn           int     `json:"turn"`   // ours
	// Ours: every time massgen resume took the session up, and from where.
	Resumed []resumeJSON `json:"resumed,omitempty"`
}

// resumeJSON is one resume as status.json and metadata.json show it.
type resumeJSON struct {
	At        float64  `json:"at"`
	Turn      int      `json:"turn"`
	AfterSeq  int64    `json:"after_event"`
	AfterType string   `json:"after_event_type"`
	Phase     string   `json:"phase"`
	Previous  string   `json:"previous"`
	Dropped   string   `json:"dropped,omitempty"`
	Redo      []string `json:"redo,omitempty"`
}

func resumesJSON(s *readmodel.State) []resumeJSON {
	var out []resumeJSON
	for _, r := range s.Resumes {
		out = append(out, resumeJSON{At: unix(r.Time), Turn: r.Turn, AfterSeq: r.AfterSeq, AfterType: r.AfterType,
			Phase: r.Phase, Previous: r.Previous, Dropped: r.Dropped, Redo: r.Redo})
	}
	return out
}

type statusCoord struct {
	Phase                readmodel.Phase `json:"phase"`
	ActiveAgent          *string         `json:"active_agent"`
	CompletionPercentage int             `json:"completion_percentage"`
	IsFinalPresentation  bool            `json:"is_final_presentation"`
	AnswerSetVersion     int             `json:"answer_set_version"` // ours
	// Ours, with orchestration restarts only: the attempt running (from 1), how many the
	// turn may run, the restarts so far and the latest attempt's post-evaluation.
	Attempt        int               `json:"attempt,omitempty"`
	MaxAttempts    int               `json:"max_attempts,omitempty"`
	Restarts       []statusRestart   `json:"restarts,omitempty"`
	PostEvaluation *statusEvaluation `json:"post_evaluation,omitempty"`
}

// statusRestart is one restart_orchestration: the attempt it started, who asked and why.
type statusRestart struct {
	Attempt      int    `json:"attempt"`
	Agent        string `json:"agent"`
	Reason       string `json:"reason"`
	Instructions string `json:"instructions"`
}

// statusEvaluation is an attempt's post-evaluation: decision is "" while it runs, then
// submit or restart; auto and why say when the model did not decide.
type statusEvaluation struct {
	Agent    string `json:"agent"`
	Attempt  int    `json:"attempt"`
	Decision string `json:"decision"`
	Auto     bool   `json:"auto,omitempty"`
	Why      string `json:"why,omitempty"`
}

type statusAgent struct {
	Status            readmodel.Status `json:"status"`
	AnswerCount       int              `json:"answer_count"`
	LatestAnswerLabel *string          `json:"latest_answer_label"`
	VoteCast          *statusVote      `json:"vote_cast"`
	TimesRestarted    int              `json:"times_restarted"` // times THIS agent was sent back to work (B11)
	LastActivity      *float64         `json:"last_activity"`
	Error             *statusError     `json:"error"`
	// Ours.
	Label          string      `json:"anon_id"`
	CausedRestarts int         `json:"caused_restarts"`
	ErrorCount     int         `json:"error_count"`
	Usage          usageJSON   `json:"usage"`
	Rounds         []roundJSON `json:"rounds"`
	// The coding-agent CLI's own session id, which resumes it (claude --resume ID).
	CLISession string `json:"cli_session_id,omitempty"`
	// Decomposition mode: the agent's part.
	Subtask *statusSubtask `json:"subtask,omitempty"`
}

// statusSubtask is an agent's part in decomposition mode.
type statusSubtask struct {
	Text    string `json:"text"`
	Source  string `json:"source,omitempty"` // config | decomposer | fallback | none
	Status  string `json:"status"`           // working | complete | blocked | capped | unfinished | failed
	Summary string `json:"summary,omitempty"`
	Why     string `json:"why,omitempty"`
}

// roundJSON is the usage of one round: stage is setup (planning, personas), coordination
// (round 1 is an agent's first turn) or presentation.
type roundJSON struct {
	Stage string `json:"stage"`
	Round int    `json:"round,omitempty"`
	usageJSON
}

func toRounds(rs []readmodel.RoundUsage, known bool) []roundJSON {
	out := make([]roundJSON, len(rs))
	for i, r := range rs {
		out[i] = roundJSON{Stage: r.Stage, Round: r.Round, usageJSON: toUsageJSON(r.Usage, r.CostUSD, known)}
	}
	return out
}

type statusVote struct {
	VotedForAgent string `json:"voted_for_agent"`
	VotedForLabel string `json:"voted_for_label"` // the answer label, agent<j>.<k>
	ReasonPreview string `json:"reason_preview"`
	VotedForAnon  string `json:"voted_for_anon"` // ours: agent<j>
}

type statusError struct {
	Type      string  `json:"type"`
	Message   string  `json:"message"`
	Timestamp float64 `json:"timestamp"`
}

type statusResults struct {
	Votes              map[string]int `json:"votes"`
	Winner             *string        `json:"winner"`
	FinalAnswerPreview *string        `json:"final_answer_preview"`
	EndReason          *string        `json:"end_reason"` // ours
	ExitCode           *int           `json:"exit_code"`  // ours

	// Ours: the final presentation was cut off; the preview ends with the note saying so.
	FinalTruncated bool `json:"final_answer_truncated,omitempty"`
	// Ours: why the winner won (readmodel.Decision), once coordination ended.
	Decision *readmodel.Decision `json:"decision,omitempty"`

	// Decomposition mode: the parts that did not finish ("agentN (why)"), the workspace files
	// gathered into the presenter's, and those more than one part wrote differently.
	UnfinishedParts []string             `json:"unfinished_parts,omitempty"`
	GatheredFiles   int                  `json:"gathered_files,omitempty"`
	FileConflicts   []event.FileConflict `json:"file_conflicts,omitempty"`
}

// tokensJSON is token usage as status.json and metadata.json show it.
type tokensJSON struct {
	InputTokens       int64 `json:"input_tokens"`
	CachedInputTokens int64 `json:"cached_input_tokens"`
	CacheWriteTokens  int64 `json:"cache_write_tokens"`
	OutputTokens      int64 `json:"output_tokens"`
	ReasoningTokens   int64 `json:"reasoning_tokens"`
	// Ours: some of the counts are the engine's estimate, for calls it cut off before the
	// provider reported them.
	Estimated bool `json:"estimated,omitempty"`
}

// usageJSON is token usage with its cost. CostKnown is false when a model without a price
// used tokens: CostUSD then leaves its cost out.
type usageJSON struct {
	tokensJSON
	CostUSD   float64 `json:"cost_usd"`
	CostKnown bool    `json:"cost_known"`
}

func toTokensJSON(u provider.Usage) tokensJSON {
	return tokensJSON{
		InputTokens:       u.InputTokens,
		CachedInputTokens: u.CachedInputTokens,
		CacheWriteTokens:  u.CacheWriteTokens,
		OutputTokens:      u.OutputTokens,
		ReasoningTokens:   u.ReasoningTokens,
		Estimated:         u.Estimated,
	}
}

func toUsageJSON(u provider.Usage, cost float64, known bool) usageJSON {
	return usageJSON{toTokensJSON(u), roundCost(cost), known}
}

// statusAgents keeps the agents in config order, as MassGen's dict does.
type statusAgents struct {
	ids    []string
	agents []statusAgent
}

func (a statusAgents) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, id := range a.ids {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshal(id)
		if err != nil {
			return nil, err
		}
		v, err := marshal(a.agents[i])
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// StatusJSON renders status.json for s as of now: MassGen's fields (features.md 2.6) computed
// from the CURRENT state, so invalidated votes do not count, vote_cast is the agent's current
// vote and the final answer preview appears once the answer exists (B11). now sets
// last_updated and, while the session runs, elapsed_seconds. The output is indented JSON with
// a fixed key order and a trailing newline.
func StatusJSON(s *readmodel.State, now time.Time) []byte {
	f := statusFile{
		Meta: statusMeta{
			LastUpdated: unix(now),
			SessionID:   s.SessionID,
			LogDir:      s.LogDir,
			Question:    s.Question,
			StartTime:   unix(s.StartTime),
			Status:      "running",
			Turn:        s.Turn,
			Resumed:     resumesJSON(s),
		},
		Coordination: statusCoord{
			Phase:                s.Phase,
			CompletionPercentage: s.CompletionPercentage(),
			IsFinalPresentation:  s.FinalPresentation,
			AnswerSetVersion:     s.Version,
			Attempt:              s.Attempt,
			MaxAttempts:          s.MaxAttempts,
		},
		Results: statusResults{Votes: map[string]int{}, Winner: optional(s.Winner)},
		Usage:   toUsageJSON(s.Totals.Usage, s.Totals.CostUSD, s.CostKnown()),
		Rounds:  toRounds(s.Totals.Rounds, s.CostKnown()),
	}
	for _, r := range s.Restarts {
		f.Coordination.Restarts = append(f.Coordination.Restarts, statusRestart{Attempt: r.Attempt, Agent: r.Agent, Reason: r.Reason, Instructions: r.Instructions})
	}
	if ev := s.Evaluation; ev != nil {
		f.Coordination.PostEvaluation = &statusEvaluation{Agent: ev.Agent, Attempt: ev.Attempt, Decision: ev.Decision, Auto: ev.Auto, Why: ev.Why}
	}
	for _, w := range s.Writes {
		f.Writes = append(f.Writes, statusServer{Status: w.Status, Detail: w.Detail, Time: unix(w.Time)})
	}
	for _, ts := range s.ToolServers {
		if f.MCPServers == nil {
			f.MCPServers = map[string]statusServer{}
		}
		f.MCPServers[ts.Name] = statusServer{Status: ts.Status, Detail: ts.Detail, Time: unix(ts.Time)}
	}
	if in := s.Integrated; in != nil {
		f.Results.UnfinishedParts, f.Results.GatheredFiles, f.Results.FileConflicts = in.Unfinished(), len(in.Files), in.Conflicts
	}
	end := now
	if s.Ended {
		end = s.EndTime
		f.Meta.Status = s.SessionStatus
		f.Results.ExitCode = &s.ExitCode
	}
	if !s.StartTime.IsZero() {
		f.Meta.ElapsedSeconds = max(0, math.Round(end.Sub(s.StartTime).Seconds()*1000)/1000)
	}
	if a := s.ActiveAgent(); a != nil {
		f.Coordination.ActiveAgent = &a.ID
	}
	for _, a := range s.Agents {
		f.Agents.ids = append(f.Agents.ids, a.ID)
		f.Agents.agents = append(f.Agents.agents, agentStatus(s, a))
	}
	for _, c := range s.Tally() {
		f.Results.Votes[c.AnswerLabel] = c.Votes
	}
	if s.Final != nil {
		p := preview(s.Final.Content, finalPreview)
		if s.Final.Truncated != "" {
			p += " " + s.Final.Truncated
			f.Results.FinalTruncated = true
		}
		f.Results.FinalAnswerPreview = &p
	}
	f.Results.EndReason = optional(s.EndReason)
	f.Results.Decision = s.Decision()
	if s.Ended {
		// Once, at the end: the path is over every call, too much to redo on every update.
		f.Latency = latencyOf(s, end)
	}
	if t := s.Totals; t.RetriedCalls > 0 {
		f.Retried = &retriedJSON{Calls: t.RetriedCalls, CostUSD: roundCost(t.RetriedCostUSD)}
	}
	b, err := marshalIndent(f)
	if err != nil {
		// Only strings, numbers and bools: marshalling cannot fail.
		panic("runlog: status.json: " + err.Error())
	}
	return b
}

func agentStatus(s *readmodel.State, a *readmodel.Agent) statusAgent {
	st := statusAgent{
		Status:            a.Status,
		AnswerCount:       len(a.Answers),
		LatestAnswerLabel: optional(a.LatestAnswerLabel()),
		TimesRestarted:    a.Restarts,
		Label:             a.Label,
		CausedRestarts:    a.CausedRestarts,
		ErrorCount:        a.Errors,
		Usage:             toUsageJSON(a.Usage, a.CostUSD, a.CostKnown()),
		Rounds:            toRounds(a.Rounds, a.CostKnown()),
		CLISession:        a.Session,
	}
	if p := a.Part; p != nil {
		st.Subtask = &statusSubtask{Text: p.Subtask, Source: p.Source, Status: p.Status, Summary: preview(p.Summary, reasonPreview), Why: p.Why}
	}
	if v := a.Vote; s.Counts(v) {
		st.VoteCast = &statusVote{
			VotedForAgent: v.Target,
			VotedForLabel: v.AnswerLabel,
			ReasonPreview: preview(v.Reason, reasonPreview),
			VotedForAnon:  v.TargetLabel,
		}
	}
	if !a.LastActivity.IsZero() {
		t := unix(a.LastActivity)
		st.LastActivity = &t
	}
	// The error shows while it describes the agent's status; ErrorCount keeps the history.
	if e := a.LastError; e != nil && (a.Status == readmodel.StatusError || a.Status == readmodel.StatusTimeout || a.Status == readmodel.StatusDead) {
		st.Error = &statusError{Type: e.Type, Message: e.Message, Timestamp: unix(e.Time)}
	}
	return st
}

// unix returns t as unix seconds with microsecond precision, 0 for the zero time.
func unix(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixMicro()) / 1e6
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// preview returns the first n runes of s; longer text is cut and ends in "...".
func preview(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimRight(string(r[:n-3]), " \t\n") + "..."
}

// marshal is event.MarshalPlain: the log files are read by people and scripts.
var marshal = event.MarshalPlain

// marshalIndent is marshal, indented by two spaces, with a trailing newline.
func marshalIndent(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// roundCost drops float noise below a nano-dollar.
func roundCost(c float64) float64 { return math.Round(c*1e9) / 1e9 }
