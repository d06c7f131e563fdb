package clitest

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
)

// GeminiTools are Gemini CLI's own file tools.
var GeminiTools = Tools{
	Write: func(path, content string) Call {
		return Call{Name: "write_file", Args: map[string]any{"file_path": path, "content": content}}
	},
	Read: func(path string) Call { return Call{Name: "read_file", Args: map[string]any{"file_path": path}} },
}

// Gemini serves generateContent and streamGenerateContent (alt=sse) from a Brain.
func Gemini(b *Brain) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stream := strings.HasSuffix(r.URL.Path, ":streamGenerateContent")
		if !stream && !strings.HasSuffix(r.URL.Path, ":generateContent") {
			if strings.HasSuffix(r.URL.Path, ":countTokens") {
				writeJSON(w, map[string]any{"totalTokens": 100})
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
			SystemInstruction struct {
				Parts []struct{ Text string } `json:"parts"`
			} `json:"systemInstruction"`
			Contents []struct {
				Role  string `json:"role"`
				Parts []struct {
					Text         string `json:"text"`
					FunctionCall *struct {
						ID   string         `json:"id"`
						Name string         `json:"name"`
						Args map[string]any `json:"args"`
					} `json:"functionCall"`
					FunctionResponse *struct {
						ID       string          `json:"id"`
						Name     string          `json:"name"`
						Response json.RawMessage `json:"response"`
					} `json:"functionResponse"`
				} `json:"parts"`
			} `json:"contents"`
			Tools []struct {
				FunctionDeclarations []struct{ Name string } `json:"functionDeclarations"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var tools []string
		for _, t := range req.Tools {
			for _, d := range t.FunctionDeclarations {
				tools = append(tools, d.Name)
			}
		}
		if b.Script.Hang && find(tools, "new_answer") != "" {
			b.hold(r)
			return
		}
		sys := ""
		for _, p := range req.SystemInstruction.Parts {
			sys += p.Text
		}
		msgs := []Msg{{Role: "system", Text: sys}}
		for _, c := range req.Contents {
			m := Msg{Role: c.Role}
			for _, p := range c.Parts {
				switch {
				case p.FunctionCall != nil:
					m.Calls = append(m.Calls, Call{ID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Args: p.FunctionCall.Args})
				case p.FunctionResponse != nil:
					msgs = append(msgs, Msg{Role: "tool", CallID: p.FunctionResponse.ID, CallFor: p.FunctionResponse.Name, Text: string(p.FunctionResponse.Response)})
				default:
					m.Text += p.Text
				}
			}
			if m.Text != "" || len(m.Calls) > 0 {
				msgs = append(msgs, m)
			}
		}
		reply := b.Next(tools, msgs)
		var parts []map[string]any
		if reply.Text != "" {
			parts = append(parts, map[string]any{"text": reply.Text})
		}
		for _, c := range reply.Calls {
			parts = append(parts, map[string]any{"functionCall": map[string]any{"name": c.Name, "args": c.Args}})
		}
		resp := map[string]any{
			"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}},
			"usageMetadata": map[string]any{"promptTokenCount": 100, "candidatesTokenCount": 20, "cachedContentTokenCount": 10,
				"thoughtsTokenCount": 5, "totalTokenCount": 125},
			"modelVersion": "gemini-2.5-pro",
		}
		if !stream {
			writeJSON(w, resp)
			return
		}
		newSSE(w).event("", resp)
	})
}
