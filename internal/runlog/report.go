package runlog

import (
	"time"

	"massgen/internal/provider"
	"massgen/internal/readmodel"
)

// TurnReport is one turn as massgen logs --json, the MCP read_session tool and the dashboard's
// session API all write it.
type TurnReport struct {
	Turn int `json:"turn"`
	// Dir is the turn folder; the dashboard, which may be served to other machines, leaves it out.
	Dir             string     `json:"dir,omitempty"`
	Question        string     `json:"question"`
	Status          string     `json:"status" jsonschema:"completed, timeout, failed, interrupted, running, incomplete (the process died) or unknown"`
	ExitCode        *int       `json:"exit_code,omitempty"`
	Error           string     `json:"error,omitempty"`
	StartedAt       *time.Time `json:"started_at,omitempty"`
	DurationSeconds float64    `json:"duration_seconds"`
	// Agents, Votes, Tally, WinnerAnswer, FinalAnswer and Latency come from the turn's log,
	// which the dashboard's list does not read: there they are empty.
	Agents  []AgentReport `json:"agents"`
	Answers int           `json:"answers" jsonschema:"answers accepted in the turn"`
	Votes   []Vote        `json:"votes" jsonschema:"the votes that counted at the end, in agent order"`
	Tally   []Tally       `json:"tally" jsonschema:"the votes that counted at the end, per answer"`
	Winner  string        `json:"winner" jsonschema:"the id of the agent that presented the final answer; empty when none did"`
	// WinnerAnswer is the label of the answer that won, agent<i>.<k>.
	WinnerAnswer string  `json:"winner_answer,omitempty" jsonschema:"the label of the answer that won, agent<i>.<k>"`
	FinalAnswer  string  `json:"final_answer"`
	Tokens       Tokens  `json:"tokens"`
	CostUSD      float64 `json:"cost_usd"`
	// CostKnown is false when part of the cost is unknown (logs written before it was
	// recorded count as known): views then say "unknown", never $0.
	CostKnown  bool     `json:"cost_known"`
	Incomplete string   `json:"incomplete,omitempty" jsonschema:"why the log is known to be incomplete"`
	Latency    *Latency `json:"latency,omitempty" jsonschema:"the wall time and the critical path, the calls that determined it"`
	// Decision is why the winner won, recomputed from the log (nil until coordination ended).
	Decision *readmodel.Decision `json:"decision,omitempty" jsonschema:"why the winner won: the tally with each vote's weight, confidence and reason, the strongest dissent, the verifiers' verdicts"`
	// Attempt is the attempt that produced the final answer (or runs), MaxAttempts how many
	// the turn may run, and Restarts why each restart happened: with orchestration restarts only.
	Attempt     int       `json:"attempt,omitempty" jsonschema:"with orchestration restarts: the attempt that produced the final answer, from 1"`
	MaxAttempts int       `json:"max_attempts,omitempty"`
	Restarts    []Restart `json:"restarts,omitempty" jsonschema:"each restart_orchestration: the attempt it started, who asked, why and what to do"`
}

// AgentReport is one agent in a turn.
type AgentReport struct {
	ID        string  `json:"id"`
	Label     string  `json:"label"`
	Backend   string  `json:"backend"`
	Model     string  `json:"model"`
	Status    string  `json:"status"`
	Answers   int     `json:"answers"`
	VotesCast int     `json:"votes_cast"`
	Errors    int     `json:"errors"`
	Tokens    Tokens  `json:"tokens"`
	CostUSD   float64 `json:"cost_usd"`
	CostKnown bool    `json:"cost_known"`
}

// Vote is one vote that counted: who cast it, for which agent, and why.
type Vote struct {
	Voter  string `json:"voter"`
	For    string `json:"for"`
	Reason string `json:"reason"`
}

// Tally is the votes that counted for one answer.
type Tally struct {
	Answer string   `json:"answer"` // its label, agent<i>.<k>
	Author string   `json:"author"`
	Votes  int      `json:"votes"`
	Voters []string `json:"voters"`
}

// Restart is one restart_orchestration.
type Restart struct {
	Attempt      int    `json:"attempt"`
	Agent        string `json:"agent"`
	Reason       string `json:"reason"`
	Instructions string `json:"instructions"`
}

// Tokens is a token count as every report writes it.
type Tokens struct {
	Input       int64 `json:"input"`
	CachedInput int64 `json:"cached_input"`
	Output      int64 `json:"output"`
	Reasoning   int64 `json:"reasoning"`
	Total       int64 `json:"total" jsonschema:"input and output"`
	// Estimated: some calls were cut off before their usage was reported (see engine).
	Estimated bool `json:"estimated,omitempty"`
}

