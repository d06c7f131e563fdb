package simulated

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"unicode"
)

// population builds a population from a list of agents written as population YAML.
func population(t *testing.T, agents string) *Population {
	t.Helper()
	p, err := Parse("pop.yaml", []byte("agents:\n"+agents))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// questions are n four-choice questions, A right.
func questions(n int) []Question {
	qs := make([]Question, n)
	for k := range qs {
		qs[k] = Question{ID: fmt.Sprintf("q%d", k), Correct: "A", Wrong: []string{"B", "C", "D"}}
	}
	return qs
}

// plainMajority is the majority of answers by value, ties going to the first agent's group.
func plainMajority(as []Answer) bool {
	entries := make([]entry, len(as))
	for k, a := range as {
		entries[k] = entry{value: a.Value, confidence: -1}
	}
	return as[leader(entries)].Correct
}

// within fails unless got is within tol of want.
func within(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.4f, want %.4f ± %.4f", what, got, want, tol)
	}
}

// Three independent agents right 70% of the time, wrong ones agreeing on the distractor: the
// majority is right when two or three are, 0.7^3 + 3 x 0.7^2 x 0.3 = 0.784. Over 20,000 items a
// rate's standard deviation is at most sqrt(0.25/20000) = 0.0035; the tolerance is 4 of them.
func TestAnswers_MajorityOfThreeIndependent(t *testing.T) {
	p := population(t, "  - {id: a, accuracy: 0.7}\n  - {id: b, accuracy: 0.7}\n  - {id: c, accuracy: 0.7}\n")
	const n = 20000
	right := make([]int, 3)
	majority := 0
	for _, q := range questions(n) {
		as := p.Answers(q)
		for k, a := range as {
			if a.Correct {
				right[k]++
			}
			if a.Copied {
				t.Fatalf("%s: agent %d copied without herding", q.ID, k)
			}
		}
		if plainMajority(as) {
			majority++
		}
	}
	for k := range right {
		within(t, fmt.Sprintf("agent %d accuracy", k), float64(right[k])/n, 0.7, 0.014)
	}
	within(t, "majority accuracy", float64(majority)/n, 0.784, 0.014)
}

// A calibrated agent's stated confidence is how often it is right when it states it; an
// overconfident one always states 0.95 at the same accuracy; one without confidence states none.
func TestAlone_Confidence(t *testing.T) {
	p := population(t, "  - {id: cal, accuracy: 0.7}\n  - {id: over, accuracy: 0.7, confidence: overconfident}\n  - {id: mute, accuracy: 0.7, confidence: none}\n")
	const n = 20000
	type tally struct{ n, right int }
	byConf := map[float64]*tally{}
	overRight := 0
	for _, q := range questions(n) {
		a := p.Alone(q, 0, 0)
		tl := byConf[a.Confidence]
		if tl == nil {
			tl = &tally{}
			byConf[a.Confidence] = tl
		}
		tl.n++
		if a.Correct {
			tl.right++
		}
		o := p.Alone(q, 1, 0)
		if o.Confidence != OverconfidentValue {
			t.Fatalf("overconfident agent stated %v", o.Confidence)
		}
		if o.Correct {
			overRight++
		}
		if m := p.Alone(q, 2, 0); m.Confidence != -1 || strings.Contains(m.Text(), "confidence") {
			t.Fatalf("an agent without confidence stated %v: %q", m.Confidence, m.Text())
		}
	}
	if len(byConf) != 2 {
		t.Fatalf("calibrated confidences: %v, want the two levels 0.85 and 0.35", byConf)
	}
	for c, tl := range byConf {
		// The rarer level has about 6,000 items: a standard deviation under 0.0065.
		within(t, fmt.Sprintf("accuracy when stating %.2f", c), float64(tl.right)/float64(tl.n), c, 0.026)
	}
	within(t, "overconfident accuracy", float64(overRight)/n, 0.7, 0.014)
}

// An agent's samples share what it knows about an item (whether it is sure), so its own
// majority gains less than a majority of independent agents of the same accuracy.
func TestAlone_SamplesShareKnowledge(t *testing.T) {
	p := population(t, "  - {id: a, accuracy: 0.7}\n  - {id: b, accuracy: 0.7}\n  - {id: c, accuracy: 0.7}\n")
	const n = 20000
	self, team := 0, 0
	for _, q := range questions(n) {
		if plainMajority([]Answer{p.Alone(q, 0, 0), p.Alone(q, 0, 1), p.Alone(q, 0, 2)}) {
			self++
		}
		if plainMajority(p.Answers(q)) {
			team++
		}
	}
	// Sure (0.7): right 0.85, majority of 3 right 0.939; unsure: 0.35, 0.282. In all 0.742.
	within(t, "self-consistency of 3", float64(self)/n, 0.742, 0.014)
	if self >= team {
		t.Errorf("three samples of one agent (%d) beat three independent agents (%d)", self, team)
	}
}

