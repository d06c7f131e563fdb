package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"massgen/internal/config"
	"massgen/internal/coord"
	"massgen/internal/event"
	"massgen/internal/prompt"
	"massgen/internal/provider"
	"massgen/internal/usage"
)

// Verifiers (orchestrator.verifiers): once coordination has ended, before the winner is
// recorded, the answers are checked in tally order (coord.Result.Candidates): each verifier in
// turn judges one aspect of the answer, correctness first, and the first answer every
// verifier passes wins. A fail, or a check that could not verify (an error, a reply that is
// not the verdict JSON), passes the win to the next answer. When none passes, or the checks
// stop (max_cost_usd spent, an interrupt), the plain tally's winner stands and the verdicts
// say why. At most coord.MaxVerifiedAnswers answers are checked, so a session makes at most
// that many checks per verifier.

// KindVerifier is the SubagentCall kind of a verifier subagent.
const KindVerifier = "verifier"

// maxVerdictChars caps what a verifier's reply may stream: a verdict is a line of JSON.
const maxVerdictChars = 4000

// verdictKey is one check: verifier k (1-based) on an answer.
type verdictKey struct {
	verifier int
	answer   string // the answer's label
}

// verifyWinner checks the candidates and returns the agent whose answer passed every
// verifier, or -1 when the plain tally decides (no verifiers, none passed, the checks
// stopped).
func (s *session) verifyWinner(ctx context.Context) int {
	vs := s.o.Orchestrator.Verifiers
	s.mu.Lock()
	if len(vs) == 0 || s.decomposing() || s.reason == event.EndSkipped {
		s.mu.Unlock()
		return -1
	}
	cands := s.m.Winner().Candidates()
	answers := make([]coord.Answer, len(cands))
	for k, c := range cands {
		answers[k], _ = s.m.Current(c)
	}
	s.mu.Unlock()
	for k, c := range cands {
		passed := true
		for j, v := range vs {
			ev, ok := s.verdict(ctx, j+1, v, c, answers[k])
			if !ok {
				return -1 // the checks stopped: the plain tally decides
			}
			if ev.Verdict != event.VerdictPass {
				passed = false
				break // correctness first: a failed answer is not checked for the rest
			}
		}
		if passed {
			return c
		}
	}
	return -1
}

// verdict is verifier k's judgement of agent c's answer: the one the log already holds, else
// a new check, published. It reports false when no check can be made (max_cost_usd is spent,
// the session is interrupted).
func (s *session) verdict(ctx context.Context, k int, v config.Verifier, c int, ans coord.Answer) (event.AnswerVerified, bool) {
	key := verdictKey{k, ans.Label}
	s.mu.Lock()
	done, ok := s.verdicts[key]
	spent := s.overBudget
	s.mu.Unlock()
	if ok {
		return done, true // restored from the log: not paid for twice
	}
	if spent || ctx.Err() != nil {
		return event.AnswerVerified{}, false
	}
	ev := event.AnswerVerified{Verifier: k, Aspect: v.Aspect, Candidate: s.agents[c].ID, AnswerLabel: ans.Label}
	user := prompt.VerifierUser(s.o.Question, s.o.History, ans.Content, v.Aspect, v.Instructions)
	var reply string
	var err error
	if v.Subagent {
		ev.Agent = s.agents[0].ID
		reply, ev.SubagentID, err = s.verifySubagent(ctx, k, ans.Label, user)
	} else {
		i := max(s.index(v.Agent), 0) // "" (or an id config refused): the first agent
		ev.Agent = s.agents[i].ID
		s.mu.Lock()
		dead := s.m.Dead(i)
		s.mu.Unlock()
		if dead {
			// Its provider failed it out of the session: asking again would pay for a call
			// that most likely fails too.
			err = fmt.Errorf("verifier agent %s dropped out of the session; no call was made", ev.Agent)
		} else if s.remote.verify != nil {
			reply, err = s.remote.verify(ctx, i, user) // on Temporal the providers are on the workers
		} else {
			reply, err = s.verifyCall(ctx, i, user)
		}
	}
	if ctx.Err() != nil {
		return event.AnswerVerified{}, false // cut by the interrupt: no verdict to keep
	}
	j := coord.ReadVerdict(reply)
	switch {
	case err != nil:
		ev.Verdict, ev.Reason = event.VerdictUnverified, "the check failed: "+clipText(err.Error())
	case !j.Readable:
		ev.Verdict, ev.Reason = event.VerdictUnverified, j.Reason
	case j.Pass:
		ev.Verdict, ev.Reason = event.VerdictPass, j.Reason
	default:
		ev.Verdict, ev.Reason = event.VerdictFail, j.Reason
	}
	s.mu.Lock()
	s.verdicts[key] = ev
	s.publish(ev)
	s.mu.Unlock()
	return ev, true
}

