package scripted

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/config"
	"massgen/internal/provider"
)

// step is one call of a conversation and the calls it must make.
type step struct {
	req  provider.Request
	want string // see summary
}

func TestProvider_Decision(t *testing.T) {
	a0, a1 := "Four.", "2 + 2 = 4, by the definition of addition."
	other := shown{"agent2", "It is four."}
	tests := []struct {
		name   string
		script config.Script
		steps  []step
	}{
		{
			name:   "first call answers Answers[0]",
			script: config.Script{Answers: []string{a0, a1}},
			steps:  []step{{coordReq(), "new_answer:" + a0}},
		},
		{
			name:   "first call answers even when others have answered",
			script: config.Script{Answers: []string{a0}, ImproveAfter: 5},
			steps:  []step{{coordReq(other), "new_answer:" + a0}},
		},
		{
			name:   "improves once ImproveAfter answers are shown",
			script: config.Script{Answers: []string{a0, a1}, ImproveAfter: 2},
			steps: []step{
				{coordReq(), "new_answer:" + a0},
				{coordReq(shown{"agent1", a0}), "vote:agent1"},
				{coordReq(shown{"agent1", a0}, other), "new_answer:" + a1},
				{coordReq(shown{"agent1", a1}, other), "vote:agent1"},
			},
		},
		{
			name:   "ImproveAfter 0 improves immediately",
			script: config.Script{Answers: []string{a0, a1}},
			steps: []step{
				{coordReq(), "new_answer:" + a0},
				{coordReq(shown{"agent1", a0}), "new_answer:" + a1},
				{coordReq(shown{"agent1", a1}), "vote:agent1"},
			},
		},
		{
			name:   "votes when it has no answer left",
			script: config.Script{Answers: []string{a0}},
			steps: []step{
				{coordReq(), "new_answer:" + a0},
				{coordReq(shown{"agent1", a0}, other), "vote:agent2"},
				{coordReq(shown{"agent1", a0}, other), "vote:agent2"},
			},
		},
		{
			name:   "tool calls forbidden: text, with every tool still offered",
			script: config.Script{Answers: []string{a0}},
			steps: []step{
				{func() provider.Request {
					r := coordReq(other)
					r.ToolChoice = provider.ToolChoiceNone
					return r
				}(), "text"},
			},
		},
		{
			name:   "no vote tool offered: presentation",
			script: config.Script{Answers: []string{a0}},
			steps: []step{
				{provider.Request{Messages: []provider.Message{userMsg()}}, "text"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(tt.script, "m")
			for i, s := range tt.steps {
				r := run(t, p, s.req)
				if got := summary(t, r); got != s.want {
					t.Fatalf("call %d: got %q, want %q", i+1, got, s.want)
				}
			}
		})
	}
}

func TestProvider_VotePolicy(t *testing.T) {
	own := "mine"
	answers := []shown{
		{"agent1", "short"},
		{"agent2", "the longest answer of all"},
		{"agent3", own},
		{"agent4", "medium length"},
	}
	tests := []struct {
		name   string
		vote   string
		req    provider.Request
		wantID string
	}{
		{"default is longest", "", coordReq(answers...), "agent2"},
		{"longest", "longest", coordReq(answers...), "agent2"},
		{"longest tie goes to lowest label", "longest",
			coordReq(shown{"agent3", "abc"}, shown{"agent1", "xyz"}, shown{"agent2", "ab"}), "agent1"},
		{"first", "first", coordReq(answers...), "agent1"},
		{"last", "last", coordReq(answers...), "agent4"},
		{"self", "self", coordReq(answers...), "agent3"},
		{"self not shown falls back to longest", "self", coordReq(answers[0], answers[1]), "agent2"},
		{"fixed label", "agent4", coordReq(answers...), "agent4"},
		{"fixed label not offered falls back to longest", "agent7", coordReq(answers...), "agent2"},
		{"only enum labels count", "longest", func() provider.Request {
			r := coordReq(answers...)
			r.Tools = tools("agent1", "agent4") // agent2's answer is shown but not votable
			return r
		}(), "agent4"},
		{"labels sort by number", "last", func() provider.Request {
			r := coordReq(shown{"agent10", "x"}, shown{"agent9", "y"})
			r.Tools = tools("agent10", "agent9")
			return r
		}(), "agent10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(config.Script{Answers: []string{own}, Vote: tt.vote}, "m")
			run(t, p, coordReq()) // submits own
			r := run(t, p, tt.req)
			if got, want := summary(t, r), "vote:"+tt.wantID; got != want {
				t.Fatalf("got %q, want %q", got, want)
			}
			if r.stop != "tool_calls" {
				t.Errorf("stop = %q, want tool_calls", r.stop)
			}
			if !strings.Contains(r.text, tt.wantID) {
				t.Errorf("text %q does not name %s", r.text, tt.wantID)
			}
		})
	}
}

