// Package provider defines the one interface every model backend implements, and the neutral
// request, message and chunk types that cross it. Backends translate these to and from their
// wire format and nothing else; the engine cannot tell one backend from another.
package provider

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
)

// Provider streams one model call. Implementations must be safe for concurrent use by one
// agent at a time and must stop promptly when ctx is done.
type Provider interface {
	// Stream starts the call lazily on the first pull; breaking out of the loop releases it.
	// Errors travel as the second value and end the stream.
	Stream(ctx context.Context, req Request) iter.Seq2[Chunk, error]
}

// Finisher is a provider whose work can outlast its last Stream: a coding-agent CLI still
// waiting on a tool call when coordination ends, which reports its usage only when its run
// ends. Finish lets it end that work and returns the usage reported since the last Stream;
// the engine calls it once coordination is over, with a bounded ctx.
type Finisher interface {
	Finish(ctx context.Context) (Usage, error)
}

// Role is the author of a message.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one entry of a conversation. The system prompt is not a message: it lives in
// Request.System so that every backend can place it where its API wants it.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content,omitempty"`
	// ToolCalls are the calls an assistant message made.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID ties a tool message to the call it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// IsError marks a tool result that reports a rejected call.
	IsError bool `json:"is_error,omitempty"`
	// Stable marks the end of the prefix that later requests repeat (the task and the current
	// answers, shared by every agent that reads the same answers): a backend whose cache needs
	// explicit breakpoints (Anthropic) places one on it.
	Stable bool `json:"stable,omitempty"`
}

// ToolCall is one complete call as the model made it. Arguments is the raw JSON text the
// model produced, which may be malformed: validation is the caller's job.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolSpec offers one tool to the model. Parameters is a JSON Schema object.
type ToolSpec struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"`
}

// Stage tells a backend which part of the protocol a call belongs to (MassGen's CoordinationStage).
type Stage string

const (
	StageInitial      Stage = "initial_answer"
	StageEnforcement  Stage = "enforcement"
	StagePresentation Stage = "presentation"
	// StagePlanning is planning mode's check, before coordination: one question, no tools.
	StagePlanning Stage = "planning"
	// StagePersona is persona_generator's call, before coordination: one question, no tools.
	StagePersona Stage = "persona"
	// StageDecompose is decomposition mode's task decomposer, before coordination: one
	// question, no tools.
	StageDecompose Stage = "decompose"
	// StageBroadcast is a side call answering another agent's ask_others question on a copy
	// of the agent's conversation: no tools, text only.
	StageBroadcast Stage = "broadcast"
	// StageParaphrase and StageParaphraseCheck are orchestrator.dspy's calls before
	// coordination: writing the question's variants, and checking their meaning.
	StageParaphrase      Stage = "paraphrase"
	StageParaphraseCheck Stage = "paraphrase_check"
	// StagePropose is massgen eval --optimize's call that writes candidate instructions.
	StagePropose Stage = "propose_instructions"
	// StagePostEvaluation is the presenter's check of the final answer when orchestration
	// restarts are on: its own tools, and submit or restart_orchestration to end it.
	StagePostEvaluation Stage = "post_evaluation"
	// StageVerify is a verifier's check of the leading answer (orchestrator.verifiers): one
	// question, no tools, a JSON verdict.
	StageVerify Stage = "verify"
	// StageMemory is memory's call to an agent's own model: the facts to remember from a
	// turn, or the summary of a conversation being compressed. One question, no tools.
	StageMemory Stage = "memory"
)

// ToolChoice is whether a model may call the tools a request offers.
type ToolChoice string

const (
	// ToolChoiceAuto lets the model decide, the APIs' default: nothing is sent.
	ToolChoiceAuto ToolChoice = ""
	// ToolChoiceNone forbids tool calls while the tools stay in the request, so a prompt
	// cache keyed on them still matches: Responses and Chat Completions tool_choice "none",
	// Anthropic {"type":"none"}, Gemini functionCallingConfig mode NONE. A backend that
	// cannot send it (a coding-agent CLI) ignores it, so the caller must still bound the
	// calls it gets. It overrides a tool_choice set in the pass-through params.
	ToolChoiceNone ToolChoice = "none"
)

