package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/permission"
	"massgen/internal/prompt"
	"massgen/internal/provider"
)

func askCall(id string, args map[string]any) provider.ToolCall {
	b, _ := json.Marshal(args)
	return provider.ToolCall{ID: id, Name: prompt.ToolAskOthers, Arguments: string(b)}
}

// toolResult is the content of the result of call id in req, "" when there is none.
func toolResult(req provider.Request, id string) string {
	for _, m := range req.Messages {
		if m.Role == provider.RoleTool && m.ToolCallID == id {
			return m.Content
		}
	}
	return ""
}

type askResult struct {
	Status    string     `json:"status"`
	Responses []response `json:"responses"`
	RequestID string     `json:"request_id"`
	Note      string     `json:"note"`
	History   []qaPair   `json:"human_qa_history"`
}

func readResult(t *testing.T, s string) askResult {
	t.Helper()
	var r askResult
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Fatalf("ask_others result %q: %v", s, err)
	}
	return r
}

func broadcastOn(mode string) config.Orchestrator {
	return config.Orchestrator{Broadcast: config.Broadcast{Mode: mode, Sensitivity: "medium", ResponseDepth: "low", WaitByDefault: true, Timeout: time.Minute}}
}

// peer answers once and votes for agent1; its side calls answer with sideReply. It records
// the side calls apart, so that its own conversation can be checked to be undisturbed.
type peer struct {
	*fake
	content, sideReply string
}

func newPeer(content, sideReply string) *peer {
	p := &peer{content: content, sideReply: sideReply}
	p.fake = &fake{next: func(n int, req provider.Request) step {
		switch {
		case req.Stage == provider.StageBroadcast:
			return step{text: p.sideReply}
		case req.Stage == provider.StagePresentation:
			return step{text: "FINAL " + content}
		case !hasOwnAnswer(req, content):
			return step{delay: time.Second, text: content, calls: answer(content).calls}
		}
		return voteFirst(req)
	}}
	return p
}

// voteFirst votes for agent1 once it has an answer, else for the first label offered.
func voteFirst(req provider.Request) step {
	if ls := labels(req); !slices.Contains(ls, "agent1") && len(ls) > 0 {
		return vote(ls[0], "the only one")
	}
	return vote("agent1", "agent1 asked well")
}

// main returns the peer's own requests, without its side calls.
func (p *peer) main() []provider.Request {
	var out []provider.Request
	for _, r := range p.requests() {
		if r.Stage != provider.StageBroadcast {
			out = append(out, r)
		}
	}
	return out
}

func (p *peer) side() []provider.Request {
	var out []provider.Request
	for _, r := range p.requests() {
		if r.Stage == provider.StageBroadcast {
			out = append(out, r)
		}
	}
	return out
}