func TestProvider_VoteReason(t *testing.T) {
	for _, tt := range []struct{ reason, want string }{
		{"", "agent1"},
		{"It is correct and concise.", "It is correct and concise."},
	} {
		p := New(config.Script{Answers: []string{"a"}, Reason: tt.reason}, "m")
		run(t, p, coordReq())
		r := run(t, p, coordReq(shown{"agent1", "a"}))
		var args struct{ AgentID, Reason string }
		if err := json.Unmarshal([]byte(r.calls[0].Arguments), &args); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(args.Reason, tt.want) {
			t.Errorf("reason %q, want it to contain %q", args.Reason, tt.want)
		}
	}
}

func TestProvider_StreamsExactText(t *testing.T) {
	for _, text := range []string{
		"Four.",
		"  leading spaces,\n\nparagraphs,   runs of spaces\tand tabs, trailing  ",
		"héllo wörld — ünïcode <tags> & \"quotes\" \\ backslash",
		"line\r\nbreaks\n",
	} {
		t.Run(text, func(t *testing.T) {
			thinking := " Let me think.\nStep one. "
			p := New(config.Script{Answers: []string{text}, Thinking: thinking}, "m")
			r := run(t, p, coordReq())
			if r.text != text {
				t.Errorf("text = %q, want %q", r.text, text)
			}
			if r.reasoning != thinking {
				t.Errorf("reasoning = %q, want %q", r.reasoning, thinking)
			}
			for _, d := range append(r.textDeltas, r.reasoningDeltas...) {
				if n := len(strings.Fields(d)); n != 1 {
					t.Errorf("delta %q holds %d words, want 1", d, n)
				}
			}
			if got, want := len(r.textDeltas), len(strings.Fields(text)); got != want {
				t.Errorf("%d text deltas, want %d", got, want)
			}
			var args struct{ Content string }
			if err := json.Unmarshal([]byte(r.calls[0].Arguments), &args); err != nil {
				t.Fatal(err)
			}
			if args.Content != text {
				t.Errorf("content = %q, want %q", args.Content, text)
			}
			wantKinds := append(append(repeat("reasoning", len(r.reasoningDeltas)), repeat("text", len(r.textDeltas))...),
				"call", "usage", "done")
			if diff := cmp.Diff(wantKinds, r.kinds); diff != "" {
				t.Errorf("chunk order (-want +got):\n%s", diff)
			}
		})
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func TestProvider_LaterBlockReplacesEarlier(t *testing.T) {
	p := New(config.Script{Answers: []string{"x"}}, "m")
	run(t, p, coordReq())
	req := coordReq(shown{"agent1", "a very long first answer indeed"}, shown{"agent2", "medium answer"})
	req.Messages = append(req.Messages,
		provider.Message{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "c", Name: "vote"}}},
		provider.Message{Role: provider.RoleTool, ToolCallID: "c", Content: "Your vote is stale.\n\n" +
			blocks([]shown{{"agent1", "now short"}})})
	if got, want := summary(t, run(t, p, req)), "vote:agent2"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestProvider_RejectedAnswerFallsBackToVote(t *testing.T) {
	a0, a1, a2 := "first answer", "second answer", "third answer"
	p := New(config.Script{Answers: []string{a0, a1, a2}}, "m")
	r := run(t, p, coordReq())
	if got := summary(t, r); got != "new_answer:"+a0 {
		t.Fatalf("call 1: %q", got)
	}
	req := coordReq(shown{"agent1", a0}, shown{"agent2", "someone else's answer"})
	r = run(t, p, req)
	if got := summary(t, r); got != "new_answer:"+a1 {
		t.Fatalf("call 2: %q", got)
	}
	// The engine rejects it (answer cap): the agent votes instead on the retry.
	req = reply(req, r, true, "new_answer rejected: you reached the answer limit; vote instead.")
	r = run(t, p, req)
	if got := summary(t, r); got != "vote:agent2" {
		t.Fatalf("call 3 after rejection: %q", got)
	}
	// The rejected answer is skipped for good: the next one follows.
	r = run(t, p, coordReq(shown{"agent1", a0}, shown{"agent2", "someone else's answer"}))
	if got := summary(t, r); got != "new_answer:"+a2 {
		t.Fatalf("call 4: %q", got)
	}
	// Presentation: the latest accepted answer, never the rejected one.
	r = run(t, p, presentReq("agent1", shown{"agent1", a2}))
	if r.text != a2 {
		t.Fatalf("presentation = %q, want %q", r.text, a2)
	}
}

func TestProvider_RejectedFirstAnswer(t *testing.T) {
	p := New(config.Script{Answers: []string{"dup", "fresh"}}, "m")
	req := coordReq(shown{"agent2", "dup"})
	r := run(t, p, req)
	r = run(t, p, reply(req, r, true, "duplicate of agent2's answer"))
	if got := summary(t, r); got != "vote:agent2" {
		t.Fatalf("after rejection: %q", got)
	}
	// Still without an answer of its own, it submits the next one on its next turn.
	if got := summary(t, run(t, p, coordReq(shown{"agent2", "dup"}))); got != "new_answer:fresh" {
		t.Fatalf("next turn: %q", got)
	}
}

func TestProvider_Presentation(t *testing.T) {
	tests := []struct {
		name   string
		script config.Script
		before []provider.Request // coordination calls made first
		req    provider.Request
		want   string
	}{
		{
			name:   "Final",
			script: config.Script{Answers: []string{"a0"}, Final: "The final answer.", Thinking: "hmm"},
			before: []provider.Request{coordReq()},
			req:    presentReq("agent1", shown{"agent1", "a0"}),
			want:   "The final answer.",
		},
		{
			name:   "latest answer",
			script: config.Script{Answers: []string{"a0", "a1 is better"}},
			before: []provider.Request{coordReq(), coordReq(shown{"agent1", "a0"})},
			req:    presentReq("agent1", shown{"agent1", "a1 is better"}),
			want:   "a1 is better",
		},
		{
			name:   "no answer of its own: the one marked as its own",
			script: config.Script{Answers: []string{"a0"}},
			req:    presentReq("agent2", shown{"agent1", "longer answer here"}, shown{"agent2", "own"}),
			want:   "own",
		},
		{
			name:   "stage presentation even with tools",
			script: config.Script{Answers: []string{"a0"}},
			before: []provider.Request{coordReq()},
			req: func() provider.Request {
				r := coordReq(shown{"agent1", "a0"})
				r.Stage = provider.StagePresentation
				return r
			}(),
			want: "a0",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(tt.script, "m")
			for _, req := range tt.before {
				run(t, p, req)
			}
			r := run(t, p, tt.req)
			if r.err != nil {
				t.Fatal(r.err)
			}
			if r.text != tt.want {
				t.Errorf("text = %q, want %q", r.text, tt.want)
			}
			if len(r.calls) != 0 || r.reasoning != "" || r.stop != "stop" {
				t.Errorf("calls %v, reasoning %q, stop %q: want none, none, stop", r.calls, r.reasoning, r.stop)
			}
			if len(r.usage) != 1 {
				t.Errorf("%d usage chunks, want 1", len(r.usage))
			}
		})
	}
}

