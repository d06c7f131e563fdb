package event

import (
	"slices"
	"unicode/utf8"

	"massgen/internal/provider"
)

// The models' tool calls, and what massgen's own tools report.

// ToolCallStreaming: the model is writing a tool call's arguments, Bytes of them so far (a
// long new_answer takes seconds to stream); ToolCalled follows once the call is complete.
// Only views use it, to show the agent is not idle.
type ToolCallStreaming struct {
	Agent  string `json:"agent"`
	CallID string `json:"call_id,omitempty"`
	Tool   string `json:"tool"`
	Bytes  int    `json:"bytes"`
}

// ToolCalled records a complete tool call the model made.
type ToolCalled struct {
	Agent string            `json:"agent"`
	Call  provider.ToolCall `json:"call"`
}

// ToolResult: a non-workflow tool (MCP, file, command) ran; Content is what went back to the
// model, cut to a few KiB here (the model got all of it). For a tool the provider ran itself
// (web search, code execution) Content is the provider's short account of it.
type ToolResult struct {
	Agent      string  `json:"agent"`
	CallID     string  `json:"call_id"`
	Tool       string  `json:"tool"`
	Content    string  `json:"content"`
	IsError    bool    `json:"is_error,omitempty"`
	Truncated  bool    `json:"truncated,omitempty"`
	DurationMS float64 `json:"duration_ms"`
	// FromCode marks a call the agent's code made through its tools' socket
	// (enable_code_based_tools), not the model: it has no ToolCalled, and CallID is
	// "code-N", counted per agent.
	FromCode bool `json:"from_code,omitempty"`
}

// MaxToolContent caps the tool output a ToolResult carries; the model still gets all of it.
const MaxToolContent = 4 << 10

// SetContent sets Content to s, cut to MaxToolContent bytes at a rune's start, and marks a cut.
func (r *ToolResult) SetContent(s string) {
	n := MaxToolContent
	if len(s) <= n {
		r.Content, r.Truncated = s, false
		return
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	r.Content, r.Truncated = s[:n], true
}

// ToolOutput is output a running tool streams (a command's stdout, for example).
type ToolOutput struct {
	Agent  string `json:"agent"`
	CallID string `json:"call_id"`
	Tool   string `json:"tool"`
	Text   string `json:"text"`
}

// ToolImage is an image a running tool saved in the agent's workspace (a browser's or a
// desktop's screenshot): Path relative to the workspace, Bytes its size, and Thumb a small
// JPEG of it as a data: URL (at most MaxThumb bytes; "" when it could not be made), for views
// to show live without reading the workspace.
type ToolImage struct {
	Agent  string `json:"agent"`
	CallID string `json:"call_id"`
	Tool   string `json:"tool"`
	Path   string `json:"path"`
	Bytes  int    `json:"bytes"`
	Thumb  string `json:"thumb,omitempty"`
}

// MaxThumb bounds ToolImage.Thumb, so that a session of many screenshots keeps a small log.
const MaxThumb = 48 << 10

// ToolServerStatus reports an MCP server starting, ready, failing, dying or stopping, or, with
// one of the Server* names below, a problem of massgen's own tools.
type ToolServerStatus struct {
	Server string `json:"server"`
	Status string `json:"status"`
	Detail string `json:"detail,omitempty"`
}

// The names ToolServerStatus uses for massgen's own tools, which are not MCP servers.
const (
	ServerTools     = "tools"     // a tool call that outlived its session
	ServerWorkspace = "workspace" // snapshots
	ServerCommands  = "commands"  // execute_command and background shells: how they are confined
	ServerUploads   = "uploads"   // upload_files: the files read, and OpenAI's vector stores made and deleted
	ServerWrites    = "writes"    // write_mode: the agents' copies of writable context paths, and what was applied
	ServerMemory    = "memory"    // filesystem memory: memories not carried into the next turn
)

// OwnServer reports whether name is one of massgen's own tools rather than an MCP server.
func OwnServer(name string) bool {
	return slices.Contains([]string{ServerTools, ServerWorkspace, ServerCommands, ServerUploads, ServerWrites, ServerMemory}, name)
}
