// Package event defines the session's event stream: the closed set of things that happen in a
// run, in order. Every view (terminal, automation, status.json, coordination table, web, replay)
// is a projection of this stream, and events.jsonl is the stream on disk.
package event

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"massgen/internal/provider"
)

// Event is one entry of the stream. Seq starts at 1 and has no gaps.
type Event struct {
	Seq     int64
	Time    time.Time
	Payload Payload
	// Preview and Previewed serve sessions whose events arrive twice (on Temporal, a turn's
	// events stream while it runs, and are confirmed when it ends): a preview is shown live
	// and never logged (it is not numbered: Seq is the last logged event's); a previewed
	// event is logged and not shown again (see preview.go).
	Preview, Previewed bool
}

// Payload is one of the concrete event types below.
type Payload interface{ Type() string }

// AgentInfo describes one agent at session start.
type AgentInfo struct {
	ID      string `json:"id"`
	Label   string `json:"label"` // agent<i>, stable for the session
	Backend string `json:"backend"`
	Model   string `json:"model,omitempty"`
	// BaseURL is the endpoint the agent's requests go to, credentials removed ("" for
	// offline backends).
	BaseURL string `json:"base_url,omitempty"`
	// CustomEndpoint marks a BaseURL that is not the backend type's default (a base_url,
	// --base-url or *_BASE_URL variable): the views say so, since the key goes there too.
	CustomEndpoint bool `json:"custom_endpoint,omitempty"`
	// Unpriced marks a model the price table does not know: its cost is unknown (reported as
	// 0) and max_cost_usd cannot stop its spending.
	Unpriced bool `json:"unpriced,omitempty"`
	// VotingSensitivity is the agent's own voting_sensitivity, when it overrides the session's.
	VotingSensitivity string `json:"voting_sensitivity,omitempty"`
	// VoteWeight is what the agent's vote weighs (orchestrator.agent_weights or learned
	// weights), set only when Settings.VoteWeighting weighs votes: with it the log alone
	// recomputes the tally.
	VoteWeight float64 `json:"vote_weight,omitempty"`
}

// Settings are the coordination settings a session ran with.
type Settings struct {
	VotingSensitivity     string  `json:"voting_sensitivity"`
	AnswerNovelty         string  `json:"answer_novelty_requirement"`
	MaxNewAnswersPerAgent int     `json:"max_new_answers_per_agent,omitempty"`
	FinalPresentation     string  `json:"final_presentation"`
	FailureBudget         int     `json:"failure_budget"`
	MaxCostUSD            float64 `json:"max_cost_usd,omitempty"`
	TimeoutSeconds        float64 `json:"orchestrator_timeout_seconds"`
	AgentTimeoutSeconds   float64 `json:"agent_timeout_seconds"`
	// The output caps (orchestrator.max_response_chars, ...).
	MaxResponseChars        int `json:"max_response_chars,omitempty"`
	MaxToolCallsPerResponse int `json:"max_tool_calls_per_response,omitempty"`
	MaxAnswerChars          int `json:"max_answer_chars,omitempty"`

	// MassGen v0.1.9x coordination settings. FinalPresentation above stays the older word
	// (regenerate|verbatim|synthesize) for readers that know only it.
	FinalAnswerStrategy         string `json:"final_answer_strategy,omitempty"` // winner_present | winner_reuse | synthesize
	PresenterAgent              string `json:"presenter_agent,omitempty"`
	MaxNewAnswersGlobal         int    `json:"max_new_answers_global,omitempty"`
	DeferVotingUntilAllAnswered bool   `json:"defer_voting_until_all_answered,omitempty"`
	DisableInjection            bool   `json:"disable_injection,omitempty"`
	// SkipVoting is true when the session has no vote round: skip_voting, or a quick
	// synthesize run that implies it.
	SkipVoting bool           `json:"skip_voting,omitempty"`
	Fairness   *Fairness      `json:"fairness,omitempty"`
	Rounds     *RoundTimeouts `json:"round_timeouts,omitempty"`
	// PersonaGenerator is the diversity mode when persona_generator is enabled, "" otherwise.
	PersonaGenerator string `json:"persona_generator,omitempty"`
	// CoordinationMode is "decomposition" in that mode, "" for voting.
	CoordinationMode string `json:"coordination_mode,omitempty"`
	// VoteWeighting is orchestrator.vote_weighting when it is not plain: weighted or
	// confidence (what a vote is worth, coord/weights.go).
	VoteWeighting string `json:"vote_weighting,omitempty"`
	// MaxOrchestrationRestarts is coordination.max_orchestration_restarts: with it above 0
	// the presenter evaluates each final answer but the last attempt's, and the turn's
	// attempts are logged in attempt_<k>/ folders.
	MaxOrchestrationRestarts int `json:"max_orchestration_restarts,omitempty"`
	// DeferPeerUpdatesUntilRestart: peers' new answers wait for an agent's next turn.
	DeferPeerUpdatesUntilRestart bool `json:"defer_peer_updates_until_restart,omitempty"`
}

