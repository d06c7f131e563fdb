package engine

import (
	"context"
	"time"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/permission"
	"massgen/internal/provider"
	"massgen/internal/taskplan"
	"massgen/internal/tool"
	"massgen/internal/usage"
)

// What a session is given (Options, its Agents) and what it returns (Result).

// Agent is one participant as the engine runs it.
type Agent struct {
	ID      string
	Backend string
	Model   string
	System  string // the agent's own system message
	// VotingSensitivity overrides Orchestrator.VotingSensitivity in this agent's prompts
	// ("" inherits it).
	VotingSensitivity string
	Params            map[string]any
	Provider          provider.Provider
	// Tools are offered besides the workflow tools (MCP, workspace files, commands); the engine
	// runs them in its tool loop.
	Tools tool.Set
	// Workspace, when set, is snapshotted on every accepted answer and given write access to
	// the context paths for the final presentation only.
	Workspace Workspace
	// Permit, when set, is asked before each of the agent's tool calls runs (the permission
	// engine); a refusal ("" lets the call run) goes back to the model as the call's result.
	// It may wait for a person, and must return when ctx ends.
	Permit func(ctx context.Context, tool, args string) (refusal string)
	// HoldsSession marks a provider that keeps its own session across calls (a coding-agent
	// CLI): its conversation continues turn after turn, whatever turn_context says, so that
	// each turn resumes that session with the update (P6) instead of starting a new one.
	HoldsSession bool
	// Inbox, when set, is read at each of the agent's turn boundaries and after each of its
	// tool rounds: text for it (a background subagent's result, as a user message) and what
	// that work paid, added to its cost. It must not block.
	Inbox func() (text string, spent provider.Usage)
	// Subtask is the agent's part of the task in decomposition mode ("": the task decomposer
	// assigns one).
	Subtask string
	// Compact, when set, is asked before each coordination call whether the conversation
	// must be compressed to fit the model's context window (memory compression); it returns
	// nil when it need not be.
	Compact func(ctx context.Context, system string, msgs []provider.Message) (*Compacted, error)

	// BaseURL is where the agent's requests go (credentials removed), CustomEndpoint that it
	// is not the backend type's default, and Unpriced marks a model without a price; the
	// engine only reports them in SessionStarted.
	BaseURL        string
	CustomEndpoint bool
	Unpriced       bool
	// SavePlan, when set, is given the agent's task plan as tasks/plan.json each time it
	// changes (task_planning_filesystem_mode): it writes it into the agent's workspace.
	SavePlan func(data []byte) error
}

// Compacted is a conversation Agent.Compact compressed.
type Compacted struct {
	Messages      []provider.Message
	Usage         provider.Usage // what the summary cost
	Before, After int            // estimated tokens
	Window        int
	Dropped       int    // messages summarised
	Saved         string // where their full text is, "" if nowhere
}

// Workspace is what the engine needs of an agent's working directory.
type Workspace interface {
	// Snapshot publishes the workspace to the other agents (read-only, under the agent's label).
	Snapshot() error
	// GrantFinal and RevokeFinal open and close write access to writable context paths.
	GrantFinal()
	RevokeFinal()
	// ShareText rewrites the agent's own paths in its answer to where the others can read them.
	ShareText(answer string) string
	// ReadFile returns at most max bytes of the workspace file rel and whether it was cut;
	// shared reads the last snapshot, what the other agents see. A missing file is "".
	ReadFile(rel string, max int, shared bool) (string, bool, error)
}

