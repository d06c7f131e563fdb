package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"massgen/internal/config"
	"massgen/internal/coord"
	"massgen/internal/event"
	"massgen/internal/permission"
	"massgen/internal/prompt"
	"massgen/internal/provider"
)

// Broadcast (coordination.broadcast, MassGen's ask_others): an agent asks a question in the
// middle of its turn. With `agents` every other live agent (or those it names) answers through
// a side call of its own model on a copy of its conversation as of its last model call: its
// own loop goes on undisturbed, and it is told afterwards what was answered on its behalf
// (MassGen's shadow agents). With `human` the person answers, through the broker that carries
// the answers to permission asks, one question at a time; once the person has answered, an
// agent asking for the first time is shown those answers instead (MassGen's Q&A reuse) and may
// ask again if they do not cover its question. broadcast_timeout bounds every question, and
// max_broadcasts_per_agent the questions of one agent in a turn.

// Bounds on what a model controls in a question.
const (
	maxQuestionBytes = 8 << 10
	maxQuestions     = 10
	maxOptions       = 20
)

// broadcasts is a session's broadcast state; nil when broadcast is off.
type broadcasts struct {
	cfg    config.Broadcast
	broker *permission.Broker // carries the person's answers; nil when nobody can answer
	// ctx is the coordination's: the side calls of a question nobody waits for stop with it.
	ctx  context.Context
	wg   sync.WaitGroup // the collections and side calls
	turn chan struct{}  // human: held by the question before the person

	// Guarded by the session's mu.
	seq    int
	prefix string               // before seq in question ids: a replica's turn ("agent2.3_"), else ""
	asked  []int                // questions asked, per agent
	reqs   map[string]*question // by id
	snaps  []snapshot           // each agent's conversation as of its last model call
	notes  [][]string           // what side calls answered on each agent's behalf, not yet told
	qa     []qaPair             // the person's answers so far
	qaTold []int                // how many of them each agent has been shown
}

// snapshot is what an agent's side call reads: its conversation as it last sent it.
type snapshot struct{ msgs []provider.Message }

type qaPair struct {
	Question string `json:"question"`
	Answer   string `json:"answer"`
}

// question is one ask_others call as it collects its answers.
type question struct {
	id, text  string
	asker     int
	targets   []int
	responses []response
	status    string        // "collecting" until done closes
	done      chan struct{} // closed when it stops collecting
}

// response is one answer as the asker reads it (MassGen's BroadcastResponse.to_dict).
type response struct {
	Responder string `json:"responder_id"`
	Content   string `json:"content"`
	Human     bool   `json:"is_human"`
}

// newBroadcasts returns the broadcast state of a session, or nil when broadcast is off.
func newBroadcasts(o Options) *broadcasts {
	b := o.Orchestrator.Broadcast
	if b.Mode == "" {
		return nil
	}
	if b.Timeout <= 0 {
		b.Timeout = 300 * time.Second
	}
	if b.MaxPerAgent <= 0 {
		b.MaxPerAgent = 10
	}
	n := len(o.Agents)
	return &broadcasts{cfg: b, broker: o.Asks, ctx: context.Background(), turn: make(chan struct{}, 1),
		asked: make([]int, n), reqs: map[string]*question{}, snaps: make([]snapshot, n), notes: make([][]string, n), qaTold: make([]int, n)}
}

func (b *broadcasts) human() bool { return b.cfg.Mode == config.BroadcastHuman }

// startBroadcasts gives the questions the coordination's context; waitBroadcasts waits for
// what still runs once it is cancelled.
func (s *session) startBroadcasts(ctx context.Context) {
	if s.bc != nil {
		s.bc.ctx = ctx
	}
}

func (s *session) waitBroadcasts() {
	if s.bc != nil {
		s.bc.wg.Wait()
	}
}

// broadcastTools are the broadcast tools agent i is offered.
func (s *session) broadcastTools(i int) []provider.ToolSpec {
	if s.bc == nil {
		return nil
	}
	var peers []string
	for k := range s.agents {
		if k != i {
			peers = append(peers, coord.Label(k))
		}
	}
	return prompt.BroadcastTools(s.bc.human(), s.bc.cfg.Sensitivity, s.bc.cfg.WaitByDefault || s.bc.human(), peers)
}

// isBroadcastTool reports whether the engine runs the call itself.
func (s *session) isBroadcastTool(name string) bool {
	return s.bc != nil && (name == prompt.ToolAskOthers || name == prompt.ToolBroadcastStatus || name == prompt.ToolBroadcastGet)
}