// Fairness is fairness_enabled and its caps; the caps are 0 when it is off.
type Fairness struct {
	Enabled                        bool `json:"fairness_enabled"`
	LeadCapAnswers                 int  `json:"fairness_lead_cap_answers,omitempty"`
	MaxMidstreamInjectionsPerRound int  `json:"max_midstream_injections_per_round,omitempty"`
}

// RoundTimeouts are the per-round timeouts (0: that round has none).
type RoundTimeouts struct {
	InitialSeconds    float64 `json:"initial_round_timeout_seconds,omitempty"`
	SubsequentSeconds float64 `json:"subsequent_round_timeout_seconds,omitempty"`
	GraceSeconds      float64 `json:"round_timeout_grace_seconds"`
}

// SessionStarted opens the stream.
type SessionStarted struct {
	Question  string      `json:"question"`
	Turn      int         `json:"turn"`
	SessionID string      `json:"session_id"`
	LogDir    string      `json:"log_dir,omitempty"`
	Agents    []AgentInfo `json:"agents"`
	Settings  Settings    `json:"settings"`
	// History is the conversation carried from earlier turns (interactive mode).
	History []provider.Message `json:"history,omitempty"`
}

// TurnStarted: an agent begins a coordination turn (MassGen's context_received). Version is the
// answer-set version the agent sees; Available the labels it may vote for.
type TurnStarted struct {
	Agent     string   `json:"agent"`
	Version   int      `json:"version"`
	Available []string `json:"available"`
	// Fresh is true when the conversation starts anew, false when it continues (P6).
	Fresh bool `json:"fresh"`
}

// ModelCalled: a model call is about to be made. Messages are those appended to the agent's
// conversation since its previous call (the whole conversation when Fresh).
type ModelCalled struct {
	Agent    string             `json:"agent"`
	Stage    provider.Stage     `json:"stage"`
	Attempt  int                `json:"attempt"` // 1..3 within a turn
	Fresh    bool               `json:"fresh"`
	System   string             `json:"system,omitempty"` // set when Fresh
	Messages []provider.Message `json:"messages"`
}

// TextDelta is streamed answer text; Presentation marks the final presentation.
type TextDelta struct {
	Agent        string `json:"agent"`
	Text         string `json:"text"`
	Presentation bool   `json:"presentation,omitempty"`
}

// ReasoningDelta is streamed reasoning text.
type ReasoningDelta struct {
	Agent        string `json:"agent"`
	Text         string `json:"text"`
	Presentation bool   `json:"presentation,omitempty"`
}

// Round timeout phases.
const (
	RoundSoft = "soft" // the round's time is up: the agent was told to submit now
	RoundCut  = "cut"  // the grace period is over too: the round was cut off
)

// RoundTimeout: an agent's coordination round (one turn) went over
// initial_round_timeout_seconds (its first round) or subsequent_round_timeout_seconds.
type RoundTimeout struct {
	Agent          string  `json:"agent"`
	Round          int     `json:"round"` // 1 for the agent's first round
	Phase          string  `json:"phase"` // RoundSoft | RoundCut
	LimitSeconds   float64 `json:"limit_seconds"`
	GraceSeconds   float64 `json:"grace_seconds"`
	ElapsedSeconds float64 `json:"elapsed_seconds"`
}

