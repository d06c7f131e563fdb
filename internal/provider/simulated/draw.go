package simulated

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"massgen/internal/lazy"
)

// Question is an item as the simulated agents know it: its id, the answer that is right and
// the wrong ones they may give (at least one), each a short value without spaces ("C",
// "391").
type Question struct {
	ID      string
	Correct string
	Wrong   []string
}

// Answer is one agent's answer to a question.
type Answer struct {
	Value   string
	Correct bool
	// Confidence is the stated confidence, -1 for none.
	Confidence float64
	// Length is Short or Long.
	Length string
	// Copied says the agent took the leader's answer (herding) instead of its own.
	Copied bool
	// author is the agent's position: each agent words its working its own way, since the
	// engine refuses an answer identical to another agent's.
	author int
}

// Text is the answer as the agent writes it: working of its length, then the line that gives
// the value, which the eval graders (choice, numeric) and the other simulated agents read.
func (a Answer) Text() string {
	last := "The answer is " + a.Value
	if a.Confidence >= 0 {
		last += fmt.Sprintf(" (confidence %.2f)", a.Confidence)
	}
	last += "."
	size := shortChars
	if a.Length == Long {
		size = longChars
	}
	return working(a.author*7, size-len(last)-1) + "\n" + last
}

// Answer sizes in characters: about 60 and 600 simulated tokens.
const (
	shortChars = 240
	longChars  = 2400
)

// fillerWords make up the working: lower-case words without digits or the word "answer", so
// that nothing in them reads as a choice letter or a number to the graders.
var fillerWords = strings.Fields(`first restate what is asked then list the facts given and
check each step against them rule out the options that contradict a fact keep the ones that
fit recompute the key quantity a second way and compare the two results look for a unit or
sign slip consider the edge cases the question hints at and make sure nothing was counted
twice or left out`)

// working is n characters of filler text starting at word from (n may be 0 or less: none).
func working(from, n int) string {
	var b strings.Builder
	for k := 0; b.Len() < n; k++ {
		if k > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(fillerWords[(from+k)%len(fillerWords)])
	}
	s := b.String()
	if len(s) > n {
		s = s[:max(n, 0)]
	}
	return strings.TrimRight(s, " ")
}

var answerLine = lazy.Regexp(`(?m)^The answer is (\S+?)(?: \(confidence ([^)]*)\))?\.\s*$`)

// Read parses an answer another simulated agent wrote: its value, its stated confidence (-1
// when it states none, or a confidence that is not a number from 0 to 1) and its length in
// characters. ok is false for a text that gives no value.
func Read(text string) (value string, confidence float64, ok bool) {
	m := answerLine().FindAllStringSubmatch(text, -1)
	if len(m) == 0 {
		return "", -1, false
	}
	last := m[len(m)-1]
	confidence = -1
	if c, err := strconv.ParseFloat(last[2], 64); err == nil && c >= 0 && c <= 1 {
		confidence = c
	}
	return last[1], confidence, true
}

// uniform is the draw named by parts: a number in [0, 1) that depends only on the seed and
// the parts, so that a run repeats exactly whatever order the calls come in.
func (p *Population) uniform(parts ...string) float64 {
	h := sha256.New()
	fmt.Fprintf(h, "%d", p.Seed)
	for _, s := range parts {
		h.Write([]byte{0})
		h.Write([]byte(s))
	}
	var sum [sha256.Size]byte
	return float64(binary.BigEndian.Uint64(h.Sum(sum[:0]))>>11) / (1 << 53)
}

// Alone is the answer agent k gives to q on its own, in draw number sample (0 is the one it
// gives in the team): whether it is sure (with probability its accuracy p), then whether it
// is right, with probability (1+p)/2 when sure and p/2 when not, which makes p in all and
// the two levels its calibrated confidences. Being sure is drawn once per agent and item,
// for all samples: an agent's samples share what it knows, different agents do not, so
// sampling one agent many times gains less than asking several.
func (p *Population) Alone(q Question, k, sample int) Answer {
	a := p.Agents[k]
	acc := *a.Accuracy
	s := strconv.Itoa(sample)
	conf := acc / 2
	if p.uniform(q.ID, a.ID, "sure") < acc {
		conf = (1 + acc) / 2
	}
	ans := Answer{Value: q.Correct, Correct: p.uniform(q.ID, a.ID, s, "right") < conf, Length: a.Length, author: k}
	if !ans.Correct {
		ans.Value, ans.Length = p.wrong(q, a.ID, s), a.WrongLength
	}
	ans.Confidence = stated(a, conf)
	return ans
}