// keepContext records agent i's conversation as it sends it, for the side calls that answer
// questions in its name.
func (s *session) keepContext(i int, c *conversation) {
	if s.bc == nil {
		return
	}
	msgs := slices.Clone(c.msgs[:c.sent])
	s.mu.Lock()
	s.bc.snaps[i] = snapshot{msgs: msgs}
	s.mu.Unlock()
}

// deliverBroadcastNotesLocked tells agent i what its side calls answered since it last
// looked, appended to what its next call sends; s.mu must be held.
func (s *session) deliverBroadcastNotesLocked(i int, c *conversation) {
	if s.bc == nil || len(s.bc.notes[i]) == 0 {
		return
	}
	text := strings.Join(s.bc.notes[i], "\n\n")
	s.bc.notes[i] = nil
	if n := len(c.msgs); n > c.sent && c.msgs[n-1].Role != provider.RoleAssistant {
		c.msgs[n-1].Content += "\n\n" + text
	} else {
		c.msgs = append(c.msgs, provider.Message{Role: provider.RoleUser, Content: text})
	}
}

// runBroadcastTool runs one broadcast tool call of agent i and adds its result to c.
func (s *session) runBroadcastTool(ctx context.Context, i int, c *conversation, tc provider.ToolCall) {
	start := s.o.Now()
	var out any
	var err error
	switch tc.Name {
	case prompt.ToolAskOthers:
		out, err = s.askOthers(ctx, i, tc.Arguments)
	default:
		out, err = s.broadcastStatus(i, tc.Name, tc.Arguments)
	}
	content, isErr := "", err != nil
	if err != nil {
		content = "Error: " + err.Error()
	} else {
		b, _ := json.Marshal(out)
		content = string(b)
	}
	ev := event.ToolResult{Agent: s.agents[i].ID, CallID: tc.ID, Tool: tc.Name, IsError: isErr, DurationMS: float64(s.o.Now().Sub(start).Microseconds()) / 1000}
	ev.SetContent(content)
	s.publish(ev)
	c.msgs = append(c.msgs, provider.Message{Role: provider.RoleTool, ToolCallID: tc.ID, Content: content, IsError: isErr})
}

// askArgs are ask_others' arguments.
type askArgs struct {
	Question  string `json:"question"`
	Questions []struct {
		Text    string `json:"text"`
		Options []struct {
			ID          string `json:"id"`
			Label       string `json:"label"`
			Description string `json:"description"`
		} `json:"options"`
		MultiSelect bool  `json:"multiSelect"`
		AllowOther  *bool `json:"allowOther"`
	} `json:"questions"`
	TargetAgents []string `json:"target_agents"`
	Wait         *bool    `json:"wait"`
}

// text is the question as the answerers read it: structured questions are written out with
// their options.
func (a askArgs) text() (string, error) {
	if len(a.Questions) == 0 {
		q := strings.TrimSpace(a.Question)
		if q == "" {
			return "", fmt.Errorf("ask_others needs a question: pass `question` (text) or `questions` (with options)")
		}
		return q, nil
	}
	if len(a.Questions) > maxQuestions {
		return "", fmt.Errorf("%d questions in one call: ask at most %d", len(a.Questions), maxQuestions)
	}
	var b strings.Builder
	for k, q := range a.Questions {
		if strings.TrimSpace(q.Text) == "" {
			return "", fmt.Errorf("questions[%d] has no text", k)
		}
		if len(q.Options) > maxOptions {
			return "", fmt.Errorf("questions[%d] has %d options: give at most %d", k, len(q.Options), maxOptions)
		}
		if k > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "%d. %s", k+1, strings.TrimSpace(q.Text))
		for _, o := range q.Options {
			fmt.Fprintf(&b, "\n   - [%s] %s", o.ID, o.Label)
			if o.Description != "" {
				b.WriteString(": " + o.Description)
			}
		}
		switch {
		case q.MultiSelect:
			b.WriteString("\n   (choose one or more)")
		case len(q.Options) > 0:
			b.WriteString("\n   (choose one)")
		}
		if q.AllowOther == nil || *q.AllowOther {
			b.WriteString("\n   (or answer in your own words)")
		}
	}
	return b.String(), nil
}

