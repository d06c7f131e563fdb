package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"massgen/internal/suggest"
)

// target is what a walk fills in: each section's keys write into the parts it owns. Nested
// sections walk a copy with their own part set.
type target struct {
	cfg     *Config
	agent   *agentDef
	single  bool // the agent is the single `agent:` form
	backend *Backend
	bt      BackendType
	known   bool // bt is one of BackendTypes
	script  *Script
	mcp     *MCPServer
	ct      *customToolEntry
	cp      *ContextPath
	up      *Upload
	fault   *Fault
	call    *ScriptedToolCall
	perm    *Permissions
	crit    *ChecklistCriterion
	mem     *Memory
	// Root-level fields the checks after the whole file need.
	agentF, agentsF *field
	presenterF      *field
	modeF           *field // coordination_mode, checked against the settings it excludes
	lazyF           *field // lazy_start_agents, checked against the team's size
	// weightsByID and weightsF are agent_weights and vote_weights_file, checked against the
	// agents (keys_voting.go).
	weightsByID, weightsF *field
	graceF                *field
	restartsF             *field // coordination.max_orchestration_restarts, which wins over orchestrator's
	criteriaModeF         *field // criteria_mode and the round evaluator's keys, checked against
	evaluatorF            *field // the voting and subagent settings they need (bootstrap.go)
	final                 *finalSetting
}

// tuned is a present key that tunes another feature, checked once the whole file is read.
type tuned struct {
	k *Key
	f field
}

// walk reads mapping f as section sec.
func (w *walker) walk(sec string, f field, t *target) map[string]field {
	fields, _ := w.mapping(f, 1)
	return w.walkFields(sec, f, fields, t)
}

// walkFields reads the entries of f (already listed) against the schema of section sec: each
// key is handled by its row, keys not in the schema by the section's unknown rule. It returns
// the entries present, by key, as the section's after rule saw them.
func (w *walker) walkFields(sec string, f field, fields []field, t *target) map[string]field {
	s := sections()[sec]
	present := make(map[string]field, len(fields))
	for _, e := range fields {
		g := child(f.loc, e)
		present[g.key] = g
		if k := s.lookup(g.key); k != nil {
			w.key(k, g, t)
			continue
		}
		if s.unknown != nil {
			s.unknown(w, t, g)
			continue
		}
		w.unknownKey(s, g)
	}
	if s.after != nil {
		s.after(w, t, f, present)
	}
	return present
}

// walkEach reads every element of list f as a mapping of section sec, each into a new T that
// bind puts into the target, and returns the elements keep accepts. nilHint, when set, makes
// an empty element an error with that suggestion.
func walkEach[T any](w *walker, f field, t *target, sec, nilHint string, bind func(*target, *T), keep func(*T) bool) []T {
	items, _ := w.list(f)
	var out []T
	for _, it := range items {
		if kind(it.val) != "a mapping" {
			if it.val == nil && nilHint != "" {
				w.errf(it, nilHint, "%s must be a mapping, not empty", it.key)
			} else {
				w.mapping(it, 1)
			}
			continue
		}
		var x T
		sub := *t
		bind(&sub, &x)
		w.walk(sec, it, &sub)
		if keep(&x) {
			out = append(out, x)
		}
	}
	return out
}

// key applies one schema row to the field g.
func (w *walker) key(k *Key, g field, t *target) {
	if k.raw != nil {
		k.raw(w, t, g)
		return
	}
	if k.Param {
		w.param(k, g, t)
		return
	}
	if g.val == nil {
		return // null leaves the default
	}
	switch {
	case k.Status == Refused:
		w.refuse(k, g, nil)
		return
	case k.Status == EmptyOnly:
		if !empty(g.val) {
			w.refuse(k, g, nil)
		}
		return
	}
	v, ok := w.typed(k, g)
	if !ok || (k.check != nil && !k.check(w, &v)) {
		return
	}
	if len(k.Types) > 0 && t.known && !slices.Contains(k.Types, t.bt.Name) && !v.off() {
		sugg := "remove it; MassGen would send it to this provider as a request parameter, which rejects it"
		if t.bt.Protocol == ProtocolCLI {
			sugg = fmt.Sprintf("remove it; the %s CLI has no such setting", t.bt.Name)
		}
		w.errKey(g, sugg, "`%s` is not supported on backend type `%s`: it is a setting of %s", k.Name, t.bt.Name, quoteList(k.Types))
		return
	}
	if !v.accepted() {
		w.refuse(k, g, &v)
		return
	}
	if k.Needs != "" {
		w.tuning = append(w.tuning, tuned{k, g})
	}
	switch k.Status {
	case Ignored:
		if k.warn && !v.off() {
			msg := k.msg
			if msg == "" {
				msg = fmt.Sprintf("`%s` is ignored", k.Name)
				if k.Why != "" {
					msg += ": " + k.Why
				}
			}
			w.warnAt(g.loc, msg, k.Instead, g.keyN)
		}
	case Implemented:
		if k.set != nil {
			k.set(w, t, v)
		}
	}
}