// VoteDeferred: a vote came before every live agent had an answer
// (defer_voting_until_all_answered). It does not count; the agent waits for Waiting (labels)
// to answer and then takes its turn again.
type VoteDeferred struct {
	Agent       string   `json:"agent"`
	TargetLabel string   `json:"target_label"`
	Reason      string   `json:"reason"`
	Waiting     []string `json:"waiting"`
}

// AgentWaiting: a live agent that holds no vote does not start a turn for now, and Reason
// says why (deferred voting, the fairness lead cap). It starts one as soon as that changes.
type AgentWaiting struct {
	Agent  string `json:"agent"`
	Reason string `json:"reason"`
}

// ToolRejected: a call was refused and the error went back to the model as its result.
type ToolRejected struct {
	Agent  string `json:"agent"`
	CallID string `json:"call_id,omitempty"`
	Tool   string `json:"tool"`
	Error  string `json:"error"`
}

// EnforcementSent: the response held no workflow tool call and the agent was told to make one.
type EnforcementSent struct {
	Agent   string `json:"agent"`
	Message string `json:"message"`
}

// AnswerSubmitted: an answer was accepted. It starts answer-set Version; every vote cast on an
// earlier version stops counting (Invalidated lists the voters who lost theirs).
type AnswerSubmitted struct {
	Agent       string   `json:"agent"`
	Label       string   `json:"label"` // agent<i>.<k>
	Content     string   `json:"content"`
	Version     int      `json:"version"`
	Invalidated []string `json:"invalidated,omitempty"`
	// Confidence is the confidence its author stated with it (0 to 1), nil when none.
	Confidence *float64 `json:"confidence,omitempty"`
	// Changedoc is the decision journal its author kept with it, [SELF] replaced by Label
	// (coordination.enable_changedoc); "" when none.
	Changedoc string `json:"changedoc,omitempty"`
}

// ChecklistSubmitted: an agent's submit_checklist call was accepted (checklist_gated). Version
// is the answer-set version it scored; Verdict is vote or new_answer; Best the label ranked
// best, correctness first; Forced a vote verdict only because the agent cannot answer again.
type ChecklistSubmitted struct {
	Agent              string            `json:"agent"`
	CallID             string            `json:"call_id"`
	Version            int               `json:"version"`
	Verdict            string            `json:"verdict"`
	Best               string            `json:"best,omitempty"`
	Forced             bool              `json:"forced,omitempty"`
	Required           int               `json:"required"`
	Cutoff             int               `json:"cutoff"`
	EffectiveThreshold int               `json:"effective_threshold"`
	Scores             []ChecklistScores `json:"scores,omitempty"`
}

// ChecklistScores are one answer's scores in a checklist.
type ChecklistScores struct {
	Label     string          `json:"label"`
	TrueCount int             `json:"true_count"`
	Total     int             `json:"total"`
	Primary   int             `json:"primary"`
	Items     []ChecklistItem `json:"items"`
}

// ChecklistItem is one criterion's score.
type ChecklistItem struct {
	ID        string `json:"id"`
	Score     int    `json:"score"`
	Passed    bool   `json:"passed"`
	Reasoning string `json:"reasoning,omitempty"`
}

// VoteCast: a vote was accepted and counts while Version is current.
type VoteCast struct {
	Agent       string `json:"agent"`
	Target      string `json:"target"`       // real id of the agent voted for
	TargetLabel string `json:"target_label"` // agent<j>
	AnswerLabel string `json:"answer_label"` // agent<j>.<k>, the answer voted for
	Reason      string `json:"reason"`
	Version     int    `json:"version"`
	// Confidence is the confidence the voter stated (0 to 1), nil when none; under
	// vote_weighting confidence it scales the vote.
	Confidence *float64 `json:"confidence,omitempty"`
	// Scoped: the voter read a bounded view of its peers (peer_view), so the vote counts on
	// across new answers until one it was shown is replaced, which AnswerSubmitted.Invalidated
	// then names.
	Scoped bool `json:"scoped,omitempty"`
}

