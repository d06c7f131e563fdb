package config

import (
	"fmt"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// maxExpansion bounds how many nodes alias and merge-key expansion may visit, so a
// "billion laughs" file is an error instead of an out-of-memory crash.
const maxExpansion = 100_000

// maxDepth bounds the nesting the walker follows.
const maxDepth = 200

// maxFlowDepth bounds [ and { nesting before parsing: go-yaml's parser slows down
// quadratically on deeper input.
const maxFlowDepth = 1000

// walker turns a YAML AST into a Config, recording every problem with its position.
type walker struct {
	file    string
	rep     Report
	aliases map[*ast.AliasNode]ast.Node // alias -> the anchored value it stands for
	budget  int
	blown   bool // the expansion budget ran out (reported once)
	deep    bool // nesting beyond maxDepth was reported
	// refused holds the locations of the keys refused so far, and tuning the keys that tune
	// another feature, checked against it once the file is read.
	refused map[string]bool
	tuning  []tuned
	// uploadAt holds each backend's upload_files entries with their places, checked once
	// the backend (its type and context paths) is read.
	uploadAt map[*Backend][]uploadEntry
	// received marks a config sent by another machine (ParseReceived).
	received bool
}

// field is one key of a mapping: its name, where it is, and its value.
type field struct {
	key  string
	keyN ast.Node // key node, for positions
	raw  ast.Node // value as written (may be an alias, anchor or tag)
	val  ast.Node // value after resolve; nil for a missing value
	loc  string   // full location such as agents[0].backend.type
}

// isNil reports whether n is nil or a typed nil pointer.
func isNil(n ast.Node) bool {
	if n == nil {
		return true
	}
	v := reflect.ValueOf(n)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// position returns the line and column of n, 0, 0 when unknown. Mappings report their first
// key rather than the ':' token go-yaml attaches to them.
func position(n ast.Node) (int, int) {
	for range 16 {
		if isNil(n) {
			return 0, 0
		}
		switch v := n.(type) {
		case *ast.DocumentNode:
			n = v.Body
			continue
		case *ast.MappingNode:
			if !v.IsFlowStyle && len(v.Values) > 0 && !isNil(v.Values[0]) && !isNil(v.Values[0].Key) {
				n = v.Values[0].Key
				continue
			}
		case *ast.MappingValueNode:
			if !isNil(v.Key) {
				n = v.Key
				continue
			}
		}
		tk := n.GetToken()
		if tk == nil || tk.Position == nil {
			return 0, 0
		}
		return tk.Position.Line, tk.Position.Column
	}
	return 0, 0
}

func (w *walker) add(sev Severity, at []ast.Node, loc, msg, sugg string) {
	// Every issue passes here, so this is where what the file wrote is made safe to print:
	// locations carry its keys and messages may quote its values.
	is := Issue{Severity: sev, File: w.file, Location: echoLoc(loc), Message: echo(msg, maxEchoMessage),
		Suggestion: echo(sugg, maxEchoMessage)}
	for _, n := range at {
		if l, c := position(n); l > 0 {
			is.Line, is.Column = l, c
			break
		}
	}
	if sev == SeverityError {
		w.rep.Errors = append(w.rep.Errors, is)
	} else {
		w.rep.Warnings = append(w.rep.Warnings, is)
	}
}

// Caps on text an issue echoes from the file: a key path segment (a key as written) and a
// whole message or suggestion. Messages quote values already clipped shorter; this bounds
// whatever slips through, so a file with a megabyte-long key makes a one-line issue.
const (
	maxEchoSegment = 80
	maxEchoMessage = 600
)

// echo makes s printable in one terminal line: invalid UTF-8, control characters (C0, DEL
// and C1, which carry terminal escape sequences) and Unicode format characters (bidi
// overrides) become escapes, and the result is clipped to n runes with an ellipsis.
func echo(s string, n int) string {
	var b strings.Builder
	for runes := 0; s != ""; runes++ {
		if runes == n {
			b.WriteString("…")
			break
		}
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[:size])
		}
		s = s[size:]
	}
	return b.String()
}

