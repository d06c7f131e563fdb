package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"massgen/internal/config"
	"massgen/internal/coord"
	"massgen/internal/event"
	"massgen/internal/prompt"
	"massgen/internal/provider"
)

// present picks the winner and produces the final answer (final_answer_strategy): a new
// generation by the presenter seeing every answer and the votes (winner_present), a merge of
// the best of all answers (synthesize), or the winner's answer as is (winner_reuse). The
// presenter is the winner, or presenter_agent when that agent is alive. An interrupted, failed
// or dead-presenter session gets the stored answer, so nothing produced is lost.
func (s *session) present(ctx context.Context) Result {
	if s.decomposing() {
		return s.presentParts(ctx)
	}
	verified := s.verifyWinner(ctx)
	s.mu.Lock()
	reason := s.reason
	r := s.m.Winner()
	if reason == event.EndSkipped {
		r = coord.Result{Winner: 0}
	}
	if verified >= 0 && verified != r.Winner {
		// The vote's winner failed a verifier: the next answer that passed them all wins.
		r.Winner, r.Tie = verified, false
	}
	ended := event.CoordinationEnded{Reason: reason, Tie: r.Tie}
	for _, c := range r.Tally {
		t := event.Tally{Agent: s.agents[c.Agent].ID, Label: coord.Label(c.Agent), Votes: c.Votes}
		if s.weighing() {
			t.Score = c.Score
		}
		for _, v := range c.Voters {
			t.Voters = append(t.Voters, s.agents[v].ID)
		}
		ended.Tally = append(ended.Tally, t)
	}
	var stored coord.Answer
	var hasStored bool
	p := prompt.Presentation{Question: s.o.Question, History: s.o.History,
		Strategy: s.o.Orchestrator.FinalAnswerStrategy, Voted: !s.skipVoting && reason != event.EndSkipped}
	presenter, note := r.Winner, ""
	if r.Winner >= 0 {
		stored, hasStored = s.m.Current(r.Winner)
		ended.Winner, ended.WinnerLabel, ended.AnswerLabel = s.agents[r.Winner].ID, coord.Label(r.Winner), stored.Label
		p.Winner, p.Votes.Tie = coord.Label(r.Winner), r.Tie
		for k := range s.agents {
			if v, ok := s.m.CurrentVote(k); ok && v.Target == r.Winner {
				p.Votes.Votes++
				p.Votes.Reasons = append(p.Votes.Reasons, v.Reason)
			}
		}
		presenter, note = s.presenterLocked(r.Winner)
	}
	presenterDead := presenter >= 0 && s.m.Dead(presenter)
	p.Answers = s.visible(s.m.CurrentAnswers())
	s.publish(ended)
	s.mu.Unlock()

	status, code := outcome(reason)
	res := Result{Status: status, ExitCode: code, EndReason: reason, Err: s.errorFor(reason)}
	if r.Winner < 0 {
		if res.ExitCode == 0 {
			res.Status, res.ExitCode = event.StatusFailed, 2
		}
		res.Err = errors.Join(res.Err, errors.New("no agent produced an answer"))
		return res
	}
	mode := config.PresentationMode(s.o.Orchestrator.FinalAnswerStrategy)
	if reason == event.EndInterrupted || reason == event.EndAllDead || presenterDead {
		mode = "verbatim"
	}
	if mode == "verbatim" {
		// No model call: the winner's answer is the final answer, whoever would have presented.
		presenter = r.Winner
	}
	w := s.agents[presenter]
	started := event.FinalStarted{Agent: w.ID, Mode: mode, Note: note}
	if presenter != r.Winner {
		started.Winner = s.agents[r.Winner].ID
	}
	s.publish(started)
	content, fallback, truncated := stored.Content, true, ""
	if mode != "verbatim" {
		p.Presenter = coord.Label(presenter)
		p.Changedoc = s.changedocOn(presenter)
		system, user := p.System(w.System), p.User()
		if reason == event.EndSkipped {
			system, user = prompt.PresentationSystem(w.System), prompt.Direct(s.o.Question, s.o.History)
		}
		if ws := w.Workspace; ws != nil {
			ws.GrantFinal()
			defer ws.RevokeFinal()
		}
		var text, cutBy string
		var err error
		if s.remote.present != nil {
			// On Temporal the presenter's conversation lives in the worker that ran its turn,
			// so the presentation is a fresh call there.
			if s.plan.on {
				system += prompt.PlanningRelease
			}
			text, cutBy, err = s.remote.present(ctx, presenter, system, user)
		} else if c := s.continuation(presenter, reason, p); c != nil {
			text, cutBy, err = s.presentation(ctx, presenter, *c)
		} else {
			if s.plan.on {
				system += prompt.PlanningRelease
			}
			text, cutBy, err = s.presentation(ctx, presenter, presentCall{system: system,
				msgs: []provider.Message{{Role: provider.RoleUser, Content: user}}, tools: w.Tools.Specs()})
		}
		switch {
		case err != nil:
			s.publish(event.AgentError{Agent: w.ID, Message: fmt.Sprintf("final presentation failed, using the stored answer: %v", err), Budget: s.o.Orchestrator.FailureBudget, Timeout: errors.Is(err, errCallTimeout)})
		case strings.TrimSpace(text) != "":
			content, fallback, truncated = text, false, cutBy
		}
		if ctx.Err() != nil && res.ExitCode == 0 {
			res.Status, res.ExitCode, res.Err = event.StatusInterrupted, 4, errors.New("interrupted during the final presentation")
		}
	} else if hasStored {
		fallback = reason != event.EndConsensus && reason != event.EndBudget && reason != event.EndAllAnswered && reason != event.EndDecided
	}
	if strings.TrimSpace(content) == "" {
		res.Status, res.ExitCode = event.StatusFailed, 2
		res.Err = errors.Join(res.Err, errors.New("the final presentation produced no answer"))
		return res
	}
	s.publish(event.FinalAnswer{Agent: w.ID, Label: coord.Label(presenter) + ".final", Content: content, Mode: mode, Fallback: fallback,
		Truncated: truncated != "", TruncatedBy: truncated, Changedoc: s.finalChangedoc(presenter, mode != "verbatim" && !fallback, stored)})
	res.Winner, res.FinalAnswer, res.TruncatedBy = w.ID, content, truncated
	return res
}

