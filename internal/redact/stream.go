package redact

import (
	"strings"
	"unicode/utf8"
)

// maxPending bounds the text a Stream holds back while it waits for a separator: a longer run
// without one is let through at the hold-back mark (a token that long is not a key, but its
// secrets are still replaced).
const maxPending = 16 << 10

// Stream redacts text that arrives in pieces, such as a model's streamed answer, where a secret
// may be split across pieces. It holds back the tail that could still be part of a secret, up
// to the longest secret's length, and only lets text through at a separator (a space,
// punctuation), so a token is never redacted in halves. Call Flush at the end. A Stream is
// not safe for concurrent use.
type Stream struct {
	r   *Redactor
	buf string
}

// Stream returns a Stream that redacts with r.
func (r *Redactor) Stream() *Stream { return &Stream{r: r} }

// Write adds text and returns what can be shown now, redacted; it may be "".
func (s *Stream) Write(text string) string {
	if s.r.Empty() {
		return text
	}
	s.buf += text
	limit := len(s.buf) - s.r.hold()
	if limit <= 0 {
		return ""
	}
	if !s.cuttable(limit) {
		return "" // the costly search for secrets waits until some text can go
	}
	rs := s.r.regions(s.buf)
	k := s.cut(rs, limit)
	if k == 0 {
		return ""
	}
	out := apply(s.buf, rs, k)
	s.buf = strings.Clone(s.buf[k:])
	return out
}

// Flush returns the text held back, redacted, and empties the Stream.
func (s *Stream) Flush() string {
	out := s.r.String(s.buf)
	s.buf = ""
	return out
}

// cuttable reports whether the buffer has a place to cut at or before limit.
func (s *Stream) cuttable(limit int) bool {
	if limit >= maxPending {
		return true
	}
	for k := limit; k > 0; k-- {
		if separator(s.buf[k-1]) {
			return true
		}
	}
	return false
}

// cut is the longest prefix of the buffer that can be shown: it ends at or before limit, right
// after a separator, and outside every region; 0 when there is none yet.
func (s *Stream) cut(rs []region, limit int) int {
	inside := func(k int) bool {
		for _, x := range rs {
			if x.start < k && k < x.end {
				return true
			}
		}
		return false
	}
	for k := limit; k > 0; k-- {
		if separator(s.buf[k-1]) && !inside(k) {
			return k
		}
	}
	if limit < maxPending {
		return 0
	}
	// No separator for a long while: let the text through anyway, on a rune boundary and
	// outside the regions.
	k := limit
	for _, x := range rs {
		if x.start < k && k < x.end {
			k = x.start
		}
	}
	for k > 0 && k < len(s.buf) && !utf8.RuneStart(s.buf[k]) {
		k--
	}
	return k
}

// separator reports whether a token can end at c: ASCII that is neither part of a key nor of
// a mask. Bytes of multi-byte characters are not, so a cut never splits a character.
func separator(c byte) bool {
	return c < utf8.RuneSelf && !keyish(c) && c != '*' && c != '.'
}
