package anthropic

// Hosted (server) tools: web search and code execution run on Anthropic's side inside one
// response. The stream carries a server_tool_use block (the input) and later a result block
// naming it by tool_use_id; the model already has the result, so the translator only reports
// the pair, once the result arrives, as a provider.HostedToolChunk for the engine to show.

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"strings"

	"massgen/internal/provider"
)

// hostedResults maps the result block types of the hosted tools to the name they are reported
// under. code_execution_20250825 answers with the bash and text-editor blocks; the plain
// code_execution block is what the older and newer versions send.
var hostedResults = map[string]string{
	"web_search_tool_result":                 provider.HostedWebSearch,
	"code_execution_tool_result":             provider.HostedCodeExecution,
	"bash_code_execution_tool_result":        provider.HostedCodeExecution,
	"text_editor_code_execution_tool_result": provider.HostedCodeExecution,
}

// hostedResult pairs a result block with the server_tool_use it answers. A result whose call
// never arrived (not seen in this turn) is still reported, with {} as its arguments.
func (t *translator) hostedResult(name, raw string) (provider.HostedToolChunk, error) {
	var r struct {
		ToolUseID string          `json:"tool_use_id"`
		Content   json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		return provider.HostedToolChunk{}, fmt.Errorf("decode result: %w", err)
	}
	c := provider.HostedToolChunk{Call: provider.ToolCall{ID: r.ToolUseID, Name: name, Arguments: "{}"}}
	if b, ok := t.servers[r.ToolUseID]; ok {
		c.Call.Arguments = b.arguments()
		delete(t.servers, r.ToolUseID)
	}
	var err error
	if name == provider.HostedWebSearch {
		c.Result, c.Failed, err = searchOutcome(r.Content)
	} else {
		c.Result, c.Failed, err = codeOutcome(r.Content)
	}
	if err != nil {
		return provider.HostedToolChunk{}, fmt.Errorf("decode result content: %w", err)
	}
	return c, nil
}

// searchOutcome summarises a web search: how many results and the first few, or the error.
func searchOutcome(content json.RawMessage) (string, bool, error) {
	content = bytes.TrimSpace(content)
	if len(content) == 0 || string(content) == "null" {
		return "", false, nil
	}
	if content[0] != '[' {
		var e struct {
			ErrorCode string `json:"error_code"`
		}
		if err := json.Unmarshal(content, &e); err != nil {
			return "", false, err
		}
		return "search failed: " + cmp.Or(e.ErrorCode, "unknown error"), true, nil
	}
	var results []searchResult
	if err := json.Unmarshal(content, &results); err != nil {
		return "", false, err
	}
	sources := make([]provider.Source, len(results))
	for i, r := range results {
		sources[i] = provider.Source{Title: r.Title, URL: r.URL}
	}
	return provider.SearchSummary(sources), false, nil
}

// searchResult is one web_search_result, as far as a summary needs it.
type searchResult struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

// codeContent is the content of any code execution result block, as far as a summary needs it.
type codeContent struct {
	Type            string          `json:"type"`
	ErrorCode       string          `json:"error_code"`
	ErrorMessage    string          `json:"error_message"`
	Stdout          string          `json:"stdout"`
	Stderr          string          `json:"stderr"`
	EncryptedStdout string          `json:"encrypted_stdout"`
	ReturnCode      *int64          `json:"return_code"`
	Content         json.RawMessage `json:"content"` // output files, or the text a view shows
	IsFileUpdate    bool            `json:"is_file_update"`
	Lines           []string        `json:"lines"`
	StartLine       int64           `json:"start_line"`
	NumLines        int64           `json:"num_lines"`
	TotalLines      int64           `json:"total_lines"`
	OldStart        int64           `json:"old_start"`
}

// codeOutcome summarises a code execution result: the return code and what the run printed,
// or what a file operation did. An error block or a non-zero return code is a failure.
func codeOutcome(content json.RawMessage) (string, bool, error) {
	content = bytes.TrimSpace(content)
	if len(content) == 0 || string(content) == "null" {
		return "", false, nil
	}
	var c codeContent
	if err := json.Unmarshal(content, &c); err != nil {
		return "", false, err
	}
	switch {
	case c.ErrorCode != "" || strings.HasSuffix(c.Type, "_error"):
		s := "error: " + cmp.Or(c.ErrorCode, "unknown")
		if c.ErrorMessage != "" {
			s += ": " + c.ErrorMessage
		}
		return provider.Clip(s, provider.MaxHostedOutput), true, nil
	case strings.HasSuffix(c.Type, "_view_result"):
		var text string
		_ = json.Unmarshal(c.Content, &text) // a view's content is the file's text
		end := c.StartLine + c.NumLines - 1
		return provider.Clip(fmt.Sprintf("lines %d-%d of %d\n%s", c.StartLine, end, c.TotalLines, text), provider.MaxHostedOutput), false, nil
	case strings.HasSuffix(c.Type, "_create_result"):
		if c.IsFileUpdate {
			return "file updated", false, nil
		}
		return "file created", false, nil
	case strings.HasSuffix(c.Type, "_str_replace_result"):
		return provider.Clip(fmt.Sprintf("replaced at line %d\n%s", c.OldStart, strings.Join(c.Lines, "\n")), provider.MaxHostedOutput), false, nil
	}
	var rc int64
	if c.ReturnCode != nil {
		rc = *c.ReturnCode
	}
	parts := []string{fmt.Sprintf("return code %d", rc)}
	if out := strings.TrimRight(c.Stdout, "\n"); out != "" {
		parts = append(parts, "stdout:\n"+out)
	} else if c.EncryptedStdout != "" {
		parts = append(parts, "stdout: encrypted")
	}
	if errOut := strings.TrimRight(c.Stderr, "\n"); errOut != "" {
		parts = append(parts, "stderr:\n"+errOut)
	}
	var files []json.RawMessage
	if json.Unmarshal(c.Content, &files) == nil && len(files) > 0 {
		parts = append(parts, fmt.Sprintf("%d output file(s)", len(files)))
	}
	return provider.Clip(strings.Join(parts, "\n"), provider.MaxHostedOutput), rc != 0, nil
}
