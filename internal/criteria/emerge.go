package criteria

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Emerging criteria (MassGen's criteria_mode: bootstrap_inline and bootstrap_subagent):
// criteria a stronger answer would meet and the current answers do not, proposed during the
// run by the agents with their checklists or by a critic between rounds. They are appended
// to the configured list (the base), never replace it, and are numbered on from it.

// MaxEmerged is the most emerged criteria kept, whatever bootstrap_max_total says (MassGen's
// default, 30; its 0, unlimited, means this here): every criterion is scored for every
// answer in every checklist.
const MaxEmerged = 30

// MaxProposals caps the proposals read from one reply or one checklist call, before the
// per-round cap applies: a model that floods the field costs nothing more than this.
const MaxProposals = 10

// Proposal is one proposed criterion (MassGen's proposed_criteria entry).
type Proposal struct {
	Text     string `json:"text"`
	Category string `json:"category,omitempty"`
}

// ParseProposals reads a proposed_criteria value: a JSON array of {"text", "category"}
// objects (or plain strings). Entries without text, over MaxTextChars, or past MaxProposals
// are dropped; dropped says how many and why. An empty or null value is no proposal.
func ParseProposals(raw json.RawMessage) (list []Proposal, dropped string, err error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return nil, "", nil
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil, "", fmt.Errorf(`proposed_criteria must be a JSON array of {"text": "...", "category": "standard"} objects`)
	}
	var why []string
	for k, it := range items {
		if len(list) == MaxProposals {
			why = append(why, fmt.Sprintf("%d past the first %d", len(items)-k, MaxProposals))
			break
		}
		var p Proposal
		var text string
		if json.Unmarshal(it, &text) == nil {
			p.Text = text
		} else if json.Unmarshal(it, &p) != nil {
			why = append(why, fmt.Sprintf("entry %d is not an object with a text", k+1))
			continue
		}
		p.Text = strings.TrimSpace(p.Text)
		switch n := utf8.RuneCountInString(p.Text); {
		case n == 0:
			why = append(why, fmt.Sprintf("entry %d has no text", k+1))
			continue
		case n > MaxTextChars:
			why = append(why, fmt.Sprintf("entry %d is %d characters, over %d", k+1, n, MaxTextChars))
			continue
		}
		list = append(list, p)
	}
	return list, strings.Join(why, "; "), nil
}

// FromReply reads a critic's reply: a JSON object {"proposed_criteria": [...]} or a bare
// array, alone or inside a ```json fence or other text. It fails when no such JSON is found.
func FromReply(text string) ([]Proposal, string, error) {
	for _, cand := range jsonCandidates(text) {
		var obj struct {
			Proposed json.RawMessage `json:"proposed_criteria"`
			Criteria json.RawMessage `json:"criteria"`
		}
		raw := json.RawMessage(cand)
		if strings.HasPrefix(cand, "{") {
			if json.Unmarshal(raw, &obj) != nil {
				continue
			}
			raw = obj.Proposed
			if len(raw) == 0 {
				raw = obj.Criteria
			}
			if len(raw) == 0 {
				continue
			}
		}
		list, dropped, err := ParseProposals(raw)
		if err == nil {
			return list, dropped, nil
		}
	}
	return nil, "", fmt.Errorf(`the reply holds no {"proposed_criteria": [...]} JSON`)
}

// jsonCandidates are the JSON values text may hold: the whole text, each fenced block, and
// the span from the first '{' or '[' to the last matching bracket.
func jsonCandidates(text string) []string {
	text = strings.TrimSpace(text)
	out := []string{text}
	for rest := text; ; {
		_, after, ok := strings.Cut(rest, "```")
		if !ok {
			break
		}
		body, tail, ok := strings.Cut(after, "```")
		if !ok {
			break
		}
		if nl := strings.IndexByte(body, '\n'); nl >= 0 && !strings.ContainsAny(body[:nl], "{[") {
			body = body[nl+1:]
		}
		out = append(out, strings.TrimSpace(body))
		rest = tail
	}
	for _, pair := range [][2]string{{"{", "}"}, {"[", "]"}} {
		if a, b := strings.Index(text, pair[0]), strings.LastIndex(text, pair[1]); a >= 0 && b > a {
			out = append(out, text[a:b+1])
		}
	}
	return out
}

// Accumulator holds the emerged criteria of a session, in the order they came, with stable
// ids: E<n+1>, E<n+2>, ... after a base list of n, never reused once evicted.
type Accumulator struct {
	base    []Criterion
	list    []Criterion
	next    int
	capSize int
}

// NewAccumulator returns an empty accumulator after base, keeping at most capSize emerged
// criteria (0 or more than MaxEmerged: MaxEmerged), the oldest evicted first.
func NewAccumulator(base []Criterion, capSize int) *Accumulator {
	if capSize <= 0 || capSize > MaxEmerged {
		capSize = MaxEmerged
	}
	return &Accumulator{base: base, next: len(base) + 1, capSize: capSize}
}

// Emerged returns the emerged criteria kept now.
func (a *Accumulator) Emerged() []Criterion { return slices.Clone(a.list) }

// All returns the base list followed by the emerged criteria.
func (a *Accumulator) All() []Criterion { return append(slices.Clone(a.base), a.list...) }

// Merge adds the proposals whose text is new (exact match, trimmed, against the base and the
// emerged ones), as MassGen's merge does. A proposal's category maps as in FromInline, except
// that primary becomes standard: the base list has the one primary criterion, which ranks
// the answers. It returns the criteria added and the ids evicted to stay within the cap.
func (a *Accumulator) Merge(props []Proposal) (added []Criterion, evicted []string) {
	seen := map[string]bool{}
	for _, c := range a.All() {
		seen[c.Text] = true
	}
	for _, p := range props {
		text := strings.TrimSpace(p.Text)
		if text == "" || seen[text] {
			continue
		}
		seen[text] = true
		cat := NormalizeCategory(p.Category)
		if cat == Primary {
			cat = Standard
		}
		c := Criterion{ID: fmt.Sprintf("E%d", a.next), Text: text, Category: cat}
		a.next++
		a.list = append(a.list, c)
		added = append(added, c)
	}
	for len(a.list) > a.capSize {
		evicted = append(evicted, a.list[0].ID)
		a.list = a.list[1:]
	}
	return added, evicted
}

// Restore puts back the emerged criteria a log recorded (their ids as they were).
func (a *Accumulator) Restore(list []Criterion) {
	a.list = slices.Clone(list)
	for _, c := range list {
		var n int
		if _, err := fmt.Sscanf(c.ID, "E%d", &n); err == nil && n >= a.next {
			a.next = n + 1
		}
	}
}
