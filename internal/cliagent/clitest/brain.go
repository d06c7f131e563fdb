// Package clitest has fake model APIs for the coding-agent CLIs (Anthropic Messages for Claude
// Code, OpenAI Responses for Codex, Gemini generateContent for Gemini CLI), each playing the
// same scripted model: it writes a file with the CLI's own file tool, reads a file another
// agent shared, submits new_answer through massgen's MCP tools, and votes.
package clitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// Msg is one message of a conversation as a fake API received it, in neutral form.
type Msg struct {
	Role    string // user, assistant, tool
	Text    string
	Calls   []Call // assistant
	CallID  string // tool: the call answered
	CallFor string // tool: the name of the call answered, when the wire says or it is known
}

// Call is a tool call the model makes.
type Call struct {
	ID   string
	Name string
	Args map[string]any
}

// Reply is what the model answers: text, then tool calls.
type Reply struct {
	Text  string
	Calls []Call
}

// Tools names a CLI's own file tools and how to call them.
type Tools struct {
	Write func(path, content string) Call
	Read  func(path string) Call
}

// Script is one fake agent's plan.
type Script struct {
	// File is written (relative to the workspace), with Content.
	File, Content string
	// Vote is the label voted for ("agent1" when empty).
	Vote string
	// Final is the final presentation's text.
	Final string
	// Hang, when set, makes the model never answer (Ctrl-C tests): the request blocks.
	Hang bool
	// Relentless makes the model vote again when told that coordination has ended and it
	// should stop: a model that ignores "stop now".
	Relentless bool
	// MCPTool, when set, is a tool of the user's MCP server (named by its own name, e.g. echo)
	// the model calls once, with a message, after writing its file.
	MCPTool string
}

// Brain plays a Script over a conversation. It is stateless apart from counting requests:
// every CLI sends the whole conversation each time.
type Brain struct {
	Script Script
	Tools  Tools

	mu        sync.Mutex
	requests  int
	told      int      // requests made after the model was told coordination had ended
	seen      []string // tool names offered, by the last request
	readPeer  bool
	mcpCalled bool
}

// MCPCalled reports whether the model called Script.MCPTool: the CLI offered it.
func (b *Brain) MCPCalled() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mcpCalled
}

// ReadPeer reports whether the model asked to read a file another agent shared.
func (b *Brain) ReadPeer() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.readPeer
}

// hold blocks a request of a hanging script until its client goes away, counting it.
func (b *Brain) hold(r *http.Request) {
	b.mu.Lock()
	b.requests++
	b.mu.Unlock()
	<-r.Context().Done()
}

// Requests is how many model requests the brain answered (or held).
func (b *Brain) Requests() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.requests
}

// Told is how many requests the model got after it was told that coordination had ended
// (cliagent's answer to the calls a CLI makes then): what a CLI spends once its part is over.
func (b *Brain) Told() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.told
}

// Offered is the tool names of the last request.
func (b *Brain) Offered() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.seen
}

var workspaceDir = regexp.MustCompile(`Your workspace is (/\S+) `)

var snapshotPath = regexp.MustCompile(`/[^\s"'\\<` + "`" + `]*/snapshots/agent[0-9]+/[^\s"'\\<` + "`" + `]+`)