// presenterLocked returns who presents for winner: presenter_agent when it names a live agent,
// else the winner, with a note saying why the configured one does not; s.mu must be held.
// MassGen reads presenter_agent in decomposition mode only (in voting mode the winner always
// presents); here it applies to voting too, as a user who names a presenter expects.
func (s *session) presenterLocked(winner int) (int, string) {
	id := s.o.Orchestrator.PresenterAgent
	if id == "" {
		return winner, ""
	}
	for k, a := range s.agents {
		if a.ID != id {
			continue
		}
		if s.m.Dead(k) {
			return winner, fmt.Sprintf("presenter_agent %q failed during coordination, so the winner %s presents", id, s.agents[winner].ID)
		}
		return k, ""
	}
	return winner, fmt.Sprintf("presenter_agent %q is not one of the agents, so the winner %s presents", id, s.agents[winner].ID)
}

// presentCall is where a final presentation starts: the system prompt, the conversation (the
// last messages new, from sent on) and the tools it offers.
type presentCall struct {
	system string
	msgs   []provider.Message
	sent   int
	tools  []provider.ToolSpec
}

// presentation runs agent i's final presentation from pc: its own tools (with write access to
// context paths) in a loop until it answers with text. A presentation that continues a
// coordination conversation still offers the workflow tools, to keep the cached prefix. A
// new_answer's content is taken as the final answer; any other call to a tool the agent does
// not have (vote) is refused once, after which the request forbids tool calls when only
// coordination tools are offered (provider.ToolChoiceNone), and a second one (a model or CLI
// that ignores the tool choice) ends the presentation with the text written so far, else an
// error. A response
// cut off (by the token limit or max_response_chars) ends it with the text so far and what
// cut it off (event.TruncatedTokenLimit or event.TruncatedResponseChars); its tool calls are
// not run.
func (s *session) presentation(ctx context.Context, i int, pc presentCall) (text, truncated string, err error) {
	w := s.agents[i]
	msgs, sent := pc.msgs, pc.sent
	// The first call keeps the API's default tool choice: changing it loses Anthropic's cached
	// messages (the whole coordination conversation), which costs every run; only a presenter
	// that has already called a refused tool is sent none.
	choice := provider.ToolChoiceAuto
	var all strings.Builder
	refusedOnce := false
	for round := 0; ; round++ {
		req := provider.Request{Model: w.Model, System: pc.system, Stage: provider.StagePresentation, Params: w.Params,
			Messages: msgs, Tools: pc.tools, ToolChoice: choice, CacheKey: s.cacheKey(w.Model)}
		mc := event.ModelCalled{Agent: w.ID, Stage: provider.StagePresentation, Attempt: round + 1, Fresh: sent == 0, Messages: msgs[sent:]}
		if mc.Fresh {
			mc.System = pc.system
		}
		s.publish(mc)
		sent = len(msgs)
		out, err := s.call(ctx, i, req, true, time.Time{})
		if err != nil {
			return "", "", err
		}
		all.WriteString(out.text)
		if out.incomplete() {
			truncated = event.TruncatedTokenLimit
			if out.overflow {
				truncated = event.TruncatedResponseChars
			}
		}
		var calls, refused []provider.ToolCall
		for _, tc := range out.calls {
			if _, ok := w.Tools.Find(tc.Name); ok {
				calls = append(calls, tc)
			} else {
				refused = append(refused, tc)
			}
		}
		if truncated == "" {
			if answer := presentedAnswer(refused); answer != "" {
				return answer, "", nil
			}
		}
		if len(out.calls) == 0 && out.dropped == nil || truncated != "" {
			return presentedText(out.text, all.String()), truncated, nil
		}
		if len(refused) > 0 {
			if refusedOnce {
				return s.stopPresentation(w, refused[0], presentedText(out.text, all.String()))
			}
			refusedOnce = true
			choice = presentChoice(w, pc.tools)
		}
		if round >= maxToolRounds {
			return "", "", fmt.Errorf("more than %d rounds of tool calls in the final presentation", maxToolRounds)
		}
		msgs = append(msgs, out.message())
		c := conversation{msgs: msgs}
		for _, tc := range refused {
			refusal := presentRefusal(tc.Name)
			s.publish(event.ToolRejected{Agent: w.ID, CallID: tc.ID, Tool: tc.Name, Error: refusal})
			c.msgs = append(c.msgs, provider.Message{Role: provider.RoleTool, ToolCallID: tc.ID, Content: refusal, IsError: true})
		}
		if d := out.dropped; d != nil {
			c.msgs = append(c.msgs, provider.Message{Role: provider.RoleTool, ToolCallID: d.ID,
				Content: "Error: " + prompt.TooManyCalls(s.o.Orchestrator.MaxToolCallsPerResponse), IsError: true})
		}
		s.runTools(ctx, i, &c, calls)
		msgs = c.msgs
	}
}

