package cliagent

import (
	"errors"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"massgen/internal/cliagent/clitest"
	"massgen/internal/mcptool"
	"massgen/internal/prompt"
	"massgen/internal/provider"
)

// copilotAgent is a copilot agent on an Anthropic fake, in a fresh workspace.
func copilotAgent(t *testing.T, policy string) (*Agent, string) {
	t.Helper()
	bin := needCLI(t, "copilot")
	brain := &clitest.Brain{Script: clitest.Script{File: "hello.txt", Content: "hello"}, Tools: clitest.CopilotTools}
	srv := httptest.NewServer(clitest.Anthropic(brain))
	t.Cleanup(srv.Close)
	ws := filepath.Join(t.TempDir(), "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	a, err := New(Options{Type: "copilot", Model: "claude-sonnet-4-5", APIKey: "sk-test", BaseURL: srv.URL, Binary: bin,
		PathEnv: os.Getenv("PATH"), PermissionPolicy: policy})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	a.Bind(Workspace{Dir: ws}, clitest.StateDir(t))
	return a, ws
}

func TestCopilot(t *testing.T) {
	// copilot_permission_policy deny: the CLI's write is refused, massgen's tools still work.
	t.Run("deny", func(t *testing.T) {
		t.Parallel()
		a, ws := copilotAgent(t, "deny")
		chunks, err := collect(t, a, provider.Request{Messages: []provider.Message{{Role: provider.RoleUser, Content: "Write hello.txt."}},
			Tools: prompt.Tools(nil)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(ws, "hello.txt")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("hello.txt was written under deny: %v", err)
		}
		var refused bool
		for _, c := range chunks {
			if h, ok := c.(provider.HostedToolChunk); ok && h.Call.Name == "create" && h.Failed {
				refused = true
			}
		}
		if !refused {
			t.Errorf("no refused create call: %+v", chunks)
		}
		if call := lastCall(t, chunks); call.Name != "new_answer" {
			t.Errorf("last call = %+v, want new_answer", call)
		}
	})
	// The JSON stream carries no token counts: they come from the usage file a run writes
	// as it ends.
	t.Run("usage", func(t *testing.T) {
		t.Parallel()
		a, _ := copilotAgent(t, "")
		a.UseMCPServers([]mcptool.Server{{Name: "everything", Command: needCLI(t, "mcp-server-everything"), Args: []string{"stdio"}}}, nil)
		chunks, err := collect(t, a, provider.Request{Stage: provider.StagePresentation,
			Messages: []provider.Message{{Role: provider.RoleUser, Content: "Present."}}})
		if err != nil {
			t.Fatal(err)
		}
		var text string
		var u provider.Usage
		for _, c := range chunks {
			switch c := c.(type) {
			case provider.TextDelta:
				text += c.Text
			case provider.UsageChunk:
				u = c.Usage
			}
		}
		if !strings.Contains(text, "Final answer: hello") {
			t.Errorf("text = %q", text)
		}
		if u.InputTokens != 110 || u.CachedInputTokens != 10 || u.OutputTokens != 20 {
			t.Errorf("usage = %+v, want the fake's 110 in (10 cached), 20 out", u)
		}
	})
}

// Events the parser does not read may give data fields any shape: Copilot CLI 1.0.102 ends a
// model call with a data.result that is a string, where a tool's result is an object.
func TestCopilotParser_OtherEventsAnyShape(t *testing.T) {
	p := &copilotParser{tools: map[string]provider.ToolCall{}}
	for _, line := range []string{
		`{"type":"model.call_final_result","data":{"model":"claude-sonnet-4-5","isByok":true,"result":"success"},"ephemeral":true}`,
		`{"type":"session.info","data":{"result":[1,2],"content":{"x":1}}}`,
		`{"type":"something.new","data":"a string"}`,
	} {
		if evs, err := p.parse([]byte(line)); err != nil || len(evs) != 0 {
			t.Errorf("parse(%s) = %+v, %v; want nothing", line, evs, err)
		}
	}
	// A line the parser reads still has to have the shape it reads.
	if _, err := p.parse([]byte(`{"type":"tool.execution_complete","data":{"result":"success"}}`)); err == nil {
		t.Error("a tool.execution_complete with a string result parsed")
	}
	evs, err := p.parse([]byte(`{"type":"assistant.message","data":{"content":"hi"}}`))
	if err != nil || len(evs) != 1 || evs[0].chunk != (provider.TextDelta{Text: "hi\n"}) {
		t.Errorf("assistant.message = %+v, %v", evs, err)
	}
}