// Request is everything one model call needs. Order matters for prompt caching (P10): System
// and Tools are the stable prefix, Messages grow at the end.
type Request struct {
	Model    string     `json:"model,omitempty"`
	System   string     `json:"system,omitempty"`
	Messages []Message  `json:"messages"`
	Tools    []ToolSpec `json:"tools,omitempty"`
	// ToolChoice says whether the model may call the tools offered; ToolChoiceAuto (the
	// zero value) sends nothing and leaves it to the API's default.
	ToolChoice ToolChoice `json:"tool_choice,omitempty"`
	Stage      Stage      `json:"stage,omitempty"`
	// Params are backend keys passed through to the request body unchanged.
	Params map[string]any `json:"-"`
	// MaxResponseBytes bounds the text, reasoning and tool-call arguments a backend takes in
	// for this response (0: DefaultMaxResponseBytes). Past it the backend stops reading and
	// ends the stream with an *Error wrapping ErrResponseTooLarge. The engine's own caps,
	// counted in characters on complete chunks, normally stop a response first; this bounds
	// what a backend assembles before the engine sees it, such as one endless tool call.
	MaxResponseBytes int `json:"-"`
	// CacheKey names the requests that share a prefix (one session's agents on one model), for
	// a backend whose cache routes by key (OpenAI's prompt_cache_key); "" for none.
	CacheKey string `json:"-"`
	// Attachments are the files sent with the task (upload_files; see attach.go). They are
	// never serialised with the request: events and logs show the messages, not the files.
	Attachments []Attachment `json:"-"`
	// FileSearch names the OpenAI vector stores the hosted file_search tool reads (the
	// task's documents, uploaded for the session); a backend without file search refuses it.
	FileSearch []string `json:"-"`
}

// Chunk is one piece of a streamed response: TextDelta, ReasoningDelta, ToolCallProgress,
// ToolCallChunk, HostedToolChunk, UsageChunk or Done.
type Chunk interface{ isChunk() }

// TextDelta is visible answer text as it arrives.
type TextDelta struct{ Text string }

// ReasoningDelta is reasoning (thinking, reasoning summary) text as it arrives.
type ReasoningDelta struct{ Text string }

// ToolCallChunk is one complete tool call, its arguments fully assembled.
type ToolCallChunk struct{ Call ToolCall }

// Hosted tool names, as HostedToolChunk reports them.
const (
	HostedWebSearch     = "web_search"
	HostedCodeExecution = "code_execution"
	HostedFileSearch    = "file_search"
)

// HostedToolChunk reports a tool the provider ran on its own side (Options.WebSearch,
// Options.CodeExecution, Request.FileSearch), once it has finished: the model already has its
// result, so the engine only shows it. Call.Name is HostedWebSearch, HostedCodeExecution or
// HostedFileSearch and Call.Arguments a JSON object with what the wire says was asked
// ({"query": ...}, {"code": ...} or {"queries": [...]}); Result is a short account of what came back ("" when the wire says nothing).
type HostedToolChunk struct {
	Call   ToolCall
	Result string
	Failed bool
}

// SessionChunk names the provider's own session the call ran in (a coding-agent CLI's
// session id, which a later call resumes). Backends send it when the session starts or
// changes; it is only shown.
type SessionChunk struct{ ID string }

// ToolCallProgress reports a tool call whose arguments are still streaming: Bytes of them so
// far. It is only for views, so that a model writing a long new_answer does not look idle;
// the call itself comes as a ToolCallChunk once complete. Backends send one when a call's
// first fragment arrives, then one each time its arguments pass another ProgressStep bytes
// (see Progress). ID may be empty when the API names the call only at its end.
type ToolCallProgress struct {
	ID, Name string
	Bytes    int
}

// ProgressStep is how many argument bytes stream between two ToolCallProgress chunks.
const ProgressStep = 1024

