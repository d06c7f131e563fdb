package clitest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
)

// CodexTools are Codex's own tools: its shell writes and reads (apply_patch is offered only
// for the models Codex has metadata for).
var CodexTools = Tools{
	Write: func(path, content string) Call {
		return Call{Name: "exec_command", Args: map[string]any{"cmd": "printf '%s\\n' '" + content + "' > " + path}}
	},
	Read: func(path string) Call {
		return Call{Name: "exec_command", Args: map[string]any{"cmd": "cat " + path}}
	},
}

// Responses serves the OpenAI Responses API (POST /v1/responses, streamed) from a Brain. Each
// Responses call is one model turn: the conversation is the request's input items.
func Responses(b *Brain) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/responses") {
			if strings.HasSuffix(r.URL.Path, "/models") {
				writeJSON(w, map[string]any{"object": "list", "data": []any{}})
				return
			}
			http.NotFound(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		if f := os.Getenv("CLITEST_DUMP"); f != "" {
			_ = os.WriteFile(f, body, 0o644)
		}
		var req struct {
			Tools []struct {
				Type, Name string
				Tools      []struct{ Type, Name string }
			} `json:"tools"`
			Input []struct {
				Type      string          `json:"type"`
				Role      string          `json:"role"`
				Content   json.RawMessage `json:"content"`
				Name      string          `json:"name"`
				Arguments string          `json:"arguments"`
				Input     string          `json:"input"`
				CallID    string          `json:"call_id"`
				Namespace string          `json:"namespace"`
				Output    json.RawMessage `json:"output"`
			} `json:"input"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		// Namespaced tools (Codex puts each MCP server's in one) are offered as namespace__name.
		var tools []string
		namespace := map[string][2]string{}
		for _, t := range req.Tools {
			if t.Type != "namespace" {
				tools = append(tools, t.Name)
				continue
			}
			for _, in := range t.Tools {
				tools = append(tools, t.Name+"__"+in.Name)
				namespace[t.Name+"__"+in.Name] = [2]string{t.Name, in.Name}
			}
		}
		if b.Script.Hang && find(tools, "new_answer") != "" {
			b.hold(r)
			return
		}
		names := map[string]string{}
		var msgs []Msg
		for _, it := range req.Input {
			switch it.Type {
			case "message", "":
				msgs = append(msgs, Msg{Role: it.Role, Text: textOf(it.Content, "\n")})
			case "function_call":
				if it.Namespace != "" {
					it.Name = it.Namespace + "__" + it.Name
				}
				names[it.CallID] = it.Name
				msgs = append(msgs, Msg{Role: "assistant", Calls: []Call{{ID: it.CallID, Name: it.Name, Args: args(it.Arguments)}}})
			case "custom_tool_call":
				names[it.CallID] = it.Name
				msgs = append(msgs, Msg{Role: "assistant", Calls: []Call{{ID: it.CallID, Name: it.Name, Args: map[string]any{"input": it.Input}}}})
			case "function_call_output", "custom_tool_call_output":
				msgs = append(msgs, Msg{Role: "tool", CallID: it.CallID, CallFor: names[it.CallID], Text: textOf(it.Output, "\n")})
			}
		}
		reply := b.Next(tools, msgs)
		n := b.Requests()
		sse := newSSE(w)
		id := fmt.Sprintf("resp_%d", n)
		sse.event("response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": id, "status": "in_progress", "output": []any{}}})
		var output []map[string]any
		if reply.Text != "" {
			item := map[string]any{"type": "message", "id": fmt.Sprintf("msg_%d", n), "role": "assistant", "status": "completed",
				"content": []any{map[string]any{"type": "output_text", "text": reply.Text, "annotations": []any{}}}}
			sse.event("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": len(output), "item": item})
			sse.event("response.output_text.delta", map[string]any{"type": "response.output_text.delta", "output_index": len(output), "content_index": 0, "item_id": item["id"], "delta": reply.Text})
			sse.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": len(output), "item": item})
			output = append(output, item)
		}
		for k, c := range reply.Calls {
			callID := fmt.Sprintf("call_%d_%d", n, k)
			var item map[string]any
			a, _ := json.Marshal(c.Args)
			item = map[string]any{"type": "function_call", "id": "fc_" + callID, "call_id": callID, "name": c.Name, "arguments": string(a), "status": "completed"}
			if ns, ok := namespace[c.Name]; ok {
				item["namespace"], item["name"] = ns[0], ns[1]
			}
			sse.event("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": len(output), "item": item})
			sse.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": len(output), "item": item})
			output = append(output, item)
		}
		sse.event("response.completed", map[string]any{"type": "response.completed", "response": map[string]any{
			"id": id, "status": "completed", "output": output,
			"usage": map[string]any{"input_tokens": 100, "input_tokens_details": map[string]any{"cached_tokens": 10},
				"output_tokens": 20, "output_tokens_details": map[string]any{"reasoning_tokens": 5}, "total_tokens": 120}}})
	})
}