// VoteIgnored: a vote was cast on an answer set that is no longer current, so it does not count;
// the agent continues with the new answers (P6).
type VoteIgnored struct {
	Agent          string `json:"agent"`
	TargetLabel    string `json:"target_label"`
	Reason         string `json:"reason"`
	SeenVersion    int    `json:"seen_version"`
	CurrentVersion int    `json:"current_version"`
}

// AgentError: a turn failed. Consecutive counts failed turns in a row against Budget.
type AgentError struct {
	Agent       string `json:"agent"`
	Message     string `json:"message"`
	Consecutive int    `json:"consecutive"`
	Budget      int    `json:"budget"`
	Timeout     bool   `json:"timeout,omitempty"`
	// Fatal marks an error retrying cannot help (a rejected key, an unknown model): the
	// agent is dead at once, whatever Consecutive says.
	Fatal bool `json:"fatal,omitempty"`
}

// AgentDead: the agent is left out of the rest of the session.
type AgentDead struct {
	Agent  string `json:"agent"`
	Reason string `json:"reason"`
}

// AgentSession: the agent's backend runs in a session of its own (a coding-agent CLI's
// session id, resumed by its later calls); sent when it starts or changes.
type AgentSession struct {
	Agent     string `json:"agent"`
	SessionID string `json:"session_id"`
}

// UsageReported: token usage of one model call and its cost.
type UsageReported struct {
	Agent   string         `json:"agent"`
	Usage   provider.Usage `json:"usage"`
	CostUSD float64        `json:"cost_usd"`
	// Round is the agent's coordination round the call belongs to (1 for its first turn); 0
	// for a call before coordination (planning, personas) or in the final presentation,
	// which Presentation marks.
	Round        int  `json:"round,omitempty"`
	Presentation bool `json:"presentation,omitempty"`
	// Retried, on Temporal, is the attempt of the agent's turn this call was made in when
	// that attempt was lost (its worker died or went silent) and the turn was run again: the
	// call was paid for and its response thrown away. 0 for every other call.
	Retried int `json:"retried,omitempty"`
}

// Tally is one agent's count in a vote result.
type Tally struct {
	Agent  string   `json:"agent"`
	Label  string   `json:"label"`
	Votes  int      `json:"votes"`
	Voters []string `json:"voters,omitempty"`
	// Score is what the votes are worth when Settings.VoteWeighting weighs them (0 under
	// plain voting, where Votes is the score).
	Score float64 `json:"score,omitempty"`
}

// Coordination end reasons.
const (
	EndConsensus   = "consensus"
	EndTimeout     = "timeout"
	EndAllDead     = "all_dead"
	EndInterrupted = "interrupted"
	EndBudget      = "budget"
	EndSkipped     = "skipped"
	// EndAllAnswered: with skip_voting, every live agent has answered (or
	// max_new_answers_global allows no more): the winner is chosen without votes.
	EndAllAnswered = "all_answered"
	// EndDecided: with end_when_decided, the votes cast settled the winner before every live
	// agent had voted (coord.Machine.Decided).
	EndDecided = "decided"
	// EndAllStopped: in decomposition mode, every live agent signalled its part done (stop, or
	// its answer cap reached).
	EndAllStopped = "all_stopped"
)

// CoordinationEnded: no more answers or votes. Winner is "" when no agent has an answer.
type CoordinationEnded struct {
	Reason      string  `json:"reason"`
	Winner      string  `json:"winner,omitempty"`
	WinnerLabel string  `json:"winner_label,omitempty"`
	AnswerLabel string  `json:"answer_label,omitempty"`
	Tie         bool    `json:"tie,omitempty"`
	Tally       []Tally `json:"tally,omitempty"`
}