// askOthers runs ask_others for agent i.
func (s *session) askOthers(ctx context.Context, i int, raw string) (any, error) {
	var args askArgs
	if err := json.Unmarshal([]byte(cmp.Or(strings.TrimSpace(raw), "{}")), &args); err != nil {
		return nil, fmt.Errorf("ask_others arguments are not a JSON object: %v", err)
	}
	text, err := args.text()
	if err != nil {
		return nil, err
	}
	if len(text) > maxQuestionBytes {
		return nil, fmt.Errorf("the question is %d bytes, over the %d-byte limit: ask something shorter", len(text), maxQuestionBytes)
	}
	bc := s.bc
	if bc.human() {
		return s.askPerson(ctx, i, text)
	}
	targets, err := s.targets(i, args.TargetAgents)
	if err != nil {
		return nil, err
	}
	wait := bc.cfg.WaitByDefault
	if args.Wait != nil && !bc.cfg.WaitByDefault {
		wait = *args.Wait // the polling tools are offered only when waiting is not the default
	}
	q, asked, err := s.openQuestion(i, text, targets, wait)
	if err != nil {
		return nil, err
	}
	s.publish(asked)
	bc.wg.Go(func() { s.collect(q) })
	if !wait {
		return map[string]any{"request_id": q.id, "status": "pending"}, nil
	}
	select {
	case <-q.done:
	case <-ctx.Done():
		return nil, fmt.Errorf("not answered: the session is ending")
	}
	return s.result(q), nil
}

// targets resolves target_agents (labels) to the agents asked: every other live agent when
// none is named.
func (s *session) targets(i int, labels []string) ([]int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var valid []string
	var all []int
	for k := range s.agents {
		if k != i && !s.m.Dead(k) {
			valid = append(valid, coord.Label(k))
			all = append(all, k)
		}
	}
	if len(labels) == 0 {
		if len(all) == 0 {
			return nil, fmt.Errorf("no other agent is left in the session to ask")
		}
		return all, nil
	}
	var out []int
	for _, l := range labels {
		k := slices.Index(valid, l)
		if k < 0 {
			return nil, fmt.Errorf("target_agents: %q is not an agent you can ask; valid: %s", provider.Clip(l, 40), strings.Join(valid, ", "))
		}
		if !slices.Contains(out, all[k]) {
			out = append(out, all[k])
		}
	}
	return out, nil
}

// openQuestion counts the question against max_broadcasts_per_agent and returns it with the
// event that announces it, which the caller publishes once an answer can be taken.
func (s *session) openQuestion(i int, text string, targets []int, wait bool) (*question, event.BroadcastAsked, error) {
	bc := s.bc
	s.mu.Lock()
	defer s.mu.Unlock()
	if bc.asked[i] >= bc.cfg.MaxPerAgent {
		return nil, event.BroadcastAsked{}, fmt.Errorf("you have asked %d questions, the limit (max_broadcasts_per_agent): go on with what you know", bc.cfg.MaxPerAgent)
	}
	bc.asked[i]++
	bc.seq++
	q := &question{id: fmt.Sprintf("bc_%s%d", bc.prefix, bc.seq), text: text, asker: i, targets: targets, status: "collecting", done: make(chan struct{})}
	bc.reqs[q.id] = q
	ids := make([]string, len(targets))
	for k, t := range targets {
		ids[k] = s.agents[t].ID
	}
	return q, event.BroadcastAsked{Agent: s.agents[i].ID, ID: q.id, Question: text, Targets: ids, Human: len(targets) == 0, Wait: wait,
		TimeoutSeconds: bc.cfg.Timeout.Seconds()}, nil
}

// collect runs the side calls of q in parallel until they all answered, broadcast_timeout
// passed, or coordination ended.
func (s *session) collect(q *question) {
	bc := s.bc
	ctx, cancel := context.WithTimeout(bc.ctx, bc.cfg.Timeout)
	defer cancel()
	var wg sync.WaitGroup
	answered := make(chan struct{}, len(q.targets))
	for _, k := range q.targets {
		wg.Go(func() { s.sideAnswer(ctx, q, k); answered <- struct{}{} })
	}
	status, note := event.BroadcastComplete, ""
	for range q.targets {
		select {
		case <-answered:
			continue
		case <-ctx.Done():
			status, note = event.BroadcastTimeout, fmt.Sprintf("not every answer came within broadcast_timeout (%s)", bc.cfg.Timeout)
			if bc.ctx.Err() != nil {
				status, note = event.BroadcastCancelled, "coordination ended first"
			}
		}
		break
	}
	wg.Wait() // the side calls stop with ctx
	s.closeQuestion(q, status, note)
}

