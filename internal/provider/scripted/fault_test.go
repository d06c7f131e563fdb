package scripted

import (
	"encoding/json"
	"errors"
	"testing"

	"massgen/internal/config"
	"massgen/internal/provider"
)

func TestProvider_Faults(t *testing.T) {
	const own = "my answer"
	shownOther := shown{"agent1", "an answer already shown"}
	voteReq := coordReq(shownOther, shown{"agent2", own}) // after priming, the right move is vote:agent1
	tests := []struct {
		name  string
		kind  config.FaultKind
		prime bool // submit own first, so the intended action is a vote
		req   provider.Request
		want  string // summary of the faulty call
		stop  string
		text  string // streamed text of the faulty call, "" to skip the check
		after string // summary of the next call, told of the error
	}{
		{name: "no_tool", kind: config.FaultNoTool, req: coordReq(shownOther),
			want: "text", stop: "stop", text: own, after: "new_answer:" + own},
		{name: "no_tool on a vote", kind: config.FaultNoTool, prime: true, req: voteReq,
			want: "text", stop: "stop", text: voteText("agent1"), after: "vote:agent1"},
		{name: "bad_vote", kind: config.FaultBadVote, req: coordReq(shownOther),
			want: "vote:agent99", stop: "tool_calls", after: "new_answer:" + own},
		{name: "double_vote", kind: config.FaultDoubleVote, prime: true, req: voteReq,
			want: "vote:agent1 + vote:agent1", stop: "tool_calls", after: "vote:agent1"},
		{name: "double_vote before any answer", kind: config.FaultDoubleVote, req: coordReq(),
			want: "vote:agent1 + vote:agent1", stop: "tool_calls", after: "new_answer:" + own},
		{name: "vote_and_answer", kind: config.FaultVoteAndAnswer, req: coordReq(shownOther),
			want: "vote:agent1 + new_answer:" + own, stop: "tool_calls", text: own, after: "new_answer:" + own},
		{name: "bad_args on an answer", kind: config.FaultBadArgs, req: coordReq(shownOther),
			want: "new_answer:<bad json>", stop: "tool_calls", text: own, after: "new_answer:" + own},
		{name: "bad_args on a vote", kind: config.FaultBadArgs, prime: true, req: voteReq,
			want: "vote:<bad json>", stop: "tool_calls", after: "vote:agent1"},
		{name: "duplicate", kind: config.FaultDuplicate, req: coordReq(shownOther),
			want: "new_answer:" + shownOther.text, stop: "tool_calls", text: shownOther.text, after: "new_answer:" + own},
		{name: "duplicate of its own answer", kind: config.FaultDuplicate, prime: true, req: voteReq,
			want: "new_answer:" + own, stop: "tool_calls", after: "vote:agent1"},
		{name: "duplicate with nothing shown", kind: config.FaultDuplicate, req: coordReq(),
			want: "new_answer:" + own, stop: "tool_calls", after: "new_answer:" + own},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call := 1
			if tt.prime {
				call = 2
			}
			p := New(config.Script{Answers: []string{own}, Faults: []config.Fault{{Kind: tt.kind, Call: call}}}, "m")
			if tt.prime {
				if got := summary(t, run(t, p, coordReq())); got != "new_answer:"+own {
					t.Fatalf("priming call: %q", got)
				}
			}
			r := run(t, p, tt.req)
			if got := summary(t, r); got != tt.want {
				t.Errorf("faulty call: got %q, want %q", got, tt.want)
			}
			if r.stop != tt.stop {
				t.Errorf("stop = %q, want %q", r.stop, tt.stop)
			}
			if tt.text != "" && r.text != tt.text {
				t.Errorf("text = %q, want %q", r.text, tt.text)
			}
			if len(r.usage) != 1 {
				t.Errorf("%d usage chunks, want 1", len(r.usage))
			}
			for _, c := range r.calls {
				if valid := json.Valid([]byte(c.Arguments)); valid == (tt.kind == config.FaultBadArgs) {
					t.Errorf("arguments %q: valid JSON = %v", c.Arguments, valid)
				}
			}
			// Told of its mistake, it behaves; the faulty call did not count as an answer.
			if got := summary(t, run(t, p, reply(tt.req, r, true, "Invalid: fix your call."))); got != tt.after {
				t.Errorf("next call: got %q, want %q", got, tt.after)
			}
		})
	}
}

func TestProvider_FailFaults(t *testing.T) {
	tests := []struct {
		kind     config.FaultKind
		fatal    bool
		sentinel error
	}{
		{config.FaultFail, false, ErrFailure},
		{config.FaultFatal, true, ErrInvalidKey},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			p := New(config.Script{Answers: []string{"a"}, Faults: []config.Fault{{Kind: tt.kind, Call: 1}}}, "m")
			r := run(t, p, coordReq())
			if len(r.kinds) != 1 || r.err == nil {
				t.Fatalf("chunks %v, want a single error", r.kinds)
			}
			var pe *provider.Error
			if !errors.As(r.err, &pe) || pe.Provider != Name {
				t.Fatalf("error %v (%T), want a *provider.Error from %s", r.err, r.err, Name)
			}
			if pe.Fatal != tt.fatal || provider.IsFatal(r.err) != tt.fatal {
				t.Errorf("fatal = %v, want %v", pe.Fatal, tt.fatal)
			}
			if !errors.Is(r.err, tt.sentinel) {
				t.Errorf("error %v does not wrap %v", r.err, tt.sentinel)
			}
			// The retry is call 2: it works, and the failed call submitted nothing.
			if got := summary(t, run(t, p, coordReq())); got != "new_answer:a" {
				t.Errorf("retry: %q", got)
			}
		})
	}
}

func TestProvider_FaultMatching(t *testing.T) {
	tests := []struct {
		name   string
		faults []config.Fault
		reqs   []provider.Request
		want   []string
	}{
		{
			name:   "by call number, first match wins",
			faults: []config.Fault{{Kind: config.FaultBadVote, Call: 2}, {Kind: config.FaultNoTool}},
			reqs:   []provider.Request{coordReq(), coordReq(), coordReq()},
			want:   []string{"text", "vote:agent99", "text"},
		},
		{
			name:   "call 0 is every call",
			faults: []config.Fault{{Kind: config.FaultFail}},
			reqs:   []provider.Request{coordReq(), coordReq()},
			want:   []string{"error: scripted: scripted failure", "error: scripted: scripted failure"},
		},
		{
			name:   "a later call only",
			faults: []config.Fault{{Kind: config.FaultDuplicate, Call: 3}},
			reqs:   []provider.Request{coordReq(), coordReq(shown{"agent1", "a"}), coordReq(shown{"agent1", "b"})},
			want:   []string{"new_answer:a", "new_answer:b", "new_answer:b"},
		},
		{
			name:   "presentation counts calls and skips tool faults",
			faults: []config.Fault{{Kind: config.FaultNoTool}, {Kind: config.FaultFatal, Call: 3}},
			reqs: []provider.Request{
				coordReq(), presentReq("agent1", shown{"agent1", "a"}), presentReq("agent1", shown{"agent1", "a"}),
			},
			want: []string{"text", "text", "error: scripted: status 401: model \"m\": invalid API key"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(config.Script{Answers: []string{"a", "b"}, Faults: tt.faults}, "m")
			for i, req := range tt.reqs {
				if got := summary(t, run(t, p, req)); got != tt.want[i] {
					t.Errorf("call %d: got %q, want %q", i+1, got, tt.want[i])
				}
			}
		})
	}
}