// Next is the model's reply to a conversation offering tools.
func (b *Brain) Next(tools []string, msgs []Msg) Reply {
	b.mu.Lock()
	b.requests++
	b.seen = tools
	b.mu.Unlock()
	newAnswer, vote := find(tools, "new_answer"), find(tools, "vote")
	if newAnswer == "" {
		final := b.Script.Final
		if final == "" {
			final = "Final answer: " + b.Script.Content
		}
		return Reply{Text: final}
	}
	called := map[string]int{}
	var lastResult Msg
	for _, m := range msgs {
		for _, c := range m.Calls {
			called[b.kind(c)]++
		}
		if m.Role == "tool" {
			lastResult = m
		}
	}
	over := strings.Contains(lastResult.Text, "Coordination has ended")
	if over {
		b.mu.Lock()
		b.told++
		b.mu.Unlock()
	}
	all := ""
	for _, m := range msgs {
		all += m.Text + "\n"
	}
	switch {
	case called["write"] == 0:
		return Reply{Text: "I will write " + b.Script.File + ".", Calls: []Call{b.Tools.Write(b.Script.File, b.Script.Content)}}
	case called["read"] == 0:
		if peer := snapshotPath.FindString(all); peer != "" {
			b.mu.Lock()
			b.readPeer = true
			b.mu.Unlock()
			return Reply{Text: "Reading another agent's work.", Calls: []Call{b.Tools.Read(strings.TrimRight(peer, ".,;:)"))}}
		}
	}
	if t := find(tools, b.Script.MCPTool); b.Script.MCPTool != "" && t != "" && !calledTool(msgs, t) {
		b.mu.Lock()
		b.mcpCalled = true
		b.mu.Unlock()
		return Reply{Text: "Trying the user's MCP server.", Calls: []Call{{Name: t, Args: map[string]any{"message": MCPMessage}}}}
	}
	if called["new_answer"] == 0 {
		file := b.Script.File
		if m := workspaceDir.FindStringSubmatch(all); m != nil {
			file = m[1] + "/" + file // the others read it at its snapshot path
		}
		return Reply{Text: "Submitting.", Calls: []Call{{Name: newAnswer, Args: map[string]any{
			"content": fmt.Sprintf("I wrote %s with %q.", file, b.Script.Content)}}}}
	}
	relentless := b.Script.Relentless && over
	if vote != "" && (relentless || kind(lastResult.CallFor) != "vote" || strings.Contains(lastResult.Text, "no longer counts") ||
		strings.Contains(lastResult.Text, "not counted") || strings.HasPrefix(lastResult.Text, "Error")) {
		label := b.Script.Vote
		if label == "" {
			label = "agent1"
		}
		return Reply{Text: "Voting.", Calls: []Call{{Name: vote, Args: map[string]any{"agent_id": label, "reason": "it is complete"}}}}
	}
	return Reply{Text: "Done."}
}

// MCPMessage is what the model sends the user's MCP tool (Script.MCPTool).
const MCPMessage = "ping from the model"

// calledTool reports whether the conversation has a call of tool.
func calledTool(msgs []Msg, tool string) bool {
	for _, m := range msgs {
		for _, c := range m.Calls {
			if c.Name == tool {
				return true
			}
		}
	}
	return false
}

// find is the offered tool whose name ends with suffix (mcp__massgen__vote, massgen-vote, vote, ...).
func find(tools []string, suffix string) string {
	for _, t := range tools {
		if t == suffix || strings.HasSuffix(t, "_"+suffix) || strings.HasSuffix(t, "-"+suffix) {
			return t
		}
	}
	return ""
}

// kind sorts a call into write, read, new_answer, vote or other: file calls by what their
// arguments name, since a CLI may do both with one shell tool.
func (b *Brain) kind(c Call) string {
	raw, _ := json.Marshal(c.Args)
	switch {
	case kind(c.Name) != "other":
		return kind(c.Name)
	case strings.Contains(string(raw), "/snapshots/"):
		return "read"
	case strings.Contains(string(raw), b.Script.File):
		return "write"
	}
	return "other"
}

// kind sorts a tool name into new_answer, vote or other.
func kind(name string) string {
	switch {
	case strings.HasSuffix(name, "new_answer"):
		return "new_answer"
	case strings.HasSuffix(name, "vote"):
		return "vote"
	}
	return "other"
}

// args decodes a call's arguments.
func args(raw string) map[string]any {
	m := map[string]any{}
	_ = json.Unmarshal([]byte(raw), &m)
	return m
}

// Bin is the path of a CLI .ci/run installs into .ci/npm, found from the test's folder up;
// "" when it is not installed.
func Bin(name string) string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		p := filepath.Join(dir, ".ci", "npm", "node_modules", ".bin", name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// StateDir is a folder for a CLI's state outside /tmp, removed when the test ends: Codex
// refuses to set up its sandbox helper under /tmp.
func StateDir(t interface {
	Helper()
	Fatal(...any)
	Cleanup(func())
}) string {
	t.Helper()
	base, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(base, "massgen-cli-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}