// sideAnswer makes agent k's side call for q and records its answer.
func (s *session) sideAnswer(ctx context.Context, q *question, k int) {
	a := s.agents[k]
	from := coord.Label(q.asker)
	var text string
	var err error
	if a.HoldsSession {
		err = fmt.Errorf("%s is a coding-agent CLI holding one session: a side call would disturb it", coord.Label(k))
	} else {
		s.mu.Lock()
		msgs := slices.Clone(s.bc.snaps[k].msgs)
		s.mu.Unlock()
		if msgs == nil && s.o.PeerContext != nil {
			msgs = s.o.PeerContext(k)
		}
		msgs = append(msgs, provider.Message{Role: provider.RoleUser, Content: prompt.ShadowQuestion(from, q.text)})
		var u provider.Usage
		text, u, err = s.reply(ctx, k, provider.Request{Model: a.Model, System: prompt.ShadowSystem(a.System, s.bc.cfg.ResponseDepth),
			Messages: msgs, Stage: provider.StageBroadcast, Params: a.Params})
		s.accountSide(k, u)
	}
	if ctx.Err() != nil && err != nil {
		return // timed out or cancelled: the question says so
	}
	r := response{Responder: coord.Label(k), Content: strings.TrimSpace(text)}
	if err != nil {
		r.Content = fmt.Sprintf("[Error: %s could not answer: %v]", coord.Label(k), err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	q.responses = append(q.responses, r)
	s.publish(event.BroadcastAnswered{Agent: s.agents[q.asker].ID, ID: q.id, Responder: a.ID, Content: r.Content, Error: err != nil})
	if err == nil {
		s.bc.notes[k] = append(s.bc.notes[k], prompt.ShadowNote(from, q.text, r.Content))
	}
}

// accountSide counts a side call's usage as agent k's, from another goroutine than k's.
func (s *session) accountSide(k int, u provider.Usage) {
	if u == (provider.Usage{}) {
		return
	}
	a := s.agents[k]
	cost := s.o.Price(a.Backend, a.Model, u)
	if u.CostUSD > 0 {
		cost = u.CostUSD
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.publish(event.UsageReported{Agent: a.ID, Usage: u, CostUSD: cost, Round: s.turnOf[k]})
	s.addCost(k, u, cost)
}

// closeQuestion ends q's collection once.
func (s *session) closeQuestion(q *question, status, note string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if q.status != "collecting" {
		return
	}
	q.status = status
	if len(q.responses) > 0 {
		note = ""
	}
	s.publish(event.BroadcastDone{Agent: s.agents[q.asker].ID, ID: q.id, Status: status, Answers: len(q.responses), Note: note})
	close(q.done)
}

// result is what the asker reads of q.
func (s *session) result(q *question) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]any{"status": q.status, "responses": slices.Clone(q.responses)}
	if q.responses == nil {
		out["responses"] = []response{}
	}
	if q.status == event.BroadcastTimeout && len(q.responses) == 0 {
		out["note"] = "nobody answered in time: go on with your own judgement"
	}
	return out
}

// broadcastStatus runs check_broadcast_status or get_broadcast_responses.
func (s *session) broadcastStatus(i int, tool, raw string) (any, error) {
	var args struct {
		RequestID string `json:"request_id"`
	}
	if err := json.Unmarshal([]byte(cmp.Or(strings.TrimSpace(raw), "{}")), &args); err != nil || args.RequestID == "" {
		return nil, fmt.Errorf("%s needs {\"request_id\": ...}, the id ask_others returned", tool)
	}
	s.mu.Lock()
	q := s.bc.reqs[args.RequestID]
	s.mu.Unlock()
	if q == nil || q.asker != i {
		return nil, fmt.Errorf("no question %q of yours: use the request_id ask_others returned", provider.Clip(args.RequestID, 40))
	}
	if tool == prompt.ToolBroadcastGet {
		return s.result(q), nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var waiting []string
	for _, t := range q.targets {
		if !slices.ContainsFunc(q.responses, func(r response) bool { return r.Responder == coord.Label(t) }) {
			waiting = append(waiting, coord.Label(t))
		}
	}
	if waiting == nil {
		waiting = []string{}
	}
	return map[string]any{"status": q.status, "response_count": len(q.responses), "expected_count": len(q.targets), "waiting_for": waiting}, nil
}
