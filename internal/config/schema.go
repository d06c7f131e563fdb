package config

import (
	"slices"
	"sync"
	"time"
)

// The schema: every key a config may hold, where, of what type, and what this build does with
// it. One walker (walk.go) reads every section through it, so adding a key is one table line.
//
// How a MassGen key this build does not run is handled (the Status rule):
//
//   - Implemented: read into Config.
//   - Refused: any value is an error that names the key and says what to do instead.
//   - EmptyOnly: refused unless empty (null, [] or {}): a list of rules, files or tools that
//     would be dropped.
//   - OffOnly: accepted only while it asks for nothing this build lacks: false, 0, or the
//     values in Accept (`coordination_mode: voting`); any other value is refused by name.
//     Enum values of implemented keys outside Accept are refused the same way
//     (`voting_sensitivity: checklist_gated`).
//   - Ignored: accepted and type-checked, without effect, because ignoring it gives the run
//     MassGen would make (storage paths this build chooses itself, values MassGen copies in
//     at run time) or because it only tunes a feature that is off. When ignoring a value
//     changes what the user gets, the key warns (warn) or is refused instead.
//
// A key with Needs only tunes another feature (broadcast_timeout tunes broadcast): it is
// ignored while that feature is off, and refused along with it when it is on. Needs names a
// sibling key, or a full path such as "orchestrator.voting_sensitivity".
//
// Since is the MassGen release that added the key: "0.1.12" for keys MassGen v0.1.12 already
// had, "0.1.9x" for keys of the v0.1.9x reference whose first release is not recorded, and
// "port" for keys of this port that MassGen does not have.

// Type is what a key's value must be.
type Type string

const (
	TypeBool      Type = "bool"
	TypeInt       Type = "int"
	TypeNumber    Type = "number"
	TypeString    Type = "string"
	TypeEnum      Type = "enum"
	TypeSeconds   Type = "seconds"
	TypeDuration  Type = "duration" // "150ms", "2s" or a number of seconds
	TypeStrings   Type = "string list"
	TypeStringMap Type = "string map"
	TypeMapping   Type = "mapping"
	TypeList      Type = "list"
	// TypeSwitch is a mapping with an enabled key (memory: {enabled: true, ...}).
	TypeSwitch Type = "mapping with enabled"
	TypeAny    Type = "any"
)

// Status is what this build does with a key; see the rule above.
type Status string

const (
	Implemented Status = "implemented"
	Ignored     Status = "accepted, ignored"
	OffOnly     Status = "off-only"
	EmptyOnly   Status = "empty-only"
	Refused     Status = "refused"
)

// Key is one row of the schema.
type Key struct {
	Section string // "" (top level), "agents[]", "agents[].backend", "orchestrator", ...
	Name    string
	Type    Type
	Default string // as MassGen documents it ("" when there is none)
	Enum    []string
	// Accept lists the values this build runs, for enums and off-only keys; a valid value
	// outside it is refused by name. Nil accepts every value (off-only keys: the off value).
	Accept []string
	Status Status
	Since  string
	Doc    string
	// Why is said after "is not supported yet" (refusals) or in the warning (ignored keys).
	Why string
	// Instead is the suggestion of a refusal.
	Instead string
	// Needs is the feature a tuning key tunes (see the rule above).
	Needs string
	// Types limits a backend key to these backend types: MassGen sends it to any other
	// provider as a request parameter, which fails the call.
	Types []string
	// Param keys are provider request parameters, passed through in Backend.Params; a value of
	// the wrong type only warns, since providers differ.
	Param bool

	msg   string                              // replaces "`key` is not supported yet"
	warn  bool                                // Ignored: warn when set to something other than off
	hint  string                              // suggestion for a range error
	ex    string                              // an example value (YAML) for tests; "" derives one
	check func(w *walker, v *value) bool      // ranges and other checks; false drops the value
	set   func(w *walker, t *target, v value) // stores a checked value
	raw   func(w *walker, t *target, f field) // reads the field itself (nested sections, custom types)
	tool  bool                                // a tool key, accepted by scripted backends too
	zero  bool                                // TypeSeconds: 0 is allowed
}