// Agent 1 asks; agents 2 and 3 answer through side calls on copies of their conversations,
// with no tools; agent 1 reads both answers as the call's result; 2 and 3 go on with their
// own turns, told afterwards what they answered; the side calls' usage is theirs and counted.
func TestBroadcast_AgentsAnswerThroughSideCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		asker := &fake{next: func(n int, req provider.Request) step {
			switch {
			case req.Stage == provider.StagePresentation:
				return step{text: "FINAL: Paris"}
			case n == 1:
				// By then agents 2 and 3 are in their first calls.
				return step{delay: 500 * time.Millisecond, calls: []provider.ToolCall{askCall("ask1", map[string]any{"question": "Is it Paris or Lyon?"})}}
			case toolResult(req, "ask1") != "" && !hasOwnAnswer(req, "Paris."):
				return answer("Paris.")
			}
			return vote("agent1", "mine")
		}}
		b, c := newPeer("Paris, surely.", "Paris: the seat of government."), newPeer("It is Paris.", "Paris, not Lyon.")
		res, evs := run(t, t.Context(), Options{Agents: agents(asker, b, c), Orchestrator: broadcastOn(config.BroadcastAgents)})
		if res.ExitCode != 0 || res.Winner != "a1" {
			t.Fatalf("result %+v", res)
		}
		got := readResult(t, toolResult(asker.requests()[1], "ask1"))
		slices.SortFunc(got.Responses, func(x, y response) int { return strings.Compare(x.Responder, y.Responder) })
		want := []response{{Responder: "agent2", Content: "Paris: the seat of government."}, {Responder: "agent3", Content: "Paris, not Lyon."}}
		if got.Status != event.BroadcastComplete || !slices.Equal(got.Responses, want) {
			t.Fatalf("ask_others result %+v, want complete with %+v", got, want)
		}
		for _, p := range []*peer{b, c} {
			side := p.side()
			if len(side) != 1 {
				t.Fatalf("%d side calls, want 1", len(side))
			}
			sc := side[0]
			if len(sc.Tools) != 0 || !strings.Contains(sc.System, "Another agent of your team asks you a question") ||
				!strings.Contains(sc.System, "Keep it short") {
				t.Errorf("side call tools %d, system %q", len(sc.Tools), sc.System)
			}
			// Its conversation as it last sent it, then the question from agent1.
			own := p.main()[0]
			if len(sc.Messages) != len(own.Messages)+1 || sc.Messages[0].Content != own.Messages[0].Content ||
				!strings.Contains(sc.Messages[len(sc.Messages)-1].Content, "Question from agent1:\n\nIs it Paris or Lyon?") {
				t.Errorf("side call messages %+v", sc.Messages)
			}
			// Its own loop: one answer call, then its vote, reading what it answered for
			// agent1 as information only.
			main := p.main()
			if len(main) < 2 || !strings.Contains(lastInput(main[1]), "While you worked, agent1 asked") {
				t.Errorf("the peer's next call was not told of its side answer: %+v", main)
			}
		}
		asked := ofType[event.BroadcastAsked](evs)
		done := ofType[event.BroadcastDone](evs)
		answered := ofType[event.BroadcastAnswered](evs)
		if len(asked) != 1 || asked[0].Agent != "a1" || !slices.Equal(asked[0].Targets, []string{"a2", "a3"}) || asked[0].Human ||
			len(answered) != 2 || len(done) != 1 || done[0].Status != event.BroadcastComplete || done[0].Answers != 2 {
			t.Fatalf("events: asked %+v answered %+v done %+v", asked, answered, done)
		}
		// Every call is paid for: 3 agents' own calls and the 2 side calls, 10 input tokens each.
		calls := len(asker.requests()) + len(b.requests()) + len(c.requests())
		if res.Usage.InputTokens != int64(10*calls) {
			t.Fatalf("usage %d input tokens for %d calls", res.Usage.InputTokens, calls)
		}
	})
}

// lastInput is the text of the last user or tool message of req.
func lastInput(req provider.Request) string {
	for k := len(req.Messages) - 1; k >= 0; k-- {
		if m := req.Messages[k]; m.Role != provider.RoleAssistant {
			return m.Content
		}
	}
	return ""
}

// A side call that outlives broadcast_timeout ends the question as timed out with the
// answers that came; max_broadcasts_per_agent refuses the next question.
func TestBroadcast_TimeoutAndLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		asker := &fake{next: func(n int, req provider.Request) step {
			switch {
			case req.Stage == provider.StagePresentation:
				return step{text: "FINAL"}
			case n <= 2:
				return step{calls: []provider.ToolCall{askCall(fmt.Sprintf("ask%d", n), map[string]any{"question": "Anyone?"})}}
			case !hasOwnAnswer(req, "Mine."):
				return answer("Mine.")
			}
			return vote("agent1", "mine")
		}}
		slow := newPeer("Slow.", "")
		slow.fake.next = func(n int, req provider.Request) step {
			switch {
			case req.Stage == provider.StageBroadcast:
				return step{hang: true}
			case req.Stage == provider.StagePresentation:
				return step{text: "FINAL"}
			case !hasOwnAnswer(req, "Slow."):
				return answer("Slow.")
			}
			return voteFirst(req)
		}
		fast := newPeer("Fast.", "Yes.")
		o := broadcastOn(config.BroadcastAgents)
		o.Broadcast.Timeout, o.Broadcast.MaxPerAgent = 30*time.Second, 1
		res, evs := run(t, t.Context(), Options{Agents: agents(asker, slow, fast), Orchestrator: o})
		if res.ExitCode != 0 {
			t.Fatalf("result %+v", res)
		}
		reqs := asker.requests()
		first := readResult(t, toolResult(reqs[1], "ask1"))
		if first.Status != event.BroadcastTimeout || len(first.Responses) != 1 || first.Responses[0].Responder != "agent3" {
			t.Fatalf("first question %+v, want timeout with agent3's answer", first)
		}
		second := toolResult(reqs[2], "ask2")
		if !strings.HasPrefix(second, "Error: you have asked 1 questions, the limit (max_broadcasts_per_agent)") {
			t.Fatalf("second question: %q", second)
		}
		if d := ofType[event.BroadcastDone](evs); len(d) != 1 || d[0].Status != event.BroadcastTimeout {
			t.Fatalf("done %+v", d)
		}
	})
}