// unsafeRune reports runes that should never reach a terminal or a folder name as they are.
func unsafeRune(r rune) bool {
	return r < 0x20 || (r >= 0x7f && r < 0xa0) || unicode.Is(unicode.Cf, r)
}

// echoLoc clips each segment of a key path (agents[0].backend.<key>) on its own, so the
// structure stays readable when one key is huge.
func echoLoc(loc string) string {
	if utf8.RuneCountInString(loc) <= maxEchoSegment && echo(loc, maxEchoSegment) == loc {
		return loc
	}
	segs := strings.Split(loc, ".")
	if len(segs) > 8 {
		segs = append(segs[:7], "…")
	}
	for i, s := range segs {
		segs[i] = echo(s, maxEchoSegment)
	}
	return strings.Join(segs, ".")
}

// errAt records an error at the first of the nodes that has a position.
func (w *walker) errAt(loc, msg, sugg string, at ...ast.Node) {
	w.add(SeverityError, at, loc, msg, sugg)
}

func (w *walker) warnAt(loc, msg, sugg string, at ...ast.Node) {
	w.add(SeverityWarning, at, loc, msg, sugg)
}

// errf records an error at a field's value (or its key when the value has no position).
func (w *walker) errf(f field, sugg, format string, args ...any) {
	w.errAt(f.loc, fmt.Sprintf(format, args...), sugg, f.raw, f.keyN)
}

// errKey records an error at a field's key.
func (w *walker) errKey(f field, sugg, format string, args ...any) {
	w.errAt(f.loc, fmt.Sprintf(format, args...), sugg, f.keyN, f.raw)
}

// spend takes n from the expansion budget and reports false once it is exhausted.
func (w *walker) spend(n int, at ast.Node) bool {
	if w.blown {
		return false
	}
	w.budget -= n
	if w.budget < 0 {
		w.blown = true
		w.errAt("", "the file expands to too many values through aliases or merge keys",
			"use fewer nested *alias references", at)
		return false
	}
	return true
}

// depthOK reports whether depth is within maxDepth, reporting the first excess.
func (w *walker) depthOK(depth int, at ast.Node) bool {
	if depth <= maxDepth {
		return true
	}
	if !w.deep {
		w.deep = true
		w.errAt("", fmt.Sprintf("values are nested more than %d levels deep", maxDepth), "flatten the structure", at)
	}
	return false
}

// flowDepthOK reports whether data nests [ and { at most maxFlowDepth deep (counting
// brackets inside strings too: a real config never comes close).
func flowDepthOK(data []byte) (ok bool, line, col int) {
	depth, line, col := 0, 1, 0
	for _, c := range data {
		col++
		switch c {
		case '\n':
			line, col = line+1, 0
		case '[', '{':
			if depth++; depth > maxFlowDepth {
				return false, line, col
			}
		case ']', '}':
			depth = max(0, depth-1)
		}
	}
	return true, 0, 0
}

// collectAliases records, in document order, what every alias refers to, and reports aliases
// to anchors that are not defined before them.
func (w *walker) collectAliases(n ast.Node, anchors map[string]ast.Node, depth int) {
	if isNil(n) || depth > 10*maxDepth {
		return
	}
	depth++
	switch v := n.(type) {
	case *ast.DocumentNode:
		w.collectAliases(v.Body, anchors, depth)
	case *ast.MappingNode:
		for _, mv := range v.Values {
			w.collectAliases(mv, anchors, depth)
		}
	case *ast.MappingValueNode:
		w.collectAliases(v.Key, anchors, depth)
		w.collectAliases(v.Value, anchors, depth)
	case *ast.MappingKeyNode:
		w.collectAliases(v.Value, anchors, depth)
	case *ast.SequenceNode:
		for _, e := range v.Values {
			w.collectAliases(e, anchors, depth)
		}
	case *ast.TagNode:
		w.collectAliases(v.Value, anchors, depth)
	case *ast.AnchorNode:
		w.collectAliases(v.Value, anchors, depth)
		anchors[scalarText(v.Name)] = v.Value
	case *ast.AliasNode:
		name := scalarText(v.Value)
		target, ok := anchors[name]
		if !ok {
			w.errAt("", fmt.Sprintf("alias `*%s` refers to no anchor", name),
				fmt.Sprintf("define `&%s` before using it", name), v)
			return
		}
		w.aliases[v] = target
	}
}

