package config

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
)

var (
	scriptedKeys = []string{"type", "model", "answers", "improve_after", "vote", "reason", "final", "thinking", "planning",
		"latency", "chunk_delay", "faults", "tool_calls"}
	voteModes  = []string{"longest", "first", "last", "self"}
	voteLabel  = regexp.MustCompile(`^agent[1-9][0-9]*$`)
	faultKeys  = []string{"kind", "call"}
	maxSeconds = float64(math.MaxInt64) / float64(time.Second)
)

// scripted reads a type: scripted backend strictly into b.Script. It returns the vote field
// when the vote names a fixed label.
func (w *walker) scripted(f field, fields []field, b *Backend) *field {
	s := &Script{Vote: "longest"}
	b.Script = s
	b.Model = "scripted"
	var voteF *field
	haveAnswers := false
	for _, e := range fields {
		g := child(f.loc, e)
		switch g.key {
		case "type":
		case "model":
			if m, ok := w.str(g); ok && m != "" {
				b.Model = m
			}
		case "answers":
			haveAnswers = true
			s.Answers = w.answers(g)
		case "improve_after":
			if n, ok := w.integer(g); ok {
				if n < 0 {
					w.errf(g, "use 0 to improve as soon as there is a next answer", "improve_after must not be negative")
				} else {
					s.ImproveAfter = n
				}
			}
		case "vote":
			if v, ok := w.str(g); ok {
				if voteLabel.MatchString(v) {
					s.Vote, voteF = v, &g
				} else if slices.Contains(voteModes, v) {
					s.Vote = v
				} else {
					sugg := "use longest, first, last, self or an agent label such as agent2"
					if c := closest(v, voteModes); c != "" {
						sugg = fmt.Sprintf("did you mean `%s`? %s", c, sugg)
					}
					w.errf(g, sugg, "invalid vote %q", clip(v))
				}
			}
		case "reason":
			s.Reason, _ = w.str(g)
		case "final":
			s.Final, _ = w.str(g)
		case "thinking":
			s.Thinking, _ = w.str(g)
		case "planning":
			s.Planning, _ = w.str(g)
		case "latency":
			s.Latency, _ = w.duration(g)
		case "chunk_delay":
			s.ChunkDelay, _ = w.duration(g)
		case "faults":
			s.Faults = w.faults(g)
		case "tool_calls":
			s.ToolCalls = w.scriptedToolCalls(g)
		default:
			if w.toolKey(g, &b.Tools) {
				continue
			}
			sugg := didYouMean(g.key, scriptedKeys)
			if closest(g.key, scriptedKeys) == "" {
				sugg = "a scripted backend takes only " + strings.Join(scriptedKeys, ", ")
			}
			w.errKey(g, sugg, "unknown scripted backend key `%s`", clip(g.key))
		}
	}
	if !haveAnswers {
		w.errAt(f.loc, `missing required key "answers"`, "add answers: with at least one answer text", f.keyN, f.raw)
	}
	return voteF
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

// duration reads a Go duration string ("150ms") or a non-negative number of seconds.
func (w *walker) duration(f field) (time.Duration, bool) {
	const sugg = `write a duration such as "150ms" or "2s", or a number of seconds`
	var d time.Duration
	switch v := f.val.(type) {
	case nil:
		return 0, false
	case *ast.StringNode:
		var err error
		d, err = time.ParseDuration(strings.TrimSpace(v.Value))
		if err != nil {
			w.errf(f, sugg, "%s %q is not a duration", f.key, clip(v.Value))
			return 0, false
		}
	case *ast.IntegerNode, *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		x, ok := w.number(f)
		if !ok {
			return 0, false
		}
		if x > maxSeconds {
			w.errf(f, sugg, "%s is too large", f.key)
			return 0, false
		}
		d = time.Duration(x * float64(time.Second))
	default:
		w.errf(f, sugg, "%s must be a duration, not %s", f.key, kind(f.val))
		return 0, false
	}
	if d < 0 {
		w.errf(f, sugg, "%s must not be negative", f.key)
		return 0, false
	}
	return d, true
}

func (w *walker) faults(f field) []Fault {
	items, _ := w.list(f)
	var out []Fault
	for _, it := range items {
		fields, ok := w.mapping(it, 1)
		if !ok {
			if it.val == nil {
				w.errf(it, "write {kind: fail, call: 2}", "%s must be a mapping, not empty", it.key)
			}
			continue
		}
		var flt Fault
		haveKind := false
		for _, e := range fields {
			g := child(it.loc, e)
			switch g.key {
			case "kind":
				haveKind = true
				flt.Kind, ok = w.faultKind(g)
				if !ok {
					haveKind = false
				}
			case "call":
				if n, ok := w.integer(g); ok {
					if n < 0 {
						w.errf(g, "use 0 for every call, or the 1-based call number", "call must not be negative")
					} else {
						flt.Call = n
					}
				}
			default:
				w.errKey(g, didYouMean(g.key, faultKeys), "unknown fault key `%s`", clip(g.key))
			}
		}
		if !hasKey(fields, "kind") {
			w.errAt(it.loc, `missing required key "kind"`, "add kind: "+faultKindList(), it.raw)
		}
		if haveKind {
			out = append(out, flt)
		}
	}
	return out
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
	if c := closest(s, names); c != "" {
		sugg = fmt.Sprintf("did you mean `%s`? %s", c, sugg)
	}
	w.errf(f, sugg, "unknown fault kind %q", clip(s))
	return "", false
}

func faultKindList() string {
	names := make([]string, len(FaultKinds))
	for i, k := range FaultKinds {
		names[i] = string(k)
	}
	return oneOf(names)
}

func (w *walker) scriptedToolCalls(f field) []ScriptedToolCall {
	items, _ := w.list(f)
	var out []ScriptedToolCall
	for _, it := range items {
		fields, ok := w.mapping(it, 2)
		if !ok {
			continue
		}
		var c ScriptedToolCall
		for _, e := range fields {
			g := child(it.loc, e)
			switch g.key {
			case "name":
				c.Name, _ = w.str(g)
			case "args":
				if m, ok := w.decode(g, g.raw, 0).(map[string]any); ok {
					c.Args = m
				} else if g.val != nil {
					w.errf(g, "write args: {key: value}", "args must be a mapping")
				}
			default:
				w.errKey(g, didYouMean(g.key, []string{"name", "args"}), "unknown tool call key `%s`", clip(g.key))
			}
		}
		if c.Name == "" {
			w.errAt(it.loc, `missing required key "name"`, "add name: with the tool to call", it.raw)
			continue
		}
		out = append(out, c)
	}
	return out
}
