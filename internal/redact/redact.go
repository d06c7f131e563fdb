// Package redact removes secret values (API keys, the serve token, passwords in URLs) from text
// before anyone sees it: error messages, events, logs, tool results and model output. Every
// backend and every sink uses the same Redactor, so a form of a key that one place catches is
// caught everywhere.
//
// A secret is found in three forms:
//   - whole: the value itself. A value shorter than MinSubstring counts only as a whole token
//     (not preceded or followed by a letter, digit, '-' or '_'), so a short key such as "abc123"
//     does not redact the inside of ordinary words.
//   - cut: any run of MinSubstring or more bytes of a longer value, which is how a server that
//     drops the "sk-" prefix, or quotes only the end, echoes a key. The whole token around the
//     run is redacted, so no fragment of the key is left beside the marker.
//   - masked: a word such as "sk-abc***xyz", "abc...wxyz" or "****wxyz" whose visible parts are
//     the start (or the start after a '-' or '_') and the end of a value.
package redact

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// Marker replaces every secret.
const Marker = "[redacted]"

// MinSubstring is the shortest run of a secret's bytes that is redacted wherever it appears;
// secrets shorter than this are redacted only as whole tokens. It is longer than every common
// key prefix ("sk-proj-", "AIzaSy", "gsk_"), so a prefix alone is never taken for a key, and
// longer than "redacted", so a redacted text never holds such a run.
const MinSubstring = 10

// minMasked is how many visible characters of a masked form must match a secret, and
// minMaskedSecret the shortest secret whose masked forms are looked for.
const (
	minMasked       = 4
	minMaskedSecret = 8
)

// Redactor removes a fixed set of secrets. The zero value and nil remove nothing. It is
// immutable, so one Redactor is safe for concurrent use; building one costs a map of the
// secrets' MinSubstring-byte runs.
type Redactor struct {
	long  []string              // secrets of MinSubstring bytes or more
	short []string              // shorter secrets: whole tokens only
	grams map[string]struct{}   // every MinSubstring-byte run of the long secrets
	pairs *[1 << 16 / 64]uint64 // the first two bytes of grams, to skip most positions quickly
	max   int                   // the longest secret's length
}

// placeholders are the values local servers' docs tell users to put where a key goes; they
// guard nothing, and redacting them would cut "ollama" or "none" out of every answer.
var placeholders = map[string]bool{"empty": true, "none": true, "null": true, "nil": true, "dummy": true,
	"ollama": true, "lm-studio": true, "lmstudio": true, "vllm": true, "sglang": true, "not-needed": true,
	"no-key": true, "sk-no-key-required": true, "na": true, "n/a": true, "x": true, "-": true}

// New returns a Redactor for the given values. Empty values (after trimming spaces), the
// placeholders local servers accept as a key ("EMPTY", "ollama", ...) and duplicates are
// ignored.
func New(values ...string) *Redactor {
	r := &Redactor{}
	return r.With(values...)
}

// With returns a Redactor for r's secrets and values; r is not changed.
func (r *Redactor) With(values ...string) *Redactor {
	out := &Redactor{grams: map[string]struct{}{}, pairs: new([1 << 16 / 64]uint64)}
	seen := map[string]bool{}
	var all []string
	if r != nil {
		all = append(append(all, r.long...), r.short...)
	}
	for _, v := range append(all, values...) {
		v = strings.TrimSpace(v)
		if v == "" || seen[v] || placeholders[strings.ToLower(v)] {
			continue
		}
		seen[v] = true
		out.max = max(out.max, len(v))
		if len(v) < MinSubstring {
			out.short = append(out.short, v)
			continue
		}
		out.long = append(out.long, v)
		for i := 0; i+MinSubstring <= len(v); i++ {
			out.grams[v[i:i+MinSubstring]] = struct{}{}
			pair := uint(v[i])<<8 | uint(v[i+1])
			out.pairs[pair/64] |= 1 << (pair % 64)
		}
	}
	return out
}