// Progress returns the ToolCallProgress to send when a call's arguments grow from before to
// after bytes, and whether there is one: on the first bytes and at each ProgressStep passed.
func Progress(id, name string, before, after int) (ToolCallProgress, bool) {
	if after <= before || (before > 0 && before/ProgressStep == after/ProgressStep) {
		return ToolCallProgress{}, false
	}
	return ToolCallProgress{ID: id, Name: name, Bytes: after}, true
}

// UsageChunk reports the tokens of this call. A backend may send several; they add up.
type UsageChunk struct{ Usage Usage }

// Done ends a successful stream. StopReason is the backend's own word for why the model
// stopped ("end_turn", "length", "MAX_TOKENS", ...), kept as is for logs; Stop normalises it.
type Done struct{ StopReason string }

// Stop is why the model stopped, the same for every backend: what the engine acts on.
func (d Done) Stop() Stop { return StopFor(d.StopReason) }

// Stop is a normalised stop reason.
type Stop int

const (
	// StopOther is a reason no other value covers, or none given; the response counts as finished.
	StopOther Stop = iota
	// StopEnd: the model finished its turn (or hit a stop sequence).
	StopEnd
	// StopToolUse: the model finished with tool calls for the caller to run.
	StopToolUse
	// StopLength: the output token limit cut the response short. Its text may end mid-sentence
	// and its last tool call's arguments may be cut too: it is not a finished response.
	StopLength
	// StopContentFilter: the provider withheld or cut the output for its content policy.
	StopContentFilter
)

func (s Stop) String() string {
	switch s {
	case StopEnd:
		return "end"
	case StopToolUse:
		return "tool_use"
	case StopLength:
		return "length"
	case StopContentFilter:
		return "content_filter"
	}
	return "other"
}

// StopFor normalises a backend's raw stop reason. It knows the words of every API massgen
// speaks, so that each backend only passes its raw reason through:
// OpenAI chat and compatible servers (stop, length, tool_calls, function_call, content_filter),
// Anthropic (end_turn, stop_sequence, tool_use, max_tokens, model_context_window_exceeded,
// refusal, pause_turn) and Gemini (STOP, MAX_TOKENS, SAFETY, ...).
func StopFor(raw string) Stop {
	switch raw {
	case "stop", "end_turn", "stop_sequence", "STOP", "FINISH_REASON_STOP", "eos", "end":
		return StopEnd
	case "tool_calls", "tool_use", "function_call":
		return StopToolUse
	case "length", "max_tokens", "max_output_tokens", "MAX_TOKENS", "model_context_window_exceeded",
		"continuation", "CONTINUATION", "model_length":
		return StopLength
	case "content_filter", "refusal", "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII":
		return StopContentFilter
	}
	return StopOther
}

func (TextDelta) isChunk()        {}
func (ReasoningDelta) isChunk()   {}
func (ToolCallChunk) isChunk()    {}
func (ToolCallProgress) isChunk() {}
func (HostedToolChunk) isChunk()  {}
func (SessionChunk) isChunk()     {}
func (UsageChunk) isChunk()       {}
func (Done) isChunk()             {}