// typed reads g as k's Type, reporting a value of the wrong type.
func (w *walker) typed(k *Key, g field) (value, bool) {
	v := value{f: g, k: k}
	ok := true
	switch k.Type {
	case TypeBool:
		v.b, ok = w.boolean(g)
	case TypeInt:
		v.n, ok = w.integer(g)
	case TypeNumber:
		v.x, ok = w.number(g)
	case TypeString:
		v.s, ok = w.str(g)
	case TypeEnum:
		v.s, ok = w.enum(g, k.Enum, k.Accept)
	case TypeSeconds:
		v.d, ok = w.seconds(g, k.zero)
	case TypeDuration:
		v.d, ok = w.duration(g)
	case TypeStrings:
		v.list, ok = w.strList(g)
	case TypeStringMap:
		v.m = w.strMap(g)
		ok = v.m != nil
	case TypeMapping, TypeList:
		want := "a mapping"
		if k.Type == TypeList {
			want = "a list"
		}
		if kind(g.val) != want {
			w.errf(g, "", "%s must be %s, not %s", g.key, want, kind(g.val))
			ok = false
		}
	case TypeSwitch:
		fields, isMap := w.mapping(g, 1)
		ok = isMap
		v.b = k.Default == "on"
		for _, e := range fields {
			if e.key == "enabled" {
				v.on = child(g.loc, e)
				v.b, ok = w.boolean(v.on)
			}
		}
	}
	return v, ok
}

// accepted reports whether v is a value this build runs: in Accept when it is set, the off
// value for off-only keys without one, anything otherwise.
func (v value) accepted() bool {
	switch {
	case v.k.Accept != nil:
		return slices.Contains(v.k.Accept, v.text())
	case v.k.Status == OffOnly:
		return v.off()
	}
	return true
}

// off reports whether v asks for nothing: false, 0, empty, or a switch turned off.
func (v value) off() bool {
	switch v.k.Type {
	case TypeBool, TypeSwitch:
		return !v.b
	case TypeInt:
		return v.n == 0
	case TypeNumber:
		return v.x == 0
	case TypeString, TypeEnum:
		return v.s == ""
	case TypeSeconds, TypeDuration:
		return v.d == 0
	case TypeStrings:
		return len(v.list) == 0
	case TypeStringMap:
		return len(v.m) == 0
	}
	return empty(v.f.val)
}

// text is v as a refusal quotes it ("" for values that are not one word).
func (v value) text() string {
	switch v.k.Type {
	case TypeBool:
		return strconv.FormatBool(v.b)
	case TypeInt:
		return strconv.Itoa(v.n)
	case TypeNumber:
		return strconv.FormatFloat(v.x, 'g', -1, 64)
	case TypeString, TypeEnum, TypeAny:
		return clip(v.s)
	}
	return ""
}

// refuse reports k, set at g, as not supported, naming it (and its value, when v has one
// word) and saying what to do instead.
func (w *walker) refuse(k *Key, g field, v *value) {
	at, what := g, "`"+k.Name+"`"
	if v != nil {
		if v.on.keyN != nil {
			at = v.on
		}
		if s := v.text(); s != "" {
			what = fmt.Sprintf("`%s: %s`", k.Name, s)
		}
	}
	msg := what + " is not supported yet"
	if k.msg != "" {
		msg = k.msg
	}
	if k.Why != "" {
		msg += ": " + k.Why
	}
	sugg := k.Instead
	if sugg == "" {
		switch {
		case k.Type == TypeSwitch:
			sugg = fmt.Sprintf("remove the `%s` block or set `enabled: false`", k.Name)
		case k.Accept != nil:
			sugg = "use " + oneOf(quoteAll(k.Accept))
		case k.Type == TypeBool:
			sugg = "remove it or set it to `false`"
		case k.Type == TypeInt || k.Type == TypeNumber:
			sugg = "remove it or set it to `0`"
		default:
			sugg = "remove it; this build cannot do it yet"
		}
	}
	w.errAt(at.loc, msg, sugg, at.keyN, at.raw)
	w.refused[g.loc] = true
}