// broadcast: human: the question reaches the person through the broker; a second agent that
// asks is shown the person's answer instead, and asking again puts its question to the person;
// a question nobody answers ends as timed out.
func TestBroadcast_Human(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		broker := permission.NewBroker()
		first := &fake{next: func(n int, req provider.Request) step {
			switch {
			case req.Stage == provider.StagePresentation:
				return step{text: "FINAL"}
			case n == 1:
				return step{calls: []provider.ToolCall{askCall("q1", map[string]any{"questions": []any{map[string]any{"text": "Which format?",
					"options": []any{map[string]any{"id": "md", "label": "Markdown"}, map[string]any{"id": "html", "label": "HTML"}}}}})}}
			case !hasOwnAnswer(req, "One."):
				return answer("One.")
			}
			return vote("agent1", "mine")
		}}
		second := &fake{next: func(n int, req provider.Request) step {
			switch {
			case req.Stage == provider.StagePresentation:
				return step{text: "FINAL"}
			case n == 1:
				return step{delay: 10 * time.Second, calls: []provider.ToolCall{askCall("q2", map[string]any{"question": "How long?"})}}
			case n == 2:
				return step{calls: []provider.ToolCall{askCall("q3", map[string]any{"question": "How long, in words?"})}}
			case !hasOwnAnswer(req, "Two."):
				return answer("Two.")
			}
			return voteFirst(req)
		}}
		o := broadcastOn(config.BroadcastHuman)
		o.Broadcast.Timeout = 20 * time.Second
		rec := &recorder{}
		bus := event.NewBus(nil)
		bus.Subscribe(rec)
		done := make(chan Result, 1)
		go func() {
			done <- Run(t.Context(), Options{Question: "Write it", Agents: agents(first, second), Orchestrator: o, Asks: broker, Bus: bus,
				RetryDelay: func(int) time.Duration { return 0 }})
		}()
		synctest.Wait()
		asked := ofType[event.BroadcastAsked](rec.all())
		if len(asked) != 1 || !asked[0].Human || !strings.Contains(asked[0].Question, "1. Which format?\n   - [md] Markdown\n   - [html] HTML\n   (choose one)") {
			t.Fatalf("asked %+v", asked)
		}
		if err := broker.Answer(asked[0].ID, "allow"); err == nil {
			t.Error("a question took a permission decision")
		}
		if err := broker.Reply(asked[0].ID, "Markdown"); err != nil {
			t.Fatal(err)
		}
		res := <-done
		if res.ExitCode != 0 {
			t.Fatalf("result %+v", res)
		}
		r1 := readResult(t, toolResult(first.requests()[1], "q1"))
		if r1.Status != event.BroadcastComplete || len(r1.Responses) != 1 || r1.Responses[0] != (response{Responder: "human", Content: "Markdown", Human: true}) {
			t.Fatalf("first agent's result %+v", r1)
		}
		r2 := readResult(t, toolResult(second.requests()[1], "q2"))
		if r2.Status != "deferred" || len(r2.History) != 1 || r2.History[0].Answer != "Markdown" {
			t.Fatalf("second agent's first result %+v, want the person's earlier answer", r2)
		}
		r3 := readResult(t, toolResult(second.requests()[2], "q3"))
		if r3.Status != event.BroadcastTimeout || len(r3.Responses) != 0 || !strings.Contains(r3.Note, "nobody answered within broadcast_timeout (20s)") {
			t.Fatalf("unanswered question %+v", r3)
		}
		if broker.Waiting() != 0 {
			t.Errorf("%d asks still waiting", broker.Waiting())
		}
	})
}

// Without waiting (broadcast_wait_by_default: false) ask_others returns a request id at once,
// and the answers are collected with get_broadcast_responses.
func TestBroadcast_CollectLater(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		asker := &fake{next: func(n int, req provider.Request) step {
			switch {
			case req.Stage == provider.StagePresentation:
				return step{text: "FINAL"}
			case n == 1:
				return step{calls: []provider.ToolCall{askCall("ask", map[string]any{"question": "Thoughts?"})}}
			case n == 2:
				id := readResult(t, toolResult(req, "ask")).RequestID
				return step{delay: 5 * time.Second, calls: []provider.ToolCall{{ID: "get", Name: prompt.ToolBroadcastGet, Arguments: `{"request_id":"` + id + `"}`}}}
			case !hasOwnAnswer(req, "Mine."):
				return answer("Mine.")
			}
			return vote("agent1", "mine")
		}}
		b := newPeer("B.", "Think twice.")
		o := broadcastOn(config.BroadcastAgents)
		o.Broadcast.WaitByDefault = false
		res, _ := run(t, t.Context(), Options{Agents: agents(asker, b), Orchestrator: o})
		if res.ExitCode != 0 {
			t.Fatalf("result %+v", res)
		}
		reqs := asker.requests()
		if r := readResult(t, toolResult(reqs[1], "ask")); r.Status != "pending" || r.RequestID != "bc_1" {
			t.Fatalf("ask_others without waiting: %+v", r)
		}
		var names []string
		for _, tl := range reqs[0].Tools {
			names = append(names, tl.Name)
		}
		if !slices.Contains(names, prompt.ToolBroadcastStatus) || !slices.Contains(names, prompt.ToolBroadcastGet) {
			t.Errorf("tools offered %v", names)
		}
		got := readResult(t, toolResult(reqs[2], "get"))
		if got.Status != event.BroadcastComplete || len(got.Responses) != 1 || got.Responses[0].Content != "Think twice." {
			t.Fatalf("collected %+v", got)
		}
	})
}