func TestProvider_Usage(t *testing.T) {
	script := config.Script{Answers: []string{"An answer of some length."}, Thinking: "Thinking it over."}
	calls := func() []result {
		p := New(script, "m")
		return []result{
			run(t, p, coordReq()),
			run(t, p, coordReq(shown{"agent1", script.Answers[0]}, shown{"agent2", "other"})),
			run(t, p, presentReq("agent1", shown{"agent1", script.Answers[0]})),
		}
	}
	first, second := calls(), calls()
	if diff := cmp.Diff(first, second, cmp.AllowUnexported(result{})); diff != "" {
		t.Errorf("not deterministic (-first +second):\n%s", diff)
	}
	for i, r := range first {
		if len(r.usage) != 1 {
			t.Fatalf("call %d: %d usage chunks, want 1", i+1, len(r.usage))
		}
		u := r.usage[0]
		if u.InputTokens < 1 || u.OutputTokens < 1 {
			t.Errorf("call %d: usage %+v, want at least 1 token each way", i+1, u)
		}
		if got := r.kinds[len(r.kinds)-2:]; !cmp.Equal(got, []string{"usage", "done"}) {
			t.Errorf("call %d: ends with %v, want usage, done", i+1, got)
		}
	}
	if first[0].usage[0].ReasoningTokens < 1 {
		t.Errorf("reasoning tokens not counted: %+v", first[0].usage[0])
	}
	if first[1].usage[0].InputTokens <= first[0].usage[0].InputTokens {
		t.Errorf("a longer prompt did not cost more input tokens: %d <= %d",
			first[1].usage[0].InputTokens, first[0].usage[0].InputTokens)
	}
	// The estimate is characters / 4: the answer call streams its text and the arguments.
	u := first[0].usage[0]
	text := script.Thinking + script.Answers[0] + "new_answer" + first[0].calls[0].Arguments
	if want := int64(len(text) / 4); u.OutputTokens != want {
		t.Errorf("output tokens %d, want %d", u.OutputTokens, want)
	}
}