// TokensOf counts u's tokens.
func TokensOf(u provider.Usage) Tokens {
	return Tokens{Input: u.InputTokens, CachedInput: u.CachedInputTokens, Output: u.OutputTokens,
		Reasoning: u.ReasoningTokens, Total: u.InputTokens + u.OutputTokens, Estimated: u.Estimated}
}

// Add adds o to t.
func (t *Tokens) Add(o Tokens) {
	t.Input, t.CachedInput, t.Output, t.Reasoning = t.Input+o.Input, t.CachedInput+o.CachedInput, t.Output+o.Output, t.Reasoning+o.Reasoning
	t.Total += o.Total
	t.Estimated = t.Estimated || o.Estimated
}

// ReportTurn reports turn t from its files and its events.jsonl (at most MaxEventsRead of it);
// what t's summary files say fills in for a log that cannot be read.
func ReportTurn(t TurnSummary, now time.Time) TurnReport {
	turn, err := ReadTurnLimited(t.Dir)
	var r TurnReport
	if err != nil {
		r = Report(t, nil, now)
		r.Incomplete = err.Error()
	} else {
		r = Report(t, turn.State, now)
		r.Incomplete = turn.Incomplete
	}
	if r.FinalAnswer == "" {
		if text, ok := FinalAnswerText(t); ok {
			r.FinalAnswer = text
		}
	}
	return r
}

// Report reports turn t from its summary and, when st is not nil, its folded log, which wins
// where both know. It reads no file. now ends a running turn's duration and critical path.
func Report(t TurnSummary, st *readmodel.State, now time.Time) TurnReport {
	r := TurnReport{Turn: t.N, Dir: t.Dir, Question: t.Question, Status: t.Status, ExitCode: t.ExitCode, Error: t.Error,
		DurationSeconds: t.Duration, Agents: []AgentReport{}, Votes: []Vote{}, Tally: []Tally{}, Winner: t.Winner,
		Tokens: TokensOf(t.Usage), CostUSD: t.CostUSD, CostKnown: t.CostKnown}
	if !t.StartedAt.IsZero() {
		start := t.StartedAt
		r.StartedAt = &start
	}
	if st == nil {
		return r
	}
	if r.Question == "" {
		r.Question = st.Question
	}
	end := st.LastTime
	switch {
	case st.Ended:
		code := st.ExitCode
		r.Status, r.ExitCode, r.Error, end = st.SessionStatus, &code, st.SessionError, st.EndTime
	case r.Status == StatusRunning:
		end = now
	case r.Status == StatusUnknown:
		r.Status = StatusIncomplete // a log without its end, and no file that says it runs
	}
	if !st.StartTime.IsZero() {
		start := st.StartTime
		r.StartedAt, r.DurationSeconds = &start, max(0, end.Sub(start).Seconds())
	}
	r.Latency = latencyOf(st, end)
	for _, a := range st.Agents {
		r.Agents = append(r.Agents, AgentReport{ID: a.ID, Label: a.Label, Backend: a.Backend, Model: a.Model, Status: string(a.Status),
			Answers: len(a.Answers), VotesCast: a.VotesCast, Errors: a.Errors, Tokens: TokensOf(a.Usage), CostUSD: a.CostUSD, CostKnown: a.CostKnown()})
		if v := a.Vote; v != nil && v.Version == st.Version {
			r.Votes = append(r.Votes, Vote{Voter: a.ID, For: v.Target, Reason: v.Reason})
		}
	}
	for _, c := range st.Tally() {
		r.Tally = append(r.Tally, Tally{Answer: c.AnswerLabel, Author: c.Agent, Votes: c.Votes, Voters: c.Voters})
	}
	if st.Winner != "" {
		r.Winner = st.Winner
	}
	if st.Final != nil {
		r.FinalAnswer = st.Final.Content
	}
	r.Answers, r.WinnerAnswer = st.Totals.Answers, st.WinnerAnswer
	r.Decision = st.Decision()
	r.Attempt, r.MaxAttempts = st.Attempt, st.MaxAttempts
	for _, x := range st.Restarts {
		r.Restarts = append(r.Restarts, Restart{Attempt: x.Attempt, Agent: x.Agent, Reason: x.Reason, Instructions: x.Instructions})
	}
	r.Tokens, r.CostUSD, r.CostKnown = TokensOf(st.Totals.Usage), st.Totals.CostUSD, st.CostKnown()
	return r
}