// Agents that always herd copy the first agent: every answer is its answer.
func TestAnswers_HerdingCopiesTheLeader(t *testing.T) {
	p := population(t, "  - {id: a, accuracy: 0.5}\n  - {id: b, accuracy: 0.9, herding: 1}\n  - {id: c, accuracy: 0.9, herding: 1, confidence: overconfident}\n")
	for _, q := range questions(500) {
		as := p.Answers(q)
		for k := 1; k < 3; k++ {
			if as[k].Value != as[0].Value || !as[k].Copied {
				t.Fatalf("%s: agent %d said %s, not the leader's %s", q.ID, k, as[k].Value, as[0].Value)
			}
		}
		if as[1].Confidence != as[0].Confidence || as[2].Confidence != OverconfidentValue {
			t.Fatalf("%s: copies state %v and %v, want the leader's %v and the overconfident 0.95", q.ID, as[1].Confidence, as[2].Confidence, as[0].Confidence)
		}
	}
}

// The leader is the value most give, then the most confident, then the earliest.
func TestLeader(t *testing.T) {
	tests := []struct {
		name string
		es   []entry
		want int
	}{
		{"most give it", []entry{{value: "B", confidence: 0.9}, {value: "A"}, {value: "A"}}, 1},
		{"tie: most confident", []entry{{value: "B", confidence: 0.4}, {value: "A", confidence: 0.95}}, 1},
		{"tie: earliest", []entry{{value: "B", confidence: 0.5}, {value: "A", confidence: 0.5}}, 0},
		{"no confidence", []entry{{value: "B", confidence: -1}, {value: "A", confidence: -1}}, 0},
	}
	for _, tt := range tests {
		if got := leader(tt.es); got != tt.want {
			t.Errorf("%s: leader = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// The same seed gives the same answers; another seed other answers.
func TestAnswers_Seeded(t *testing.T) {
	agents := "  - {id: a, accuracy: 0.6, herding: 0.5}\n  - {id: b, accuracy: 0.6, herding: 0.5}\n"
	p1, p2, p3 := population(t, agents), population(t, agents), population(t, agents)
	p3.Seed = 2
	differ := 0
	for _, q := range questions(200) {
		a1, a2, a3 := p1.Answers(q), p2.Answers(q), p3.Answers(q)
		for k := range a1 {
			if a1[k].Text() != a2[k].Text() {
				t.Fatalf("%s: agent %d answered %q, then %q with the same seed", q.ID, k, a1[k].Text(), a2[k].Text())
			}
			if a1[k].Value != a3[k].Value {
				differ++
			}
		}
	}
	if differ == 0 {
		t.Error("seed 2 gave the answers of seed 1")
	}
}

// Wrong answers go to the main distractor in the share the population says.
func TestAlone_Distractor(t *testing.T) {
	p, err := Parse("pop.yaml", []byte("distractor: 0.5\nagents:\n  - {id: a, accuracy: 0}\n"))
	if err != nil {
		t.Fatal(err)
	}
	main := 0
	const n = 4000
	for _, q := range questions(n) {
		a := p.Alone(q, 0, 0)
		if a.Correct {
			t.Fatalf("%s: an agent of accuracy 0 was right", q.ID)
		}
		if a.Value == q.Wrong[pick(len(q.Wrong), p.uniform(q.ID, "distractor"))] {
			main++
		}
	}
	within(t, "share of the main distractor", float64(main)/n, 0.5, 0.04)
}

// An answer reads back as written, is as long as its length says, and its working holds
// nothing a grader could take for a choice or a number.
func TestAnswer_Text(t *testing.T) {
	for _, a := range []Answer{
		{Value: "C", Confidence: 0.85, Length: Short},
		{Value: "391", Confidence: -1, Length: Long, author: 2},
		{Value: "-3.5", Confidence: 0.95, Length: Short, author: 1},
	} {
		text := a.Text()
		value, conf, ok := Read(text)
		if !ok || value != a.Value || conf != a.Confidence {
			t.Errorf("Read(%q) = %q, %v, %v; want %q, %v", text, value, conf, ok, a.Value, a.Confidence)
		}
		want := shortChars
		if a.Length == Long {
			want = longChars
		}
		if len(text) != want {
			t.Errorf("%s answer is %d characters, want %d", a.Length, len(text), want)
		}
		work, _, _ := strings.Cut(text, "\nThe answer is")
		if strings.ContainsFunc(work, func(r rune) bool { return unicode.IsDigit(r) || unicode.IsUpper(r) }) || strings.Contains(work, "answer") {
			t.Errorf("the working holds a digit, a capital or the word answer: %q", work)
		}
	}
	if Answer.Text(Answer{Value: "A", Confidence: -1}) == Answer.Text(Answer{Value: "A", Confidence: -1, author: 1}) {
		t.Error("two agents word the same answer alike: the engine would refuse the second")
	}
	for _, text := range []string{"no value here", "The answer is C (confidence high).", "The answer is C (confidence 7)."} {
		value, conf, ok := Read(text)
		if ok && conf != -1 {
			t.Errorf("Read(%q) = %q, %v: a confidence that is not a number from 0 to 1 must read as none", text, value, conf)
		}
	}
}
