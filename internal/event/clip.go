package event

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// encodeLine is e as one events.jsonl line, newline included, never longer than MaxLine.
func encodeLine(e Event) ([]byte, error) {
	if e.Payload == nil {
		return nil, fmt.Errorf("event %d: no payload", e.Seq)
	}
	data, err := MarshalPlain(e.Payload)
	if err != nil {
		return nil, fmt.Errorf("event %d %s: %w", e.Seq, e.Payload.Type(), err)
	}
	line := e.envelope(data, false)
	if len(line) >= MaxLine {
		if line, err = clipLine(e, data); err != nil {
			return nil, err
		}
	}
	return append(line, '\n'), nil
}

// MarshalPlain is json.Marshal without HTML escaping, for files people and scripts read
// (events.jsonl, status.json, ...), never embedded in a page: prompts' "<ORIGINAL MESSAGE>"
// reads as written.
func MarshalPlain(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// clipLine shortens the strings of an event whose payload data is too large for one line:
// every string longer than a limit is cut to it, the limit shrinking until the line fits. The
// event keeps its type and every field, so that readers decode it as usual, and the envelope
// says "clipped". An event that does not fit even then (a list of millions of entries) keeps
// only its type.
//
// The engine's output caps keep real events far below MaxLine; this is the last line of
// defence for the log's readability, not a way to store big events.
func clipLine(e Event, data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, fmt.Errorf("event %d %s: %w", e.Seq, e.Payload.Type(), err)
	}
	// Start where the line would fit if its longest strings made up all of it, which they
	// nearly always do; halve from there.
	limit := int(float64(longest(tree)) * float64(MaxLine) / float64(len(data)) * 0.9)
	for ; limit >= 64; limit /= 2 {
		clipped, err := MarshalPlain(clipStrings(tree, limit))
		if err != nil {
			return nil, fmt.Errorf("event %d %s: %w", e.Seq, e.Payload.Type(), err)
		}
		if line := e.envelope(clipped, true); len(line) < MaxLine {
			return line, nil
		}
	}
	return e.envelope([]byte("{}"), true), nil
}

// longest is the length in bytes of the longest string in a decoded JSON tree.
func longest(v any) int {
	switch x := v.(type) {
	case string:
		return len(x)
	case []any:
		n := 0
		for _, e := range x {
			n = max(n, longest(e))
		}
		return n
	case map[string]any:
		n := 0
		for k, e := range x {
			n = max(n, len(k), longest(e))
		}
		return n
	}
	return 0
}

// clipStrings returns a copy of the tree with every string (map keys included) cut to limit
// bytes, on a rune boundary, with a note of how much was cut.
func clipStrings(v any, limit int) any {
	switch x := v.(type) {
	case string:
		return clipString(x, limit)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = clipStrings(e, limit)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[clipString(k, limit)] = clipStrings(e, limit)
		}
		return out
	}
	return v
}

func clipString(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	n := limit
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return fmt.Sprintf("%s…[%d bytes clipped from the event log]", s[:n], len(s)-n)
}