func stated(a Profile, calibrated float64) float64 {
	switch a.Confidence {
	case Overconfident:
		return OverconfidentValue
	case NoConfidence:
		return -1
	}
	return calibrated
}

// wrong picks a wrong answer: the item's main distractor with probability Distractor, else
// one of the others.
func (p *Population) wrong(q Question, agent, sample string) string {
	if len(q.Wrong) == 0 {
		return "none"
	}
	main := pick(len(q.Wrong), p.uniform(q.ID, "distractor"))
	if len(q.Wrong) == 1 || p.uniform(q.ID, agent, sample, "spread") < *p.Distractor {
		return q.Wrong[main]
	}
	other := pick(len(q.Wrong)-1, p.uniform(q.ID, agent, sample, "other"))
	if other >= main {
		other++
	}
	return q.Wrong[other]
}

func pick(n int, u float64) int { return min(int(u*float64(n)), n-1) }

// Answers are the answers the agents give to q in the team, in their order: each its own,
// except that agent k > 0 copies, with probability its herding, the leading answer of the
// agents before it (the one most of them gave; ties go to the higher stated confidence, then
// to the earlier agent), as if it had read them first. A copy keeps the agent's own length
// for a right or wrong answer, and states the leader's confidence when it states one.
func (p *Population) Answers(q Question) []Answer {
	out := make([]Answer, len(p.Agents))
	for k, a := range p.Agents {
		out[k] = p.Alone(q, k, 0)
		if k == 0 || p.uniform(q.ID, a.ID, "herd") >= a.Herding {
			continue
		}
		entries := make([]entry, k)
		for j := range k {
			entries[j] = entry{value: out[j].Value, confidence: out[j].Confidence}
		}
		lead := out[leader(entries)]
		copied := Answer{Value: lead.Value, Correct: lead.Correct, Length: a.Length, Copied: true, Confidence: lead.Confidence, author: k}
		if !copied.Correct {
			copied.Length = a.WrongLength
		}
		if a.Confidence != Calibrated || copied.Confidence < 0 {
			copied.Confidence = stated(a, out[k].Confidence)
		}
		out[k] = copied
	}
	return out
}

// entry is an answer as a voter sees it.
type entry struct {
	value      string
	confidence float64
	chars      int
}

// leader returns the index of the first entry of the leading group: the value most entries
// give; ties go to the group with the highest stated confidence, then to the earliest.
func leader(es []entry) int {
	type group struct {
		first, n int
		conf     float64
	}
	var groups []group
	at := map[string]int{}
	for k, e := range es {
		g, ok := at[e.value]
		if !ok {
			g = len(groups)
			at[e.value] = g
			groups = append(groups, group{first: k, conf: -1})
		}
		groups[g].n++
		groups[g].conf = max(groups[g].conf, e.confidence)
	}
	best := 0
	for g := 1; g < len(groups); g++ {
		if groups[g].n > groups[best].n || groups[g].n == groups[best].n && groups[g].conf > groups[best].conf {
			best = g
		}
	}
	return groups[best].first
}

// vote returns the index among shown (in label order) that agent k votes for, given its own
// value: with probability its long_bias the longest answer (its own value among the longest
// if it is there); else with probability its herding the leader; else the first answer that
// says what it says (the leader when none does).
func (p *Population) vote(q Question, k int, own string, shown []entry) int {
	a := p.Agents[k]
	first := func(keep func(entry) bool) int {
		for i, e := range shown {
			if keep(e) {
				return i
			}
		}
		return -1
	}
	if p.uniform(q.ID, a.ID, "long") < a.LongBias {
		longest := 0
		for _, e := range shown {
			longest = max(longest, e.chars)
		}
		if i := first(func(e entry) bool { return e.chars == longest && e.value == own }); i >= 0 {
			return i
		}
		return first(func(e entry) bool { return e.chars == longest })
	}
	if p.uniform(q.ID, a.ID, "follow") < a.Herding {
		return leader(shown)
	}
	if i := first(func(e entry) bool { return e.value == own }); i >= 0 {
		return i
	}
	return leader(shown)
}
