package config

import (
	"fmt"
	"massgen/internal/lazy"
	"massgen/internal/suggest"
	"slices"
	"strings"
)

var (
	voteModes = []string{"longest", "first", "last", "self"}
	voteLabel = lazy.Regexp(`^agent[1-9][0-9]*$`)
)

func script(f func(s *Script, v value)) func(*walker, *target, value) {
	return func(_ *walker, t *target, v value) { f(t.script, v) }
}

// A type: scripted backend is this port's own offline agent: its keys are strict, and it
// takes the tool keys of network backends too.
func scriptedKeys() []Key {
	return []Key{
		{Section: secScripted, Name: "type", Type: TypeString, Status: Implemented, Since: "port", ex: "scripted",
			Doc: "scripted.", raw: func(*walker, *target, field) {}},
		{Section: secScripted, Name: "model", Type: TypeString, Default: "scripted", Status: Implemented, Since: "port",
			Doc: "A name for logs and events.", set: func(_ *walker, t *target, v value) {
				if v.s != "" {
					t.backend.Model = v.s
				}
			}},
		{Section: secScripted, Name: "answers", Type: TypeStrings, Status: Implemented, Since: "port", ex: "[hi]",
			Doc: "Submitted in order: the first on the first turn, each next one as an improvement.",
			raw: func(w *walker, t *target, f field) { t.script.Answers = w.answers(f) }},
		{Section: secScripted, Name: "improve_after", Type: TypeInt, Default: "0", Status: Implemented, Since: "port",
			Doc: "Improve once this many agents (itself included) have answers.", check: atLeast(0),
			hint: "use 0 to improve as soon as there is a next answer", set: script(func(s *Script, v value) { s.ImproveAfter = v.n })},
		{Section: secScripted, Name: "vote", Type: TypeString, Default: "longest", Status: Implemented, Since: "port", ex: "first",
			Doc: "longest, first, last, self, or a fixed label such as agent2.", raw: scriptedVote},
		{Section: secScripted, Name: "reason", Type: TypeString, Status: Implemented, Since: "port",
			Doc: "The vote reason.", set: script(func(s *Script, v value) { s.Reason = v.s })},
		{Section: secScripted, Name: "checklist_correct", Type: TypeString, Status: Implemented, Since: "port", ex: `"42"`,
			Doc: "checklist_gated: the result this agent checks answers against; answers containing it pass correctness, others score 2.",
			set: script(func(s *Script, v value) { s.ChecklistCorrect = v.s })},
		{Section: secScripted, Name: "final", Type: TypeString, Status: Implemented, Since: "port",
			Doc: "The presentation text (default: the latest answer); {{parts}} stands for every answer shown, in label order (a decomposition presenter integrating the parts).",
			set: script(func(s *Script, v value) { s.Final = v.s })},
		{Section: secScripted, Name: "stop_status", Type: TypeEnum, Enum: []string{"complete", "blocked"}, Default: "complete", Status: Implemented, Since: "port",
			Doc: "Decomposition mode: the status of the agent's stop once it has no next answer.", set: script(func(s *Script, v value) { s.StopStatus = v.s })},
		{Section: secScripted, Name: "stop_summary", Type: TypeString, Status: Implemented, Since: "port",
			Doc: "Decomposition mode: the summary of the agent's stop (a default is derived when empty).", set: script(func(s *Script, v value) { s.StopSummary = v.s })},
		{Section: secScripted, Name: "thinking", Type: TypeString, Status: Implemented, Since: "port",
			Doc: "Streamed as reasoning before each action.", set: script(func(s *Script, v value) { s.Thinking = v.s })},
		{Section: secScripted, Name: "planning", Type: TypeString, Status: Implemented, Since: "port",
			Doc: "The reply to planning mode's check.", set: script(func(s *Script, v value) { s.Planning = v.s })},
		{Section: secScripted, Name: "post_evaluation", Type: TypeStrings, Status: Implemented, Since: "port", ex: "[restart, submit]",
			Doc: "Orchestration restarts: its decision on each post-evaluation call, in order, the last repeated: submit (default), restart, ignore (text only) or bad_restart (no instructions).",
			raw: scriptedPostEvaluation},
		{Section: secScripted, Name: "verdicts", Type: TypeStrings, Status: Implemented, Since: "port", ex: "[fail, pass]",
			Doc: "Verifiers: its reply to each check it makes, in order, the last repeated: pass (default), fail, or garbage (not the verdict JSON); as a member of a verifier subagent, the first.",
			raw: scriptedVerdicts},
		{Section: secScripted, Name: "restart_reason", Type: TypeString, Status: Implemented, Since: "port",
			Doc: "The reason of its restart_orchestration calls (a default when empty).", set: script(func(s *Script, v value) { s.RestartReason = v.s })},
		{Section: secScripted, Name: "restart_instructions", Type: TypeString, Status: Implemented, Since: "port",
			Doc: "The instructions of its restart_orchestration calls (a default when empty).", set: script(func(s *Script, v value) { s.RestartInstructions = v.s })},
		{Section: secScripted, Name: "broadcast_reply", Type: TypeString, Status: Implemented, Since: "port",
			Doc: "The answer to other agents' ask_others questions (default: its latest answer).", set: script(func(s *Script, v value) { s.BroadcastReply = v.s })},
		{Section: secScripted, Name: "criteria_reply", Type: TypeString, Status: Implemented, Since: "port",
			Doc: "The answer it gives as a member of criteria_mode: bootstrap_subagent's critic (default: a JSON object proposing two criteria); " +
				"anything but such JSON tests the fallback.", set: script(func(s *Script, v value) { s.CriteriaReply = v.s })},
		{Section: secScripted, Name: "evaluation_reply", Type: TypeString, Status: Implemented, Since: "port",
			Doc: "The answer it gives as a member of the round evaluator's team (default: a short critique of each answer it reads).",
			set: script(func(s *Script, v value) { s.EvaluationReply = v.s })},
		{Section: secScripted, Name: "latency", Type: TypeDuration, Status: Implemented, Since: "port", ex: "10ms",
			Doc: "Wait before the first chunk of each call.", set: script(func(s *Script, v value) { s.Latency = v.d })},
		{Section: secScripted, Name: "chunk_delay", Type: TypeDuration, Status: Implemented, Since: "port", ex: "1ms",
			Doc: "Wait between streamed words.", set: script(func(s *Script, v value) { s.ChunkDelay = v.d })},
		{Section: secScripted, Name: "faults", Type: TypeList, Status: Implemented, Since: "port", ex: "[{kind: fail, call: 2}]",
			Doc: "Misbehaviour on chosen calls (see faults[]).", raw: func(w *walker, t *target, f field) {
				t.script.Faults = walkEach(w, f, t, secFault, "write {kind: fail, call: 2}",
					func(t *target, x *Fault) { t.fault = x }, func(x *Fault) bool { return x.Kind != "" })
			}},
		{Section: secScripted, Name: "tool_calls", Type: TypeList, Status: Implemented, Since: "port", ex: "[{name: t}]",
			Doc: "Tool calls made before the first answer (see tool_calls[]).",
			raw: func(w *walker, t *target, f field) {
				t.script.ToolCalls = walkEach(w, f, t, secToolCall, "",
					func(t *target, x *ScriptedToolCall) { t.call = x }, func(x *ScriptedToolCall) bool { return x.Name != "" })
			}},
	}
}