// verifyCall is one model call of agent i's provider in a fresh conversation, without tools:
// bounded by agent_timeout_seconds and maxVerdictChars, its usage counted in the cost.
func (s *session) verifyCall(ctx context.Context, i int, user string) (string, error) {
	a := s.agents[i]
	msgs := []provider.Message{{Role: provider.RoleUser, Content: user}}
	req := provider.Request{Model: a.Model, System: prompt.VerifierSystem, Stage: provider.StageVerify, Params: a.Params,
		Messages: msgs, MaxResponseBytes: 4 * maxVerdictChars}
	s.publish(event.ModelCalled{Agent: a.ID, Stage: provider.StageVerify, Attempt: 1, Fresh: true, System: req.System, Messages: msgs})
	cctx, cancel := context.WithTimeout(ctx, s.o.Timeouts.Agent)
	defer cancel()
	var text strings.Builder
	var u provider.Usage
	var streamErr error
	received, ended := 0, false
read:
	for chunk, err := range a.Provider.Stream(cctx, req) {
		if err != nil {
			streamErr = err
			break
		}
		received += chunkBytes(chunk)
		switch c := chunk.(type) {
		case provider.TextDelta:
			text.WriteString(c.Text)
			if utf8.RuneCountInString(text.String()) > maxVerdictChars {
				streamErr = fmt.Errorf("the reply went over %d characters", maxVerdictChars)
				break read
			}
		case provider.UsageChunk:
			u = u.Add(c.Usage)
		case provider.Done:
			ended = true
		}
	}
	if !ended {
		u = usage.Estimate(u, req, received) // billed all the same
	}
	s.account(i, u, false)
	switch {
	case streamErr != nil && errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		return "", fmt.Errorf("%w after %s", errCallTimeout, s.o.Timeouts.Agent)
	case streamErr != nil:
		return "", streamErr
	}
	return text.String(), nil
}

// verifySubagent runs verifier k as a subagent on the answer labelled label; the first agent
// pays for it.
func (s *session) verifySubagent(ctx context.Context, k int, label, question string) (reply, id string, err error) {
	if s.o.Subagent == nil {
		return "", "", errors.New("no verifier subagent can run in this session")
	}
	rep := s.o.Subagent(ctx, SubagentCall{Agent: s.agents[0].ID, Kind: KindVerifier,
		ID: fmt.Sprintf("verifier_%d_%s", k, strings.ReplaceAll(label, ".", "_")), Question: question})
	s.mu.Lock()
	s.accountSpentLocked(0, rep.Spent)
	s.mu.Unlock()
	if rep.Error != "" {
		return "", rep.ID, errors.New(rep.Error)
	}
	return rep.Answer, rep.ID, nil
}

// restoreVerdicts puts back the verdicts of a resumed log's current attempt, so that a check
// already made is not paid for twice.
func (s *session) restoreVerdicts(evs []event.Event) {
	for _, e := range evs {
		switch p := e.Payload.(type) {
		case event.OrchestrationRestarted:
			clear(s.verdicts) // the answers of a new attempt are new answers
		case event.AnswerVerified:
			s.verdicts[verdictKey{p.Verifier, p.AnswerLabel}] = p
		}
	}
}