// presentChoice forbids tool calls in a presentation whose tools are all coordination tools
// (a continued conversation's new_answer, vote, submit_checklist): the presenter has nothing
// to call, and the list stays for the cache. Tools of the agent's own (files, MCP) keep the
// API's default, so that it can still use them.
func presentChoice(w Agent, tools []provider.ToolSpec) provider.ToolChoice {
	for _, t := range tools {
		if _, own := w.Tools.Find(t.Name); own {
			return provider.ToolChoiceAuto
		}
	}
	if len(tools) == 0 {
		return provider.ToolChoiceAuto
	}
	return provider.ToolChoiceNone
}

// presentRefusal is the result of a call the presentation refuses.
func presentRefusal(name string) string {
	if name == coord.ToolVote || name == coord.ToolNewAnswer {
		return prompt.PresentNoWorkflow
	}
	return fmt.Sprintf("Error: coordination is over and %s cannot be called now: write the final answer as plain text.", name)
}

// stopPresentation ends a presentation whose presenter called tc after one refusal: its text
// is the final answer when it wrote any, else the stored answer is used (the error says why).
// Another refusal would cost another call, with the same odds.
func (s *session) stopPresentation(w Agent, tc provider.ToolCall, text string) (string, string, error) {
	why := fmt.Sprintf("the presenter kept calling %s after being told not to", tc.Name)
	if strings.TrimSpace(text) == "" {
		s.publish(event.ToolRejected{Agent: w.ID, CallID: tc.ID, Tool: tc.Name, Error: why + "; the presentation ends here"})
		return "", "", errors.New(why)
	}
	s.publish(event.ToolRejected{Agent: w.ID, CallID: tc.ID, Tool: tc.Name, Error: why + "; the presentation ends with the text it wrote"})
	return text, "", nil
}

// presentedText is the text a presentation response gives: its own, else all the text the
// presentation wrote (a last response with calls only).
func presentedText(last, all string) string {
	if strings.TrimSpace(last) == "" {
		return all
	}
	return last
}

// presentedAnswer is the content of a new_answer call made during the final presentation, ""
// when there is none.
func presentedAnswer(calls []provider.ToolCall) string {
	for _, tc := range calls {
		if tc.Name != coord.ToolNewAnswer {
			continue
		}
		var args struct {
			Content string `json:"content"`
		}
		if json.Unmarshal([]byte(tc.Arguments), &args) == nil && strings.TrimSpace(args.Content) != "" {
			return args.Content
		}
	}
	return ""
}