// FinalStarted: the presenter begins the final presentation (MassGen's final_round_start).
// Agent is the winner unless presenter_agent names another agent; Winner is then set to the
// winner. Note says why the configured presenter does not present, when it does not.
type FinalStarted struct {
	Agent  string `json:"agent"`
	Mode   string `json:"mode"` // regenerate | verbatim | synthesize
	Winner string `json:"winner,omitempty"`
	Note   string `json:"note,omitempty"`
}

// FinalAnswer: the final answer. Fallback is true when the stored answer was used because the
// presentation produced nothing or failed. Truncated is true when the presentation was cut
// off and Content is what it wrote until then; TruncatedBy says what cut it.
type FinalAnswer struct {
	Agent       string `json:"agent"`
	Label       string `json:"label"` // agent<i>.final
	Content     string `json:"content"`
	Mode        string `json:"mode"`
	Fallback    bool   `json:"fallback,omitempty"`
	Truncated   bool   `json:"truncated,omitempty"`
	TruncatedBy string `json:"truncated_by,omitempty"` // TruncatedTokenLimit | TruncatedResponseChars
	// Changedoc is the presenter's definitive decision journal, "" when none.
	Changedoc string `json:"changedoc,omitempty"`
}

// What cut a final presentation off.
const (
	TruncatedTokenLimit    = "token_limit"        // the model's output token limit
	TruncatedResponseChars = "max_response_chars" // massgen's cap on one response
)

// TruncationNote is how every view marks a truncated final answer: "" when it is complete.
func (f FinalAnswer) TruncationNote() string {
	if !f.Truncated {
		return ""
	}
	return TruncationNote(cmp.Or(f.TruncatedBy, TruncatedTokenLimit))
}

// TruncationNote is the mark of an answer cut off by what (TruncatedTokenLimit or
// TruncatedResponseChars); "" when what is "".
func TruncationNote(what string) string {
	switch what {
	case "":
		return ""
	case TruncatedResponseChars:
		return "(truncated at orchestrator.max_response_chars)"
	}
	return "(truncated at the token limit)"
}

// Session statuses.
const (
	StatusCompleted   = "completed"
	StatusTimeout     = "timeout"
	StatusInterrupted = "interrupted"
	StatusFailed      = "failed"
)

// Phases a resumed session picks up in (SessionResumed.Phase).
const (
	ResumeCoordination = "coordination" // agents still had to answer or vote
	ResumePresentation = "presentation" // coordination had ended; the final answer was not written
	ResumeFinishing    = "finishing"    // the final answer was written; only the end was missing
)

// SessionResumed: a new process took the session up from its log (massgen resume) after the
// one before stopped without ending it (killed, crashed) or was interrupted. Everything logged
// up to event AfterSeq (of type AfterType) stands: accepted answers, votes still current,
// labels, the workspaces; Redo names the agents whose call in flight is made again.
type SessionResumed struct {
	Turn      int    `json:"turn"`
	AfterSeq  int64  `json:"after_seq"`
	AfterType string `json:"after_type"`
	Phase     string `json:"phase"` // ResumeCoordination | ResumePresentation | ResumeFinishing
	// Previous is how the log ended: "killed" (no session_ended) or the status of the
	// session_ended that a Ctrl-C left (interrupted).
	Previous string `json:"previous"`
	// Dropped says what of the log was not taken up: a last line cut off mid-event.
	Dropped string   `json:"dropped,omitempty"`
	Redo    []string `json:"redo,omitempty"`
}

// SessionEnded closes the stream.
type SessionEnded struct {
	Status          string  `json:"status"`
	ExitCode        int     `json:"exit_code"`
	Error           string  `json:"error,omitempty"`
	DurationSeconds float64 `json:"duration_seconds"`
}