// scalarText is the text of a scalar node as written (without quotes), "" otherwise.
func scalarText(n ast.Node) string {
	if isNil(n) {
		return ""
	}
	switch v := n.(type) {
	case *ast.StringNode:
		return v.Value
	case *ast.LiteralNode:
		if isNil(v.Value) {
			return ""
		}
		return v.Value.Value
	}
	if tk := n.GetToken(); tk != nil {
		return tk.Value
	}
	return ""
}

// resolve follows anchors, aliases and tags to the node carrying the value; nil means null or
// missing. A value tagged !!str becomes a string whatever it looks like.
func (w *walker) resolve(n ast.Node) ast.Node {
	for range 64 {
		if isNil(n) {
			return nil
		}
		switch v := n.(type) {
		case *ast.DocumentNode:
			n = v.Body
		case *ast.AnchorNode:
			n = v.Value
		case *ast.AliasNode:
			n = w.aliases[v]
		case *ast.MappingKeyNode:
			n = v.Value
		case *ast.TagNode:
			inner := w.resolve(v.Value)
			if v.Start != nil && v.Start.Value == "!!str" && isScalar(inner) {
				tk := inner.GetToken()
				if tk == nil {
					tk = v.Start
				}
				s := scalarText(inner)
				if _, isNull := inner.(*ast.NullNode); isNull {
					s = ""
				}
				return &ast.StringNode{BaseNode: &ast.BaseNode{}, Token: tk, Value: s}
			}
			if v.Start != nil && v.Start.Value == "!!null" {
				return nil
			}
			return inner
		case *ast.NullNode:
			return nil
		default:
			return n
		}
	}
	return nil
}

func isScalar(n ast.Node) bool {
	switch n.(type) {
	case *ast.StringNode, *ast.LiteralNode, *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode,
		*ast.InfinityNode, *ast.NanNode, *ast.NullNode:
		return true
	}
	return false
}

// kind names what a resolved node is, for "must be a X, not Y" messages.
func kind(n ast.Node) string {
	switch n.(type) {
	case nil:
		return "empty"
	case *ast.MappingNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.StringNode, *ast.LiteralNode:
		return "a string"
	case *ast.IntegerNode, *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "a number"
	case *ast.BoolNode:
		return "a boolean"
	}
	return "a " + strings.ToLower(n.Type().String())
}

// child makes the field for entry e of a mapping at loc.
func child(loc string, e field) field {
	if loc == "" {
		e.loc = e.key
	} else {
		e.loc = loc + "." + e.key
	}
	return e
}

// item makes the field for element i of a list field.
func (w *walker) item(f field, i int, raw ast.Node) field {
	return field{key: fmt.Sprintf("%s[%d]", f.key, i), keyN: f.keyN, raw: raw, val: w.resolve(raw),
		loc: fmt.Sprintf("%s[%d]", f.loc, i)}
}

