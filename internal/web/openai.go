package web

import (
	"massgen/internal/httpserve"

	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"massgen/internal/provider"
)

// Wire types of the OpenAI Chat Completions API, as much of them as the server reads or writes.

type chatRequest struct {
	Model         string        `json:"model"`
	Messages      []chatMessage `json:"messages"`
	Stream        bool          `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type contentPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type completion struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []choice     `json:"choices"`
	Usage   *usage       `json:"usage,omitempty"`
	MassGen *massgenInfo `json:"massgen,omitempty"`
}

type choice struct {
	Index        int             `json:"index"`
	Message      *answerMessage  `json:"message,omitempty"`
	Delta        *delta          `json:"delta,omitempty"`
	FinishReason *string         `json:"finish_reason"`
	Logprobs     json.RawMessage `json:"logprobs"`
}

type answerMessage struct {
	Role    string  `json:"role"`
	Content string  `json:"content"`
	Refusal *string `json:"refusal"`
}

type delta struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
}

type usage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	TotalTokens         int64 `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// massgenInfo is the non-standard object non-streaming answers carry; OpenAI clients ignore it.
type massgenInfo struct {
	Winner    string `json:"winner"`
	SessionID string `json:"session_id"` // the log_<timestamp> folder
	LogDir    string `json:"log_dir"`    // log_<timestamp>/turn_<n>, relative to the log root
	Status    string `json:"status"`
}

type model struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// toUsage converts the summed usage of every agent's calls. Output tokens include reasoning
// tokens, as OpenAI's completion_tokens do; input tokens include cached ones.
func toUsage(u provider.Usage) *usage {
	out := &usage{
		PromptTokens:     u.InputTokens,
		CompletionTokens: u.OutputTokens,
		TotalTokens:      u.InputTokens + u.OutputTokens,
	}
	out.PromptTokensDetails.CachedTokens = u.CachedInputTokens
	out.CompletionTokensDetails.ReasoningTokens = u.ReasoningTokens
	return out
}

// The error body and the JSON writer are httpserve's, which massgen mcp --http answers with
// too; the /api routes use the same shape. These short names keep the handlers' calls as
// they were.
type apiError = httpserve.APIError

var (
	newAPIError = httpserve.NewAPIError
	writeError  = httpserve.WriteError
	writeJSON   = httpserve.WriteJSON
)

// conversation turns chat messages into the question (the last user message) and the history
// (the user and assistant messages before it). System and developer messages are ignored: each
// agent keeps its own system message from the team's config.
func conversation(msgs []chatMessage) (string, []provider.Message, error) {
	last := -1
	for i, m := range msgs {
		switch m.Role {
		case "system", "developer":
		case "user":
			last = i
		case "assistant":
		default:
			return "", nil, fmt.Errorf("messages[%d]: role %q is not supported (use system, user or assistant)", i, m.Role)
		}
	}
	if last < 0 {
		return "", nil, errors.New("messages hold no user message: the last user message is the question")
	}
	for i := last + 1; i < len(msgs); i++ {
		if msgs[i].Role == "assistant" {
			return "", nil, fmt.Errorf("messages[%d]: the conversation must end with the user's question", i)
		}
	}
	var history []provider.Message
	for i, m := range msgs[:last] {
		role := provider.RoleUser
		switch m.Role {
		case "system", "developer":
			continue
		case "assistant":
			role = provider.RoleAssistant
		}
		text, err := messageText(m.Content)
		if err != nil {
			return "", nil, fmt.Errorf("messages[%d].content: %w", i, err)
		}
		history = append(history, provider.Message{Role: role, Content: text})
	}
	question, err := messageText(msgs[last].Content)
	if err != nil {
		return "", nil, fmt.Errorf("messages[%d].content: %w", last, err)
	}
	if strings.TrimSpace(question) == "" {
		return "", nil, fmt.Errorf("messages[%d].content: the question is empty", last)
	}
	return question, history, nil
}

// messageText reads a message's content: a string, null, or a list of text parts.
func messageText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []contentPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("want a string or a list of text parts")
	}
	var b strings.Builder
	for i, p := range parts {
		if p.Type != "text" {
			return "", fmt.Errorf("part %d: type %q is not supported (only text)", i, p.Type)
		}
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(p.Text)
	}
	return b.String(), nil
}
