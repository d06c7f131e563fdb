package clitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// ClaudeTools are Claude Code's own file tools.
var ClaudeTools = Tools{
	Write: func(path, content string) Call {
		return Call{Name: "Write", Args: map[string]any{"file_path": path, "content": content}}
	},
	Read: func(path string) Call { return Call{Name: "Read", Args: map[string]any{"file_path": path}} },
}

// CopilotTools are GitHub Copilot CLI's own file tools.
var CopilotTools = Tools{
	Write: func(path, content string) Call {
		return Call{Name: "create", Args: map[string]any{"path": path, "file_text": content}}
	},
	Read: func(path string) Call { return Call{Name: "view", Args: map[string]any{"path": path}} },
}

// Anthropic serves the Messages API (POST /v1/messages, streaming or not) from a Brain.
func Anthropic(b *Brain) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/v1/messages") || strings.Contains(r.URL.Path, "count_tokens") {
			if strings.Contains(r.URL.Path, "count_tokens") {
				writeJSON(w, map[string]any{"input_tokens": 100})
				return
			}
			http.NotFound(w, r)
			return
		}
		var req struct {
			Stream bool `json:"stream"`
			Tools  []struct {
				Name string `json:"name"`
			} `json:"tools"`
			System   json.RawMessage `json:"system"`
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var tools []string
		for _, t := range req.Tools {
			tools = append(tools, t.Name)
		}
		if b.Script.Hang && find(tools, "new_answer") != "" {
			b.hold(r)
			return
		}
		names := map[string]string{}
		msgs := []Msg{{Role: "system", Text: textOf(req.System, "")}}
		for _, m := range req.Messages {
			var blocks []struct {
				Type      string          `json:"type"`
				Text      string          `json:"text"`
				ID        string          `json:"id"`
				Name      string          `json:"name"`
				Input     map[string]any  `json:"input"`
				ToolUseID string          `json:"tool_use_id"`
				Content   json.RawMessage `json:"content"`
			}
			var s string
			if json.Unmarshal(m.Content, &s) == nil {
				msgs = append(msgs, Msg{Role: m.Role, Text: s})
				continue
			}
			_ = json.Unmarshal(m.Content, &blocks)
			out := Msg{Role: m.Role}
			for _, bl := range blocks {
				switch bl.Type {
				case "text":
					out.Text += bl.Text
				case "tool_use":
					names[bl.ID] = bl.Name
					out.Calls = append(out.Calls, Call{ID: bl.ID, Name: bl.Name, Args: bl.Input})
				case "tool_result":
					msgs = append(msgs, Msg{Role: "tool", CallID: bl.ToolUseID, CallFor: names[bl.ToolUseID], Text: textOf(bl.Content, "")})
				}
			}
			if out.Text != "" || len(out.Calls) > 0 {
				msgs = append(msgs, out)
			}
		}
		reply := b.Next(tools, msgs)
		n := b.Requests()
		var content []map[string]any
		if reply.Text != "" {
			content = append(content, map[string]any{"type": "text", "text": reply.Text})
		}
		for k, c := range reply.Calls {
			content = append(content, map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%d_%d", n, k), "name": c.Name, "input": c.Args})
		}
		stop := "end_turn"
		if len(reply.Calls) > 0 {
			stop = "tool_use"
		}
		usage := map[string]any{"input_tokens": 100, "output_tokens": 20, "cache_read_input_tokens": 10, "cache_creation_input_tokens": 0}
		id := fmt.Sprintf("msg_%d", n)
		if !req.Stream {
			writeJSON(w, map[string]any{"id": id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
				"content": content, "stop_reason": stop, "usage": usage})
			return
		}
		sse := newSSE(w)
		sse.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": id, "type": "message",
			"role": "assistant", "model": "claude-sonnet-4-5", "content": []any{}, "stop_reason": nil,
			"usage": map[string]any{"input_tokens": 100, "output_tokens": 1, "cache_read_input_tokens": 10, "cache_creation_input_tokens": 0}}})
		for k, c := range content {
			if c["type"] == "text" {
				sse.event("content_block_start", map[string]any{"type": "content_block_start", "index": k, "content_block": map[string]any{"type": "text", "text": ""}})
				sse.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": k, "delta": map[string]any{"type": "text_delta", "text": c["text"]}})
			} else {
				in, _ := json.Marshal(c["input"])
				sse.event("content_block_start", map[string]any{"type": "content_block_start", "index": k, "content_block": map[string]any{"type": "tool_use", "id": c["id"], "name": c["name"], "input": map[string]any{}}})
				sse.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": k, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(in)}})
			}
			sse.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": k})
		}
		sse.event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop}, "usage": map[string]any{"output_tokens": 20}})
		sse.event("message_stop", map[string]any{"type": "message_stop"})
	})
}

// textOf is the text of a message content: a string, or text parts joined, each followed by
// sep (the Responses API's input parts are lines; Anthropic's blocks run on).
func textOf(raw json.RawMessage, sep string) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct{ Text string }
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text + sep)
	}
	return b.String()
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &sse{w: w, f: f}
}

// event writes one SSE event; name "" writes a data-only event.
func (s *sse) event(name string, v any) {
	b, _ := json.Marshal(v)
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", b)
	if s.f != nil {
		s.f.Flush()
	}
}