func faultKeys() []Key {
	return []Key{
		{Section: secFault, Name: "kind", Type: TypeString, Status: Implemented, Since: "port", ex: "fail",
			Doc: "no_tool, bad_vote, double_vote, vote_and_answer, bad_args, duplicate, fail, fatal, hang or truncated.",
			raw: func(w *walker, t *target, f field) {
				if k, ok := w.faultKind(f); ok {
					t.fault.Kind = k
				}
			}},
		{Section: secFault, Name: "call", Type: TypeInt, Default: "0", Status: Implemented, Since: "port",
			Doc: "The 1-based model call it applies to (0: every call).", check: atLeast(0),
			hint: "use 0 for every call, or the 1-based call number", set: func(_ *walker, t *target, v value) { t.fault.Call = v.n }},
	}
}

func toolCallKeys() []Key {
	return []Key{
		{Section: secToolCall, Name: "name", Type: TypeString, Status: Implemented, Since: "port", ex: "t",
			Doc: "The tool to call.", set: func(_ *walker, t *target, v value) { t.call.Name = v.s }},
		{Section: secToolCall, Name: "args", Type: TypeMapping, Status: Implemented, Since: "port", ex: "{a: 1}",
			Doc: "Its arguments; a string \"{{result}}\" stands for the previous result's text.", raw: toolCallArgs},
	}
}

func scriptedPostEvaluation(w *walker, t *target, g field) {
	if list, ok := scriptedChoices(w, g, PostEvaluationDecisions, "post_evaluation decision"); ok {
		t.script.PostEvaluation = list
	}
}