func TestProvider_EnumOfAnyGoType(t *testing.T) {
	p := New(config.Script{Answers: []string{"a"}, Vote: "first"}, "m")
	run(t, p, coordReq())
	req := coordReq(shown{"agent1", "a"}, shown{"agent2", "b"})
	req.Tools[1].Parameters = map[string]any{
		"properties": map[string]map[string]any{"agent_id": {"enum": []string{"agent2"}}},
	}
	if got := summary(t, run(t, p, req)); got != "vote:agent2" {
		t.Fatalf("got %q, want vote:agent2", got)
	}
}

func TestProvider_ConcurrentUse(t *testing.T) {
	p := New(config.Script{Answers: []string{"a", "b"}}, "m")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for c, err := range p.Stream(t.Context(), coordReq(shown{"agent1", "a"})) {
				_, _ = c, err
			}
		})
	}
	wg.Wait()
}

func TestWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"one", []string{"one"}},
		{"one two", []string{"one ", "two"}},
		{"  lead  and trail  ", []string{"  lead  ", "and ", "trail  "}},
		{"a\n\nb", []string{"a\n\n", "b"}},
		{"   ", []string{"   "}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, words(tt.in)); diff != "" {
			t.Errorf("words(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestProvider_NothingToVoteFor(t *testing.T) {
	answerOnly := coordReq()
	answerOnly.Tools = answerOnly.Tools[:1]
	tests := []struct {
		name   string
		script config.Script
		steps  []step
	}{
		{
			name:   "no answer shown after submitting: resubmits the latest",
			script: config.Script{Answers: []string{"a"}},
			steps:  []step{{coordReq(), "new_answer:a"}, {coordReq(), "new_answer:a"}},
		},
		{
			name:   "vote not offered: submits the next answer early",
			script: config.Script{Answers: []string{"a", "b"}, ImproveAfter: 3},
			steps:  []step{{coordReq(), "new_answer:a"}, {answerOnly, "new_answer:b"}},
		},
		{
			name:   "no answers scripted: plain text, then votes once it can",
			script: config.Script{},
			steps:  []step{{coordReq(), "text"}, {coordReq(shown{"agent1", "x"}), "vote:agent1"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(tt.script, "m")
			for i, s := range tt.steps {
				if got := summary(t, run(t, p, s.req)); got != s.want {
					t.Fatalf("call %d: got %q, want %q", i+1, got, s.want)
				}
			}
		})
	}
}

func TestSortLabels(t *testing.T) {
	got := sortLabels([]string{"x", "agent10", "agent2", "agentx", "agent1"})
	want := []string{"agent1", "agent2", "agent10", "agentx", "x"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestParseBlocks(t *testing.T) {
	answers := map[string]string{}
	own := parseBlocks("intro <agent1> inline mention\n<agent1>\n\n<end of agent1>\n"+
		"(your own answer)\n<agent2>\nmulti\nline <agent3>\n<end of agent2>\n<agent4>\nunterminated", answers)
	want := map[string]string{"agent1": "", "agent2": "multi\nline <agent3>"}
	if diff := cmp.Diff(want, answers); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if own != "agent2" {
		t.Errorf("own = %q, want agent2", own)
	}
}

func TestToolCallsBeforeTheFirstAnswer(t *testing.T) {
	p := New(config.Script{Answers: []string{"Done."}, ToolCalls: []config.ScriptedToolCall{
		{Name: "mcp__everything__echo", Args: map[string]any{"message": "hi"}},
		{Name: "write_file", Args: map[string]any{"path": "out.txt", "content": "echo said: {{result}}"}},
	}}, "m")
	req := provider.Request{Messages: []provider.Message{{Role: provider.RoleUser, Content: "q"}}, Tools: []provider.ToolSpec{{Name: "new_answer"}, {Name: "vote"}}}
	first := collect(t, p.Stream(t.Context(), req))
	if len(first.calls) != 1 || first.calls[0].Name != "mcp__everything__echo" || first.calls[0].Arguments != `{"message":"hi"}` {
		t.Fatalf("first call: %+v", first.calls)
	}
	req.Messages = append(req.Messages,
		provider.Message{Role: provider.RoleAssistant, ToolCalls: first.calls},
		provider.Message{Role: provider.RoleTool, ToolCallID: first.calls[0].ID, Content: "Echo: hi"})
	second := collect(t, p.Stream(t.Context(), req))
	if len(second.calls) != 1 || second.calls[0].Name != "write_file" || !strings.Contains(second.calls[0].Arguments, `"echo said: Echo: hi"`) {
		t.Fatalf("second call: %+v", second.calls)
	}
	third := collect(t, p.Stream(t.Context(), req))
	if len(third.calls) != 1 || third.calls[0].Name != "new_answer" {
		t.Fatalf("third call: %+v", third.calls)
	}
}

// Planning mode's check gets the scripted verdict, and is not one of the calls faults count.
func TestPlanningCheck(t *testing.T) {
	req := provider.Request{Stage: provider.StagePlanning, Messages: []provider.Message{{Role: provider.RoleUser, Content: "TASK: post"}}}
	p := New(config.Script{Answers: []string{"a"}, Planning: "IRREVERSIBLE: YES\nBLOCKED_TOOLS: post", Faults: []config.Fault{{Kind: config.FaultFail, Call: 1}}}, "m")
	if r := run(t, p, req); r.text != "IRREVERSIBLE: YES\nBLOCKED_TOOLS: post" || r.err != nil || len(r.calls) != 0 || len(r.usage) == 0 {
		t.Fatalf("planning reply %+v", r)
	}
	if r := run(t, p, coordReq()); !errors.Is(r.err, ErrFailure) {
		t.Errorf("first coordination call = %+v, want the fault of call 1", r)
	}
	if r := run(t, New(config.Script{Answers: []string{"a"}}, "m"), req); r.text != "IRREVERSIBLE: NO\nBLOCKED_TOOLS:" {
		t.Errorf("default reply %q", r.text)
	}
}