// Empty reports whether r removes nothing.
func (r *Redactor) Empty() bool { return r == nil || r.max == 0 }

// hold is how many trailing bytes of a stream may still be the start of a secret.
func (r *Redactor) hold() int {
	if r.Empty() {
		return 0
	}
	return r.max - 1
}

// String returns s with every form of every secret replaced by Marker.
func (r *Redactor) String(s string) string {
	if r.Empty() || s == "" {
		return s
	}
	return apply(s, r.regions(s), len(s))
}

// Message redacts a service's own message, as a backend quotes it in an error: besides r's
// secrets it removes anything shaped like a key, masked or not (OpenAI's "sk-abc***wxyz",
// Google's "AIza..."), since a server may quote a key the session does not hold.
func (r *Redactor) Message(s string) string {
	s = r.String(s)
	return keyShaped(s)
}

// region is a byte range [start, end) to replace.
type region struct{ start, end int }

// regions finds every secret in s, sorted by start and merged.
func (r *Redactor) regions(s string) []region {
	var rs []region
	if len(r.long) > 0 {
		rs = r.cutRegions(s, rs)
		rs = r.maskRegions(s, rs)
	}
	for _, v := range r.short {
		for off := 0; off < len(s); {
			i := strings.Index(s[off:], v)
			if i < 0 {
				break
			}
			start, end := off+i, off+i+len(v)
			if (start == 0 || !keyish(s[start-1])) && (end == len(s) || !keyish(s[end])) {
				rs = append(rs, region{start, end})
			}
			off = start + 1
		}
	}
	return merge(rs)
}

// cutRegions marks every MinSubstring-byte window of s that is a run of a long secret, widened
// to the token around it.
func (r *Redactor) cutRegions(s string, rs []region) []region {
	for i := 0; i+MinSubstring <= len(s); i++ {
		if pair := uint(s[i])<<8 | uint(s[i+1]); r.pairs[pair/64]&(1<<(pair%64)) == 0 {
			continue
		}
		if _, ok := r.grams[s[i:i+MinSubstring]]; !ok {
			continue
		}
		start, end := i, i+MinSubstring
		// Extend over the following windows that match too, so a long run is one region.
		for end < len(s) {
			if _, ok := r.grams[s[end+1-MinSubstring:end+1]]; !ok {
				break
			}
			end++
		}
		for start > 0 && keyish(s[start-1]) {
			start--
		}
		for end < len(s) && keyish(s[end]) {
			end++
		}
		rs = append(rs, region{start, end})
		i = end - MinSubstring // the loop's i++ resumes right after this region
	}
	return rs
}

// maskRegions marks masked forms of a long secret: visible start, a run of mask characters,
// visible end.
func (r *Redactor) maskRegions(s string, rs []region) []region {
	for i := 0; i < len(s); {
		if c := s[i]; c != '*' && c != '.' && c != 0xe2 { // 0xe2 starts "…" and "•"
			i++
			continue
		}
		j, ok := maskRun(s, i)
		if !ok {
			i++
			continue
		}
		ps := i
		for ps > 0 && keyish(s[ps-1]) {
			ps--
		}
		se := j
		for se < len(s) && keyish(s[se]) {
			se++
		}
		p, suf := s[ps:i], s[j:se]
		for _, v := range r.long {
			if len(v) >= minMaskedSecret && maskedForm(v, p, suf) {
				rs = append(rs, region{ps, se})
				break
			}
		}
		i = j
	}
	return rs
}

// maskRun reports whether a mask starts at s[i] (three or more of '*' and '.', '•', or an
// ellipsis '…') and where it ends.
func maskRun(s string, i int) (int, bool) {
	j, n, ellipsis := i, 0, false
	for j < len(s) {
		switch {
		case s[j] == '*' || s[j] == '.':
			j++
			n++
		case strings.HasPrefix(s[j:], "…"):
			j += len("…")
			ellipsis = true
		case strings.HasPrefix(s[j:], "•"):
			j += len("•")
			n++
		default:
			return j, j > i && (n >= 3 || ellipsis)
		}
	}
	return j, j > i && (n >= 3 || ellipsis)
}