// checkTuning refuses keys that tune a feature which was refused.
func (w *walker) checkTuning() {
	for _, tu := range w.tuning {
		path := tu.k.Needs
		if !strings.Contains(path, ".") {
			path = joinLoc(parentLoc(tu.f.loc), path)
		}
		if w.refused[path] {
			w.errAt(tu.f.loc, fmt.Sprintf("`%s` is not supported yet: it tunes `%s`, set here to what is not supported yet",
				tu.k.Name, tu.k.Needs), fmt.Sprintf("remove it along with that setting of `%s`", tu.k.Needs), tu.f.keyN)
		}
	}
}

func parentLoc(loc string) string {
	if i := strings.LastIndexByte(loc, '.'); i >= 0 {
		return loc[:i]
	}
	return ""
}

// unknownKey reports a key that is not in section s's schema.
func (w *walker) unknownKey(s *section, g field) {
	sugg := s.hints[g.key]
	if sugg == "" {
		sugg = s.suggest(g.key)
	}
	if s.warn {
		w.warnAt(g.loc, fmt.Sprintf("unknown %s `%s` is ignored", s.what, clip(g.key)), sugg, g.keyN)
		return
	}
	w.errKey(g, sugg, "unknown %s `%s`", s.what, clip(g.key))
}

// suggest is the suggestion for an unknown key: the closest key of the section, or the keys
// this build runs there when they are few.
func (s *section) suggest(key string) string {
	names := s.names
	if s.also != "" {
		for _, n := range sections()[s.also].names {
			if sections()[s.also].keys[n].tool {
				names = append(slices.Clone(names), n)
			}
		}
	}
	if c := suggest.Closest(key, names); c != "" {
		return fmt.Sprintf("did you mean `%s`?", c)
	}
	var runs []string
	for _, n := range s.names {
		if s.keys[n].Status == Implemented {
			runs = append(runs, n)
		}
	}
	switch {
	case len(runs) > 12:
		return fmt.Sprintf("docs/config-keys.md lists the keys of `%s`", sectionTitle(s.path))
	case len(runs) < len(s.names):
		return "keys this build runs: " + strings.Join(runs, ", ")
	}
	return "valid keys: " + strings.Join(runs, ", ")
}

// atLeast is a check that an int or number key is at least n.
func atLeast(n int) func(w *walker, v *value) bool {
	return func(w *walker, v *value) bool {
		x := float64(v.n)
		if v.k.Type == TypeNumber {
			x = v.x
		}
		if x >= float64(n) {
			return true
		}
		sugg := v.k.hint
		if sugg == "" {
			sugg = fmt.Sprintf("use %d or more", n)
			if v.k.Default != "" {
				sugg += fmt.Sprintf(" (default %s)", v.k.Default)
			}
		}
		if n == 0 {
			w.errf(v.f, sugg, "%s must not be negative", v.f.key)
		} else {
			w.errf(v.f, sugg, "%s must be at least %d", v.f.key, n)
		}
		return false
	}
}

// param passes a provider request parameter through into Backend.Params, warning when a
// parameter this package knows has a value of the wrong type.
func (w *walker) param(k *Key, g field, t *target) {
	if k.Type == TypeNumber || k.Type == TypeInt {
		switch n := g.val.(type) {
		case nil, *ast.IntegerNode:
		case *ast.FloatNode:
			if k.Type == TypeInt {
				w.warnAt(g.loc, fmt.Sprintf("`%s` should be a whole number, not %v", k.Name, n.Value),
					"the provider will likely reject it", g.raw, g.keyN)
			}
		default:
			w.warnAt(g.loc, fmt.Sprintf("`%s` should be a number, not %s", k.Name, kind(g.val)),
				"the provider will likely reject it; write the number without quotes", g.raw, g.keyN)
		}
	}
	w.setParam(t, g)
}

// setParam puts a request parameter into Backend.Params. A coding-agent CLI makes its own
// requests: the parameter is dropped with a warning (MassGen's own CLI examples carry
// temperature and timeout, so refusing them would refuse those configs).
func (w *walker) setParam(t *target, g field) {
	if t.known && t.bt.Protocol == ProtocolCLI {
		w.warnAt(g.loc, fmt.Sprintf("`%s` has no effect on backend type `%s`: the CLI makes its own model requests, and massgen passes it no request parameters", clip(g.key), t.bt.Name),
			"remove it; set the model's options in the CLI's own settings", g.keyN)
		return
	}
	if t.backend.Params == nil {
		t.backend.Params = map[string]any{}
	}
	t.backend.Params[g.key] = w.decode(g, g.raw, 0)
}

func quoteAll(values []string) []string {
	out := make([]string, len(values))
	for i, s := range values {
		out[i] = "`" + s + "`"
	}
	return out
}

func quoteList(values []string) string { return oneOf(quoteAll(values)) }
