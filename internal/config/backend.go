package config

import (
	"fmt"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"massgen/internal/suggest"
)

// typeHint is the suggestion for a missing or unknown type.
func typeHint() string {
	return "add type: scripted, openai, claude, ..."
}

// backend reads an agent's backend block: a scripted one strictly into Backend.Script, any
// other against the backend keys.
func backend(w *walker, t *target, f field) {
	if _, ok := f.val.(*ast.MappingNode); !ok {
		what := "empty"
		if f.val != nil {
			what = kind(f.val)
		}
		w.errf(f, typeHint(), "backend must be a mapping, not %s", what)
		return
	}
	fields, _ := w.mapping(f, 1)
	b := &t.agent.agent.Backend
	sub := *t
	sub.backend = b
	sub.bt, sub.known = w.backendType(f, fields)
	b.Type = sub.bt.Name
	if sub.known && sub.bt.Protocol == ProtocolScripted {
		b.Script, b.Model = &Script{Vote: "longest"}, "scripted"
		sub.script = b.Script
		w.walkFields(secScripted, f, fields, &sub)
		return
	}
	w.walkFields(secBackend, f, fields, &sub)
}

// backendType finds and checks backend.type; a missing type is inferred from a model name
// with a clear prefix, as MassGen does. known is false when the type is missing or unknown.
func (w *walker) backendType(f field, fields []field) (BackendType, bool) {
	var tf, mf *field
	for _, e := range fields {
		g := child(f.loc, e)
		switch e.key {
		case "type":
			tf = &g
		case "model":
			mf = &g
		}
	}
	if tf == nil {
		if mf != nil {
			if m, ok := mf.val.(*ast.StringNode); ok {
				if name := InferType(m.Value); name != "" {
					return BackendTypes[name], true
				}
			}
		}
		w.errAt(f.loc, "missing required key `type`", typeHint(), f.keyN, f.raw)
		return BackendType{}, false
	}
	if tf.val == nil {
		w.errf(*tf, typeHint(), "type must be a string, not empty")
		return BackendType{}, false
	}
	name, ok := w.str(*tf)
	if !ok {
		return BackendType{}, false
	}
	bt, ok := BackendTypes[name]
	if !ok && name == "simulated" {
		// massgen eval's test backend: its agents come from a population file, not a config.
		w.errf(*tf, "simulated agents run only under massgen eval --simulate POPULATION.yaml (examples/eval/sim_*.yaml)",
			"backend type `simulated` is a test backend, not for configs")
		return BackendType{Name: name}, false
	}
	if !ok {
		runs := BackendTypeNames()
		sugg := "valid types: " + strings.Join(runs, ", ")
		if c := suggest.Closest(name, allBackendTypeNames()); c != "" {
			sugg = fmt.Sprintf("did you mean `%s`? %s", c, sugg)
			if strings.EqualFold(c, name) {
				sugg = fmt.Sprintf("did you mean `%s`? types are case-sensitive; valid types: %s", c, strings.Join(runs, ", "))
			}
		}
		w.errf(*tf, sugg, "unknown backend type `%s`", clip(name))
		return BackendType{Name: name}, false
	}
	switch {
	case bt.Refused:
		w.errf(*tf, bt.Instead, "backend type `%s` is not supported yet", name)
	case !bt.Implemented:
		w.errf(*tf, "use type: scripted for offline agents", "backend type `%s` is not supported yet in this build", name)
	}
	return bt, true
}