// Options configure a session.
type Options struct {
	Question string
	// History holds earlier turns of an interactive session (user and assistant messages).
	History   []provider.Message
	Turn      int
	SessionID string
	LogDir    string
	Agents    []Agent
	// Orchestrator and Timeouts come from the config; zero values get MassGen's defaults. The
	// one exception is Fairness.Enabled, a bool: false is off here (config makes it true by
	// default); with it on, zero caps get MassGen's 2 and 2.
	Orchestrator config.Orchestrator
	Timeouts     config.Timeouts
	Bus          *event.Bus
	// Recall, when set, runs after the preamble and before coordination (persistent memory):
	// what it returns for agent i is added to that agent's system message, and what it pays
	// through pay counts in the session's cost.
	Recall func(ctx context.Context, pay func(agent int, u provider.Usage)) []string
	// Remember, when set, runs once the final answer is published and before the session
	// ends (persistent memory); what it pays through pay counts in the session's cost, as
	// the agent's (a Usage with CostUSD set keeps that cost).
	Remember func(ctx context.Context, r Result, pay func(agent int, u provider.Usage))
	// RemoteMemory marks, for a Coordinator, agents with persistent memory whose store is
	// where the replicas run: Recall is taken with the steps before coordination
	// (RunPrepare), Remember through RememberOn (remote_memory.go). Run ignores it.
	RemoteMemory bool
	// Preamble is published right after SessionStarted (tool servers that started before).
	Preamble []event.Payload
	// Price returns the USD cost of usage on model; nil prices everything at 0.
	Price func(backend, model string, u provider.Usage) float64
	// RetryDelay is the pause after the n-th consecutive failed turn; nil means n×200 ms.
	RetryDelay func(n int) time.Duration
	// Now reads the clock; nil means time.Now.
	Now func() time.Time
	// Restore, when set, resumes the session its log recorded instead of starting one
	// (massgen resume): see resume.go.
	Restore *Restore
	// ToolGrace is how long a tool may go on after its call timed out or was cancelled before
	// the engine gives up on it and carries on; 0 means 2 s.
	ToolGrace time.Duration
	// Steering, when set, lets the caller stop agents, end coordination and message the
	// agents while the session runs (steer.go).
	Steering *Steering
	// Asks carries a person's answers to the questions agents ask with ask_others when
	// coordination.broadcast is human (the broker of the permission asks); nil means nobody
	// can answer, so each such question ends at once as timed out (broadcast.go).
	Asks *permission.Broker
	// Deliver, when set, is called once the final answer stands (completed or timed out, not
	// interrupted or failed) with the presenting agent's id, before the session ends: it
	// applies that agent's isolated writes (write_mode). An error fails the session (exit 2)
	// with its message.
	Deliver func(ctx context.Context, presenter string) error
	// Previous is the folder of the previous turn's winner workspace, which this turn's
	// workspaces start from, for a session run elsewhere (app.Options.Remote); a local
	// session's tools are given it directly.
	Previous string
	// Paraphraser is the model and cache of orchestrator.dspy (paraphrase.go); nil with
	// DSPy enabled means the first agent's model and no cache.
	Paraphraser *Paraphraser
	// Subagent, when set, runs a subagent the orchestrator launches itself: criteria_mode:
	// bootstrap_subagent's critic and the round evaluator (bootstrap.go). It must return when
	// ctx ends. nil: none can run, and the events of those features say so.
	Subagent func(ctx context.Context, c SubagentCall) SubagentReply
	// PeerContext, when set, is agent k's conversation as it last sent it, for a side call
	// that answers a broadcast question in k's name when this process has not seen k's
	// calls (a replica on a Temporal worker; nil: only the calls seen here).
	PeerContext func(k int) []provider.Message
	// PlanSeed, when set, is the task plan every agent starts with (an execution run,
	// --execute-plan); it needs Orchestrator.TaskPlanning.Enabled.
	PlanSeed []taskplan.Task
	// Personas, when set, are the personas of an earlier turn of the session, one per
	// agent, kept instead of writing new ones (persona_generator.persist_across_turns);
	// PersonasTurn is that turn.
	Personas     []event.Persona
	PersonasTurn int
	// CheckAnswer, when set, checks every new_answer's content before the protocol sees it;
	// an error is sent back to the model as the call's error, to fix within the turn (a
	// planning run's answers must hold a valid plan).
	CheckAnswer func(content string) error
}

// Result is how a session ended.
type Result struct {
	Status    string // event.StatusCompleted, StatusTimeout, StatusInterrupted or StatusFailed
	ExitCode  int    // 0 ok, 2 execution error, 3 timeout, 4 interrupted
	EndReason string // event.EndConsensus, ...
	// Winner is the presenting agent's id, "" when no agent produced an answer.
	Winner      string
	FinalAnswer string
	// TruncatedBy says what cut the final presentation off (event.TruncatedTokenLimit or
	// event.TruncatedResponseChars) when FinalAnswer is what it wrote until then; "" otherwise.
	TruncatedBy string
	Err         error
	Duration    time.Duration
	// Usage and CostUSD add up every model call of the session. CostUnknown is set when
	// part of the cost is unknown: a model without a price used tokens, or a run was stopped
	// before it told its usage.
	Usage       provider.Usage
	CostUSD     float64
	CostUnknown bool
}

// Cost is the session's cost as views show it.
func (r Result) Cost() usage.Amount { return usage.AmountOf(r.CostUSD, r.Usage, !r.CostUnknown) }
