package simulated

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"massgen/internal/coord"
	"massgen/internal/prompt"
	"massgen/internal/provider"
)

// result is one call collected.
type result struct {
	text  string
	calls []provider.ToolCall
	usage provider.Usage
	stop  string
}

func call(t *testing.T, p *Provider, req provider.Request) result {
	t.Helper()
	var r result
	for c, err := range p.Stream(t.Context(), req) {
		if err != nil {
			t.Fatal(err)
		}
		switch c := c.(type) {
		case provider.TextDelta:
			r.text += c.Text
		case provider.ToolCallChunk:
			r.calls = append(r.calls, c.Call)
		case provider.UsageChunk:
			r.usage = c.Usage
		case provider.Done:
			r.stop = c.StopReason
		}
	}
	return r
}

// shown is a user message showing answers under labels agent1, agent2, ...
func shown(texts ...string) provider.Message {
	var b strings.Builder
	b.WriteString("The current answers:\n")
	for k, text := range texts {
		fmt.Fprintf(&b, "<agent%d>\n%s\n<end of agent%d>\n", k+1, text, k+1)
	}
	return provider.Message{Role: provider.RoleUser, Content: b.String()}
}

func labels(n int) []string {
	out := make([]string, n)
	for k := range out {
		out[k] = fmt.Sprintf("agent%d", k+1)
	}
	return out
}

func arg(t *testing.T, c provider.ToolCall, key string) string {
	t.Helper()
	var m map[string]string
	if err := json.Unmarshal([]byte(c.Arguments), &m); err != nil {
		t.Fatal(err)
	}
	return m[key]
}

// An agent submits its answer, submits it again when it is refused, then votes for the first
// answer that says what it says; in the presentation it writes its answer.
func TestProvider_AnswersThenVotes(t *testing.T) {
	pop := population(t, "  - {id: a, accuracy: 1}\n  - {id: b, accuracy: 1}\n")
	q := Question{ID: "q1", Correct: "B", Wrong: []string{"A"}}
	p := pop.New(1, q, nil)
	task := provider.Message{Role: provider.RoleUser, Content: "Which? A or B"}

	r := call(t, p, provider.Request{Messages: []provider.Message{task}, Tools: prompt.Tools(nil)})
	if len(r.calls) != 1 || r.calls[0].Name != coord.ToolNewAnswer || r.stop != "tool_calls" {
		t.Fatalf("first call: %+v", r)
	}
	own := arg(t, r.calls[0], "content")
	if v, _, _ := Read(own); v != "B" {
		t.Fatalf("an agent of accuracy 1 answered %q", own)
	}
	if r.usage.InputTokens < 1 || r.usage.OutputTokens != int64((len(coord.ToolNewAnswer)+len(r.calls[0].Arguments))/4) {
		t.Errorf("usage %+v: output should be a quarter of what it wrote", r.usage)
	}

	refused := []provider.Message{task, {Role: provider.RoleAssistant, ToolCalls: r.calls},
		{Role: provider.RoleTool, ToolCallID: r.calls[0].ID, Content: "Error: too long", IsError: true}}
	r = call(t, p, provider.Request{Messages: refused, Tools: prompt.Tools(nil)})
	if len(r.calls) != 1 || r.calls[0].Name != coord.ToolNewAnswer {
		t.Fatalf("after a refusal: %+v, want the answer again", r)
	}

	other := pop.Alone(Question{ID: "q1", Correct: "A", Wrong: []string{"B"}}, 0, 0).Text()
	votes := []provider.Message{task, shown(other, own)}
	r = call(t, p, provider.Request{Messages: votes, Tools: prompt.Tools(labels(2))})
	if len(r.calls) != 1 || r.calls[0].Name != coord.ToolVote || arg(t, r.calls[0], "agent_id") != "agent2" {
		t.Fatalf("vote: %+v, want a vote for agent2, which says B as it does", r.calls)
	}

	r = call(t, p, provider.Request{Messages: votes, Stage: provider.StagePresentation})
	if r.text != own || len(r.calls) != 0 || r.stop != "stop" {
		t.Errorf("presentation: %q, want its answer", r.text)
	}
}

// A voter with long_bias 1 votes for the longest answer, its own value among them first; with
// herding 1 for the leader; an answer it cannot read is passed over.
func TestProvider_VoteBiases(t *testing.T) {
	q := Question{ID: "q1", Correct: "A", Wrong: []string{"B", "C"}}
	short := func(v string, k int) string { return Answer{Value: v, Confidence: -1, Length: Short, author: k}.Text() }
	long := func(v string, k int) string { return Answer{Value: v, Confidence: -1, Length: Long, author: k}.Text() }
	tests := []struct {
		name, agents string
		texts        []string
		want         string
	}{
		{"long bias", "  - {id: v, accuracy: 1, long_bias: 1}\n", []string{short("A", 0), long("B", 1), short("A", 2)}, "agent2"},
		{"long bias, own among the longest", "  - {id: v, accuracy: 1, long_bias: 1}\n", []string{long("B", 0), long("A", 1)}, "agent2"},
		{"herding", "  - {id: v, accuracy: 1, herding: 1}\n", []string{short("A", 0), short("C", 1), short("C", 2)}, "agent2"},
		{"own value", "  - {id: v, accuracy: 1}\n", []string{short("C", 0), short("A", 1), short("A", 2)}, "agent2"},
		{"unreadable passed over", "  - {id: v, accuracy: 1}\n", []string{"I do not know.", short("A", 1)}, "agent2"},
	}
	for _, tt := range tests {
		pop := population(t, tt.agents)
		p := pop.New(0, q, nil)
		p.answered = true
		r := call(t, p, provider.Request{Messages: []provider.Message{shown(tt.texts...)}, Tools: prompt.Tools(labels(len(tt.texts)))})
		if len(r.calls) != 1 || arg(t, r.calls[0], "agent_id") != tt.want {
			t.Errorf("%s: %+v, want a vote for %s", tt.name, r.calls, tt.want)
		}
	}
}

func TestProvider_StopsWithContext(t *testing.T) {
	pop := population(t, "  - {id: a, accuracy: 1}\n")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for _, err := range pop.New(0, Question{ID: "q", Correct: "A", Wrong: []string{"B"}}, nil).Stream(ctx, provider.Request{}) {
		if err == nil {
			t.Fatal("a call on a cancelled context went on")
		}
		return
	}
	t.Fatal("no error on a cancelled context")
}

// Answer blocks are read between their markers; text full of "<agent" is passed over.
func TestBlocks(t *testing.T) {
	got := map[string]string{}
	blocks(strings.Repeat("<agent", 50000)+"\n<agent2>\nsecond\n<end of agent2>\n<agentX>\nno\n<end of agentX>\n<agent1>\nfirst\n<end of agent1>", got)
	if len(got) != 2 || got["agent1"] != "first" || got["agent2"] != "second" {
		t.Errorf("blocks = %v", got)
	}
}