// KeyInfo is a Key for other packages: the CLI prints it (--show-schema) and reports what a
// config may hold.
type KeyInfo struct {
	Section string   `json:"section"`
	Name    string   `json:"name"`
	Type    string   `json:"type"`
	Default string   `json:"default,omitempty"`
	Enum    []string `json:"enum,omitempty"`
	// Supported are the Enum values this build runs (empty: all of them).
	Supported []string `json:"supported,omitempty"`
	Status    string   `json:"status"`
	Since     string   `json:"since"`
	Doc       string   `json:"doc"`
	Needs     string   `json:"needs,omitempty"`
	Types     []string `json:"backend_types,omitempty"`
}

// Keys lists the schema in section order.
func Keys() []KeyInfo {
	out := make([]KeyInfo, 0, len(schema()))
	for _, k := range schema() {
		doc := k.Doc
		if k.Why != "" {
			doc += " (" + k.Why + ")"
		}
		out = append(out, KeyInfo{Section: k.Section, Name: k.Name, Type: string(k.Type), Default: k.Default,
			Enum: slices.Clone(k.Enum), Supported: slices.Clone(k.Accept), Status: string(k.Status),
			Since: k.Since, Doc: doc, Needs: k.Needs, Types: slices.Clone(k.Types)})
	}
	return out
}

// SchemaJSON is Keys as indented JSON.
func SchemaJSON() []byte {
	data, err := indentPlain(Keys())
	if err != nil { // cannot happen: strings only
		return []byte("[]")
	}
	return data
}

// value is a key's checked value, in the field its Type fills.
type value struct {
	f    field
	k    *Key
	b    bool
	n    int
	x    float64
	s    string
	d    time.Duration
	list []string
	m    map[string]string
	on   field // TypeSwitch: the enabled key, when written
}

// section is how one mapping of the config is read.
type section struct {
	path string
	keys map[string]*Key
	// names are the keys in table order, for suggestions.
	names []string
	// what names the section in "unknown X `key`" messages; warn makes unknown keys warnings
	// (MassGen ignores them there) rather than errors.
	what string
	warn bool
	// hints replace the suggestion for well-known wrong keys.
	hints map[string]string
	// unknown, when set, handles keys not in the schema instead.
	unknown func(w *walker, t *target, g field)
	// after runs once the section's keys are read: required keys and cross-key rules.
	after func(w *walker, t *target, f field, present map[string]field)
	// also is a section whose tool keys this one accepts too (scripted backends).
	also string
}

// schemaIndex is the schema read into sections.
type schemaIndex struct {
	keys     []*Key
	sections map[string]*section
}

var (
	indexOnce sync.Once
	theIndex  schemaIndex
)

// index is built on first use rather than at init: it is hundreds of rows, and commands that
// never read a config (--version, --help, replay) should not pay for it at every start. (A
// sync.OnceValue variable would be an initialization cycle: the walker the rows call reads
// the index.)
func index() schemaIndex {
	indexOnce.Do(func() { theIndex = buildIndex() })
	return theIndex
}

func buildIndex() schemaIndex {
	x := schemaIndex{sections: map[string]*section{}}
	for _, group := range [][]Key{rootKeys(), agentKeys(), uiKeys(), timeoutKeys(), orchestratorKeys(), protocolKeys(), weightKeys(), coordinationKeys(),
		personaKeys(), decomposerKeys(), dspyKeys(), orchestratorTimeoutKeys(), permissionKeys(), backendKeys(), mcpKeys(), customToolKeys(), contextPathKeys(), uploadKeys(), scriptedKeys(),
		faultKeys(), toolCallKeys(), criterionKeys(), memoryKeys()} {
		for i := range group {
			k := &group[i]
			s := x.sections[k.Section]
			if s == nil {
				s = &section{path: k.Section, keys: map[string]*Key{}}
				x.sections[k.Section] = s
			}
			s.keys[k.Name] = k
			s.names = append(s.names, k.Name)
			x.keys = append(x.keys, k)
		}
	}
	for path, s := range sectionRules() {
		base := x.sections[path]
		base.what, base.warn, base.hints, base.unknown, base.after, base.also = s.what, s.warn, s.hints, s.unknown, s.after, s.also
	}
	return x
}

// schema lists every key, in table (section) order.
func schema() []*Key { return index().keys }

// sections are the schema's sections by path.
func sections() map[string]*section { return index().sections }

// lookup finds the schema row of key in s, then among the tool keys of s.also.
func (s *section) lookup(key string) *Key {
	if k := s.keys[key]; k != nil {
		return k
	}
	if s.also != "" {
		if k := sections()[s.also].keys[key]; k != nil && k.tool {
			return k
		}
	}
	return nil
}