// entries lists the keys of mapping m in file order, with merge keys (<<: *base) expanded;
// keys written in m win over merged ones. Keys that are not scalars are reported and skipped.
func (w *walker) entries(m *ast.MappingNode, loc string, depth int) []field {
	if !w.depthOK(depth, m) || !w.spend(len(m.Values), m) {
		return nil
	}
	explicit := map[string]bool{}
	for _, mv := range m.Values {
		if isNil(mv) || isMergeKey(mv.Key) {
			continue
		}
		explicit[scalarText(w.resolve(mv.Key))] = true
	}
	var out []field
	seen := map[string]ast.Node{}
	for _, mv := range m.Values {
		if isNil(mv) {
			continue
		}
		if isMergeKey(mv.Key) {
			for _, e := range w.mergeSources(mv, loc, depth) {
				if explicit[e.key] || seen[e.key] != nil {
					continue
				}
				seen[e.key] = e.keyN
				out = append(out, e)
			}
			continue
		}
		key := w.resolve(mv.Key)
		if key != nil && !isScalar(key) {
			w.errAt(loc, "mapping keys must be plain words, not "+kind(key), "", mv.Key, mv)
			continue
		}
		f := field{key: scalarText(key), keyN: mv.Key, raw: mv.Value, val: w.resolve(mv.Value)}
		if isNil(f.keyN) {
			f.keyN = mv
		}
		if prev := seen[f.key]; prev != nil {
			l, c := position(prev)
			w.errAt(joinLoc(loc, f.key), fmt.Sprintf("key `%s` appears twice (first at line %d:%d)", clip(f.key), l, c),
				"keep only one", f.keyN)
			continue
		}
		seen[f.key] = f.keyN
		out = append(out, f)
	}
	return out
}

func joinLoc(loc, key string) string {
	if loc == "" {
		return key
	}
	return loc + "." + key
}

func isMergeKey(k ast.Node) bool {
	if isNil(k) {
		return false
	}
	_, ok := k.(*ast.MergeKeyNode)
	return ok
}

// mergeSources expands the value of a `<<` key: a mapping or a list of mappings.
func (w *walker) mergeSources(mv *ast.MappingValueNode, loc string, depth int) []field {
	src := w.resolve(mv.Value)
	var maps []*ast.MappingNode
	switch v := src.(type) {
	case *ast.MappingNode:
		maps = append(maps, v)
	case *ast.SequenceNode:
		for _, e := range v.Values {
			m, ok := w.resolve(e).(*ast.MappingNode)
			if !ok {
				w.errAt(loc, "merge key `<<` needs a mapping or a list of mappings", "", e, mv)
				continue
			}
			maps = append(maps, m)
		}
	default:
		w.errAt(loc, "merge key `<<` needs a mapping or a list of mappings", "", mv.Value, mv)
	}
	var out []field
	seen := map[string]bool{}
	for _, m := range maps {
		for _, e := range w.entries(m, loc, depth+1) {
			if !seen[e.key] {
				seen[e.key] = true
				out = append(out, e)
			}
		}
	}
	return out
}

// decode turns a value into plain Go values: map[string]any, []any, string, int64, uint64,
// float64, bool or nil. It reports numbers that JSON cannot carry (.inf, .nan).
func (w *walker) decode(f field, n ast.Node, depth int) any {
	n = w.resolve(n)
	if n == nil || !w.depthOK(depth, n) || !w.spend(1, n) {
		return nil
	}
	switch v := n.(type) {
	case *ast.MappingNode:
		out := map[string]any{}
		for _, e := range w.entries(v, f.loc, depth+1) {
			out[e.key] = w.decode(child(f.loc, e), e.raw, depth+1)
		}
		return out
	case *ast.SequenceNode:
		out := make([]any, 0, len(v.Values))
		for i, e := range v.Values {
			out = append(out, w.decode(w.item(f, i, e), e, depth+1))
		}
		return out
	case *ast.StringNode:
		return v.Value
	case *ast.LiteralNode:
		return scalarText(v)
	case *ast.BoolNode:
		return v.Value
	case *ast.IntegerNode:
		if v.Value == nil {
			w.errAt(f.loc, "number is too large", "", n)
		}
		return v.Value
	case *ast.FloatNode:
		return v.Value
	case *ast.InfinityNode, *ast.NanNode:
		w.errAt(f.loc, "infinite and not-a-number values cannot be sent to a provider", "use a finite number", n)
		return nil
	}
	return scalarText(n)
}

// tokenPos builds a position-only node for issues that have a token but no node.
func tokenPos(tk *token.Token) ast.Node {
	if tk == nil {
		return nil
	}
	return &ast.StringNode{BaseNode: &ast.BaseNode{}, Token: tk, Value: tk.Value}
}