// maskedForm reports whether p (the visible start) and suf (the visible end) of a masked word
// belong to v: p is where v starts, or where it starts after one of its '-' or '_' (the prefix
// dropped), suf is where v ends, and together they show enough of v.
func maskedForm(v, p, suf string) bool {
	if len(p)+len(suf) < minMasked || len(p)+len(suf) >= len(v) {
		return false
	}
	if suf != "" && !strings.HasSuffix(v, suf) {
		return false
	}
	if p == "" {
		return true
	}
	for c := 0; c < len(v); c++ {
		if (c == 0 || v[c-1] == '-' || v[c-1] == '_') && strings.HasPrefix(v[c:], p) {
			return len(v)-c >= len(p)+len(suf)
		}
	}
	return false
}

// keyish reports whether c can be part of a key token.
func keyish(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// merge sorts rs by start and joins overlapping or touching regions.
func merge(rs []region) []region {
	if len(rs) < 2 {
		return rs
	}
	// Insertion sort: there are few regions, and they come nearly sorted.
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && rs[j].start < rs[j-1].start; j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
	out := rs[:1]
	for _, x := range rs[1:] {
		last := &out[len(out)-1]
		if x.start <= last.end {
			last.end = max(last.end, x.end)
			continue
		}
		out = append(out, x)
	}
	return out
}

// apply replaces the regions of s that end at or before n with Marker and returns s[:n].
func apply(s string, rs []region, n int) string {
	if len(rs) == 0 {
		return s[:n]
	}
	var b strings.Builder
	b.Grow(n)
	at := 0
	for _, x := range rs {
		if x.end > n {
			break
		}
		b.WriteString(s[at:x.start])
		b.WriteString(Marker)
		at = x.end
	}
	b.WriteString(s[at:n])
	return b.String()
}

// keyShaped replaces words that look like a key whoever's it is: OpenAI and Anthropic keys
// (sk-...), Google API keys (AIza...), and any word with a run of three asterisks or more.
func keyShaped(s string) string {
	if !strings.Contains(s, "sk-") && !strings.Contains(s, "AIza") && !strings.Contains(s, "***") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if !wordByte(s[i]) {
			_, n := utf8.DecodeRuneInString(s[i:])
			b.WriteString(s[i : i+n])
			i += n
			continue
		}
		j := i
		for j < len(s) && wordByte(s[j]) {
			j++
		}
		// A word's trailing dots end a sentence; they are not part of a mask.
		end := j
		for end > i && s[end-1] == '.' {
			end--
		}
		w := s[i:end]
		if strings.HasPrefix(w, "sk-") && len(w) > len("sk-") || strings.HasPrefix(w, "AIza") && len(w) >= 20 || strings.Contains(w, "***") {
			b.WriteString(Marker)
		} else {
			b.WriteString(w)
		}
		b.WriteString(s[end:j])
		i = j
	}
	return b.String()
}

// wordByte is a byte of a word keyShaped looks at: key characters and the mask characters.
func wordByte(c byte) bool { return keyish(c) || c == '*' || c == '.' }

// Error returns err with its message redacted, or err itself when the message holds no secret.
// The redacted error still answers errors.Is for what err wraps (context.Canceled, say) but
// does not unwrap to it, since the original's message holds the secret.
func (r *Redactor) Error(err error) error {
	if err == nil || r.Empty() {
		return err
	}
	msg := err.Error()
	red := r.String(msg)
	if red == msg {
		return err
	}
	return &redactedError{msg: red, err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }

// Is lets errors.Is see through to the original error without handing it out.
func (e *redactedError) Is(target error) bool { return errors.Is(e.err, target) }