// Usage counts tokens of one or more calls. InputTokens includes cached ones.
type Usage struct {
	InputTokens       int64 `json:"input_tokens"`
	CachedInputTokens int64 `json:"cached_input_tokens,omitempty"`
	CacheWriteTokens  int64 `json:"cache_write_tokens,omitempty"`
	OutputTokens      int64 `json:"output_tokens"`
	ReasoningTokens   int64 `json:"reasoning_tokens,omitempty"`
	// WebSearches counts the hosted web searches the provider bills for (searches, or
	// sources for xAI's live search).
	WebSearches int64 `json:"web_searches,omitempty"`
	// FileSearches counts the hosted file searches the provider bills for (OpenAI's
	// file_search calls).
	FileSearches int64 `json:"file_searches,omitempty"`
	// Estimated marks counts the engine estimated, in part or whole, because the call was cut
	// off before the provider reported them.
	Estimated bool `json:"estimated,omitempty"`
	// Unknown marks usage that was spent but neither reported nor estimable (a coding-agent
	// CLI stopped before it said what it used): its cost is unknown.
	Unknown bool `json:"unknown,omitempty"`
	// CostUSD is the provider's own figure for what the tokens cost, when it reports one (a
	// coding-agent CLI's total_cost_usd); it then stands in for the price table.
	CostUSD float64 `json:"cost_usd,omitempty"`
}

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		InputTokens:       u.InputTokens + o.InputTokens,
		CachedInputTokens: u.CachedInputTokens + o.CachedInputTokens,
		CacheWriteTokens:  u.CacheWriteTokens + o.CacheWriteTokens,
		OutputTokens:      u.OutputTokens + o.OutputTokens,
		ReasoningTokens:   u.ReasoningTokens + o.ReasoningTokens,
		WebSearches:       u.WebSearches + o.WebSearches,
		FileSearches:      u.FileSearches + o.FileSearches,
		Estimated:         u.Estimated || o.Estimated,
		Unknown:           u.Unknown || o.Unknown,
		CostUSD:           u.CostUSD + o.CostUSD,
	}
}

// Error is a failed call. Fatal errors (a rejected key, an unknown model) make the agent dead
// at once; others count against its failure budget.
type Error struct {
	Provider string
	Status   int // HTTP status, 0 when there was none
	Fatal    bool
	Err      error
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s: status %d: %v", e.Provider, e.Status, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Provider, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// IsFatal reports whether err says retrying cannot help.
func IsFatal(err error) bool {
	var pe *Error
	return errors.As(err, &pe) && pe.Fatal
}

// Options configure a network backend. Every backend package exposes New(Options).
type Options struct {
	// Type is the configured backend type ("openai", "groq", ...), used in messages.
	Type  string
	Model string
	// APIKey is the secret; KeyEnv names the variable it came from (or "api_key in the
	// config"), the only thing an error may say about it.
	APIKey string
	KeyEnv string
	// BaseURL overrides the service's default endpoint.
	BaseURL string
	// APIVersion is the api-version every azure_openai request carries.
	APIVersion string
	// Params are backend keys passed through to the request body unchanged.
	Params map[string]any
	// WebSearch and CodeExecution switch on the provider's hosted tools (MassGen's
	// enable_web_search, enable_code_execution / enable_code_interpreter).
	WebSearch, CodeExecution bool
	// HTTPClient is used for every request when set (tests, proxies).
	HTTPClient *http.Client
	// MaxRetries bounds the retries of 429, 5xx and connection errors, which honour
	// Retry-After; 0 means 3.
	MaxRetries int
}

// Retries returns MaxRetries with its default applied.
func (o Options) Retries() int {
	if o.MaxRetries <= 0 {
		return 3
	}
	return o.MaxRetries
}

// StatusError turns a failed HTTP exchange into an *Error. A rejected key (401, 403) is fatal
// and says which variable to fix; an unknown model or endpoint (404) and a rejected request
// (400, 422) are fatal too, since repeating them cannot help; anything else can be retried. detail is the service's own message, which must not hold
// the key.
func StatusError(o Options, status int, detail string) *Error {
	name := o.Type
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		env := o.KeyEnv
		if env == "" {
			env = "the api_key in the config"
		}
		return &Error{Provider: name, Status: status, Fatal: true,
			Err: fmt.Errorf("the API key was rejected: check %s (%s)", env, detail)}
	case http.StatusNotFound:
		return &Error{Provider: name, Status: status, Fatal: true,
			Err: fmt.Errorf("not found: check the model %q and the base_url (%s)", o.Model, detail)}
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		// Sending the same request again gets the same answer.
		return &Error{Provider: name, Status: status, Fatal: true,
			Err: fmt.Errorf("the request was rejected: check the backend's parameters in the config (%s)", detail)}
	}
	return &Error{Provider: name, Status: status, Err: errors.New(detail)}
}