func (SessionStarted) Type() string      { return "session_started" }
func (TurnStarted) Type() string         { return "turn_started" }
func (ModelCalled) Type() string         { return "model_called" }
func (TextDelta) Type() string           { return "text_delta" }
func (ReasoningDelta) Type() string      { return "reasoning_delta" }
func (ToolCalled) Type() string          { return "tool_called" }
func (ToolCallStreaming) Type() string   { return "tool_call_streaming" }
func (ToolRejected) Type() string        { return "tool_rejected" }
func (ToolResult) Type() string          { return "tool_result" }
func (ToolOutput) Type() string          { return "tool_output" }
func (ToolImage) Type() string           { return "tool_image" }
func (ToolServerStatus) Type() string    { return "tool_server_status" }
func (PlanningDecided) Type() string     { return "planning_decided" }
func (PersonasGenerated) Type() string   { return "personas_generated" }
func (QuestionParaphrased) Type() string { return "question_paraphrased" }
func (SubtasksAssigned) Type() string    { return "subtasks_assigned" }
func (AgentStopped) Type() string        { return "agent_stopped" }
func (PartsIntegrated) Type() string     { return "parts_integrated" }
func (RoundTimeout) Type() string        { return "round_timeout" }
func (VoteDeferred) Type() string        { return "vote_deferred" }
func (AgentWaiting) Type() string        { return "agent_waiting" }
func (EnforcementSent) Type() string     { return "enforcement_sent" }
func (AnswerSubmitted) Type() string     { return "answer_submitted" }
func (VoteCast) Type() string            { return "vote_cast" }
func (ChecklistSubmitted) Type() string  { return "checklist_submitted" }
func (VoteIgnored) Type() string         { return "vote_ignored" }
func (AgentError) Type() string          { return "agent_error" }
func (AgentDead) Type() string           { return "agent_dead" }
func (UsageReported) Type() string       { return "usage" }
func (CoordinationEnded) Type() string   { return "coordination_ended" }
func (FinalStarted) Type() string        { return "final_started" }
func (FinalAnswer) Type() string         { return "final_answer" }
func (SessionEnded) Type() string        { return "session_ended" }
func (AgentSession) Type() string        { return "agent_session" }
func (SessionResumed) Type() string      { return "session_resumed" }

type envelope struct {
	Seq       int64           `json:"seq"`
	Time      time.Time       `json:"time"`
	Type      string          `json:"type"`
	Preview   bool            `json:"preview"`
	Previewed bool            `json:"previewed"`
	Data      json.RawMessage `json:"data"`
}

// MarshalJSON writes the {seq, time, type, data} envelope. It is built by hand around the
// marshalled payload, which would otherwise be re-scanned and copied as a json.RawMessage.
func (e Event) MarshalJSON() ([]byte, error) {
	if e.Payload == nil {
		return nil, fmt.Errorf("event %d: no payload", e.Seq)
	}
	data, err := json.Marshal(e.Payload)
	if err != nil {
		return nil, fmt.Errorf("event %d %s: %w", e.Seq, e.Payload.Type(), err)
	}
	return e.envelope(data, false), nil
}

// envelope wraps marshalled payload data; clipped marks data the event log had to shorten.
func (e Event) envelope(data []byte, clipped bool) []byte {
	b := make([]byte, 0, len(data)+96)
	b = append(b, `{"seq":`...)
	b = strconv.AppendInt(b, e.Seq, 10)
	b = append(b, `,"time":"`...)
	b = e.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","type":"`...)
	b = append(b, e.Payload.Type()...)
	b = append(b, '"')
	if e.Preview {
		b = append(b, `,"preview":true`...)
	}
	if e.Previewed {
		b = append(b, `,"previewed":true`...)
	}
	if clipped {
		b = append(b, `,"clipped":true`...)
	}
	b = append(b, `,"data":`...)
	b = append(b, data...)
	return append(b, '}')
}

// UnmarshalJSON reads the envelope; Payload holds the concrete value type, never a pointer.
func (e *Event) UnmarshalJSON(b []byte) error {
	var env envelope
	if err := json.Unmarshal(b, &env); err != nil {
		return err
	}
	decode, ok := decoders[env.Type]
	if !ok {
		return fmt.Errorf("unknown event type %q", env.Type)
	}
	p, err := decode(env.Data)
	if err != nil {
		return fmt.Errorf("event %d %s: %w", env.Seq, env.Type, err)
	}
	e.Seq, e.Time, e.Payload = env.Seq, env.Time, p
	e.Preview, e.Previewed = env.Preview, env.Previewed
	return nil
}