func scriptedVerdicts(w *walker, t *target, g field) {
	if list, ok := scriptedChoices(w, g, VerdictReplies, "verdict"); ok {
		t.script.Verdicts = list
	}
}

// scriptedChoices reads a list whose every entry must be one of allowed, reporting the first
// that is not (with a did-you-mean) as an invalid `what`.
func scriptedChoices(w *walker, g field, allowed []string, what string) ([]string, bool) {
	list, ok := w.strList(g)
	if !ok {
		return nil, false
	}
	for _, d := range list {
		if !slices.Contains(allowed, d) {
			sugg := "use " + strings.Join(allowed, ", ")
			if c := suggest.Closest(d, allowed); c != "" {
				sugg = fmt.Sprintf("did you mean `%s`? %s", c, sugg)
			}
			w.errf(g, sugg, "invalid %s `%s`", what, clip(d))
			return nil, false
		}
	}
	return list, true
}

func scriptedVote(w *walker, t *target, g field) {
	v, ok := w.str(g)
	switch {
	case !ok:
	case voteLabel().MatchString(v):
		t.script.Vote, t.agent.voteF = v, &g
	case slices.Contains(voteModes, v):
		t.script.Vote = v
	default:
		sugg := "use longest, first, last, self or an agent label such as agent2"
		if c := suggest.Closest(v, voteModes); c != "" {
			sugg = fmt.Sprintf("did you mean `%s`? %s", c, sugg)
		}
		w.errf(g, sugg, "invalid vote `%s`", clip(v))
	}
}

func scriptedUnknown(w *walker, _ *target, g field) {
	s := sections()[secScripted]
	sugg := s.suggest(g.key)
	if !strings.HasPrefix(sugg, "did you mean") {
		sugg = "a scripted backend takes only " + strings.Join(s.names, ", ")
	}
	w.errKey(g, sugg, "unknown scripted backend key `%s`", clip(g.key))
}

func scriptedAfter(w *walker, t *target, f field, present map[string]field) {
	if _, ok := present["answers"]; !ok {
		w.errAt(f.loc, "missing required key `answers`", "add answers: with at least one answer text", f.keyN, f.raw)
	}
	codeToolsAfter(w, t, present) // scripted agents use tools as the others do
}

func (w *walker) answers(f field) []string {
	if f.val == nil {
		w.errf(f, "add at least one answer text", "answers must be a non-empty list, not empty")
		return nil
	}
	items, ok := w.list(f)
	if !ok {
		return nil
	}
	if len(items) == 0 {
		w.errf(f, "add at least one answer text", "answers must not be empty")
		return nil
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		if it.val == nil {
			w.errf(it, "write the answer text, or remove the entry", "%s must be a string, not empty", it.key)
			continue
		}
		s, ok := w.str(it)
		if !ok {
			continue
		}
		if strings.TrimSpace(s) == "" {
			w.errf(it, "write the answer text, or remove the entry", "%s must not be empty", it.key)
			continue
		}
		out = append(out, s)
	}
	return out
}

func faultAfter(w *walker, _ *target, f field, present map[string]field) {
	if _, ok := present["kind"]; !ok {
		w.errAt(f.loc, "missing required key `kind`", "add kind: "+faultKindList(), f.raw)
	}
}

func (w *walker) faultKind(f field) (FaultKind, bool) {
	if f.val == nil {
		w.errf(f, "use "+faultKindList(), "kind must be a string, not empty")
		return "", false
	}
	s, ok := w.str(f)
	if !ok {
		return "", false
	}
	names := make([]string, len(FaultKinds))
	for i, k := range FaultKinds {
		if string(k) == s {
			return k, true
		}
		names[i] = string(k)
	}
	sugg := "use " + faultKindList()
	if c := suggest.Closest(s, names); c != "" {
		sugg = fmt.Sprintf("did you mean `%s`? %s", c, sugg)
	}
	w.errf(f, sugg, "unknown fault kind `%s`", clip(s))
	return "", false
}

func faultKindList() string {
	names := make([]string, len(FaultKinds))
	for i, k := range FaultKinds {
		names[i] = string(k)
	}
	return oneOf(names)
}

func toolCallAfter(w *walker, _ *target, f field, present map[string]field) {
	if _, ok := present["name"]; !ok {
		w.errAt(f.loc, "missing required key `name`", "add name: with the tool to call", f.raw)
	}
}

func toolCallArgs(w *walker, t *target, g field) {
	if m, ok := w.decode(g, g.raw, 0).(map[string]any); ok {
		t.call.Args = m
	} else if g.val != nil {
		w.errf(g, "write args: {key: value}", "args must be a mapping")
	}
}