// Bad arguments get an error that says what to fix, and nobody is asked.
func TestBroadcast_BadArguments(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{`not json`, "ask_others arguments are not a JSON object"},
		{`{}`, "ask_others needs a question"},
		{`{"question": "x", "target_agents": ["agent1"]}`, `target_agents: "agent1" is not an agent you can ask; valid: agent2`},
		{`{"question": "` + strings.Repeat("x", maxQuestionBytes+1) + `"}`, "over the 8192-byte limit"},
	} {
		s := newSession(Options{Agents: agents(&fake{}, &fake{}), Orchestrator: broadcastOn(config.BroadcastAgents)})
		_, err := s.askOthers(t.Context(), 0, tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.40s: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// A session killed while a question to the person waits (kill -9: the log stops after
// broadcast_asked) resumes without hanging: the question is closed as cancelled, the asker's
// call in flight is made again and asks anew under a new id.
func TestBroadcast_ResumeClosesTheQuestionInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		team := func(slow time.Duration) (*fake, *fake) {
			asker := &fake{next: func(n int, req provider.Request) step {
				switch {
				case req.Stage == provider.StagePresentation:
					return step{text: "FINAL"}
				case n == 1: // in each process: the resumed one makes the call in flight again
					return step{calls: []provider.ToolCall{askCall("ask", map[string]any{"question": "Which colour?"})}}
				case !hasOwnAnswer(req, "One."):
					return answer("One.")
				}
				return vote("agent1", "mine")
			}}
			other := &fake{next: func(n int, req provider.Request) step {
				switch {
				case req.Stage == provider.StagePresentation:
					return step{text: "FINAL"}
				case !hasOwnAnswer(req, "Two."):
					return step{delay: slow, text: "Two.", calls: answer("Two.").calls}
				}
				return voteFirst(req)
			}}
			return asker, other
		}
		o := broadcastOn(config.BroadcastHuman)
		o.Broadcast.Timeout = 10 * time.Second
		// The first process: the question is asked, then the process dies.
		asker, other := team(time.Hour)
		rec := &recorder{}
		bus := event.NewBus(nil)
		bus.Subscribe(rec)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			defer close(done)
			Run(ctx, Options{Question: "Paint it", Agents: agents(asker, other), Orchestrator: o, Asks: permission.NewBroker(), Bus: bus})
		}()
		synctest.Wait()
		cancel()
		<-done
		evs := rec.all()
		cut := slices.IndexFunc(evs, func(e event.Event) bool { _, ok := e.Payload.(event.BroadcastAsked); return ok })
		if cut < 0 {
			t.Fatal("the first process asked nothing")
		}
		log := evs[:cut+1]
		// The second process resumes from that log; nobody answers this time either.
		asker, other = team(2 * time.Second)
		rec = &recorder{}
		bus = event.NewBus(nil)
		bus.ResumeAt(int64(len(log)))
		bus.Subscribe(rec)
		o.Broadcast.Timeout = time.Second
		res := Run(t.Context(), Options{Question: "Paint it", Agents: agents(asker, other), Orchestrator: o, Asks: permission.NewBroker(), Bus: bus,
			Restore: &Restore{Events: log, Previous: "killed"}})
		if res.ExitCode != 0 {
			t.Fatalf("resumed: %+v", res)
		}
		got := rec.all()
		closed := ofType[event.BroadcastDone](got)
		asked := ofType[event.BroadcastAsked](got)
		if len(closed) < 1 || closed[0].ID != "bc_1" || closed[0].Status != event.BroadcastCancelled {
			t.Fatalf("the question in flight was not closed: %+v", closed)
		}
		if len(asked) != 1 || asked[0].ID != "bc_2" {
			t.Fatalf("the resumed asker's question: %+v, want bc_2", asked)
		}
		if len(closed) != 2 || closed[1].ID != "bc_2" || closed[1].Status != event.BroadcastTimeout {
			t.Fatalf("questions closed %+v", closed)
		}
	})
}
