package config

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"

	"massgen/internal/suggest"
)

// Typed getters: each returns ok=false for null (no issue) and for a wrong type (issue).

func (w *walker) str(f field) (string, bool) {
	switch v := f.val.(type) {
	case nil:
		return "", false
	case *ast.StringNode:
		return v.Value, true
	case *ast.LiteralNode:
		return scalarText(v), true
	}
	w.errf(f, "", "%s must be a string, not %s", f.key, kind(f.val))
	return "", false
}

func (w *walker) boolean(f field) (bool, bool) {
	switch v := f.val.(type) {
	case nil:
		return false, false
	case *ast.BoolNode:
		return v.Value, true
	case *ast.StringNode, *ast.LiteralNode:
		w.errf(f, "true or false, without quotes", "%s must be a boolean", f.key)
		return false, false
	}
	w.errf(f, "true or false", "%s must be a boolean, not %s", f.key, kind(f.val))
	return false, false
}

func (w *walker) integer(f field) (int, bool) {
	switch v := f.val.(type) {
	case nil:
		return 0, false
	case *ast.IntegerNode:
		switch x := v.Value.(type) {
		case int64:
			return int(x), true
		case uint64:
			if x <= math.MaxInt32 {
				return int(x), true
			}
		}
		w.errf(f, "", "%s is too large", f.key)
		return 0, false
	}
	w.errf(f, "", "%s must be a whole number, not %s", f.key, kind(f.val))
	return 0, false
}

func (w *walker) number(f field) (float64, bool) {
	switch v := f.val.(type) {
	case nil:
		return 0, false
	case *ast.IntegerNode:
		switch x := v.Value.(type) {
		case int64:
			return float64(x), true
		case uint64:
			return float64(x), true
		}
		w.errf(f, "", "%s is too large", f.key)
		return 0, false
	case *ast.FloatNode:
		return v.Value, true
	case *ast.InfinityNode, *ast.NanNode:
		w.errf(f, "", "%s must be a finite number", f.key)
		return 0, false
	}
	w.errf(f, "", "%s must be a number, not %s", f.key, kind(f.val))
	return 0, false
}

// enum reads a string that must be one of all. The suggestion lists shown, the values this
// build runs (all when nil).
func (w *walker) enum(f field, all, shown []string) (string, bool) {
	s, ok := w.str(f)
	if !ok {
		return "", false
	}
	if slices.Contains(all, s) {
		return s, true
	}
	if shown == nil {
		shown = all
	}
	sugg := "use " + oneOf(quoteAll(shown))
	if c := suggest.Closest(s, all); c != "" {
		sugg = fmt.Sprintf("did you mean `%s`? valid values: %s", c, strings.Join(shown, ", "))
	}
	w.errf(f, sugg, "invalid %s `%s`", f.key, clip(s))
	return "", false
}

// seconds reads a positive number of seconds (or zero, when zeroOK) as a duration.
func (w *walker) seconds(f field, zeroOK bool) (time.Duration, bool) {
	var x float64
	what := "a positive"
	if zeroOK {
		what = "a non-negative"
	}
	switch f.val.(type) {
	case nil:
		return 0, false
	case *ast.IntegerNode, *ast.FloatNode:
		var ok bool
		if x, ok = w.number(f); !ok {
			return 0, false
		}
	case *ast.InfinityNode, *ast.NanNode:
		w.errf(f, "", "%s must be a finite number of seconds", f.key)
		return 0, false
	case *ast.StringNode:
		w.errf(f, "write the number without quotes", "%s must be %s number of seconds, not a string", f.key, what)
		return 0, false
	default:
		w.errf(f, "", "%s must be %s number of seconds, not %s", f.key, what, kind(f.val))
		return 0, false
	}
	if x < 0 || (x == 0 && !zeroOK) {
		w.errf(f, "", "%s must be %s number of seconds", f.key, what)
		return 0, false
	}
	if x > maxSeconds {
		w.errf(f, "", "%s is too large", f.key)
		return 0, false
	}
	d := time.Duration(x * float64(time.Second))
	if d <= 0 && x > 0 {
		w.errf(f, "", "%s is too small", f.key)
		return 0, false
	}
	return d, true
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
			w.errf(f, sugg, "%s `%s` is not a duration", f.key, clip(v.Value))
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

// maxSeconds is the longest duration, in seconds.
var maxSeconds = float64(math.MaxInt64) / float64(time.Second)

// strMap reads a mapping of strings; nil when f is not a mapping.
func (w *walker) strMap(f field) map[string]string {
	fields, ok := w.mapping(f, 3)
	if !ok {
		return nil
	}
	out := map[string]string{}
	for _, e := range fields {
		g := child(f.loc, e)
		if s, ok := w.str(g); ok {
			out[g.key] = s
		}
	}
	return out
}

// mapping reads a mapping field's entries.
func (w *walker) mapping(f field, depth int) ([]field, bool) {
	switch v := f.val.(type) {
	case nil:
		return nil, false
	case *ast.MappingNode:
		return w.entries(v, f.loc, depth), true
	}
	w.errf(f, "", "%s must be a mapping (key: value lines), not %s", f.key, kind(f.val))
	return nil, false
}

// list reads a list field's elements as fields.
func (w *walker) list(f field) ([]field, bool) {
	switch v := f.val.(type) {
	case nil:
		return nil, false
	case *ast.SequenceNode:
		if !w.spend(len(v.Values), v) {
			return nil, false
		}
		out := make([]field, 0, len(v.Values))
		for i, e := range v.Values {
			out = append(out, w.item(f, i, e))
		}
		return out, true
	}
	w.errf(f, "", "%s must be a list, not %s", f.key, kind(f.val))
	return nil, false
}

// strList reads a list of strings.
func (w *walker) strList(f field) ([]string, bool) {
	items, ok := w.list(f)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(items))
	good := true
	for _, it := range items {
		s, ok := w.str(it)
		if !ok && it.val == nil {
			w.errf(it, "", "%s must be a string, not empty", it.key)
		}
		good = good && ok
		out = append(out, s)
	}
	return out, good
}

// empty reports whether a value is off: null, false, "", an empty list or mapping, or 0.
func empty(n ast.Node) bool {
	switch v := n.(type) {
	case nil:
		return true
	case *ast.BoolNode:
		return !v.Value
	case *ast.StringNode:
		return v.Value == ""
	case *ast.SequenceNode:
		return len(v.Values) == 0
	case *ast.MappingNode:
		return len(v.Values) == 0
	case *ast.IntegerNode:
		return v.Value == int64(0) || v.Value == uint64(0)
	}
	return false
}

// clip shortens a user value quoted in a message.
func clip(s string) string {
	const n = 40
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
