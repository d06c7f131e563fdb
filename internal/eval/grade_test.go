package eval

import (
	"regexp"
	"strings"
	"testing"
)

func TestExtractNumber(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"42", 42, true},
		{"The answer is 42.", 42, true},
		{"6 x 7 = 42", 42, true},
		{"It costs $1,234.50 in all.", 1234.5, true},
		{"1,234,567 people", 1234567, true},
		{"a list: 1,23", 23, true}, // not a thousands group
		{"12345,678", 678, true},   // neither
		{"about 50% of them", 50, true},
		{"3/4 of the cake", 0.75, true},
		{"the ratio 1 / 2", 2, true}, // spaced: two numbers
		{"it fell to -5 degrees", -5, true},
		{"it fell to −5 degrees", -5, true}, // U+2212
		{"pages 3-5", 5, true},              // a range, not minus five
		{"0.5", 0.5, true},
		{"just .5 more", 0.5, true},
		{"agent1 and H2O and v2.1", 0, false}, // digits glued to letters
		{"no number here", 0, false},
		{"", 0, false},
		// The marks win over the last number.
		{`so \boxed{42}. Check: 6 * 7 = 42, 7 * 6 = 42, done in 3 steps`, 42, true},
		{`\boxed{\frac{1}{2}} hmm 9`, 2, true},
		{"Natalia sold 48/2 = 24 clips in May.\n#### 72\nextra 5", 72, true},
		{"The answer is 42 (from 6 x 7).", 42, true},
		{"Answer: $18 because 2 * 9 = 18 and 9 is the count", 18, true},
		{"To answer this, 5 + 6 = 11", 11, true}, // a bare "answer" is no mark
		{"Final answer = 3.5\nthen 100 more words and 7", 3.5, true},
		{"The answer is: 1,000.", 1000, true},
		{"answer is pending. 12", 12, true}, // no number on the mark's line: the last one
	}
	for _, tt := range tests {
		got, ok := ExtractNumber(tt.in)
		if ok != tt.ok || got != tt.want {
			t.Errorf("ExtractNumber(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestExtractChoice(t *testing.T) {
	four := []string{"Venus", "Mercury", "Mars", "Earth"}
	tests := []struct {
		in      string
		choices []string
		want    string
	}{
		{"Answer: C", nil, "C"},
		{"The answer is (B).", nil, "B"},
		{"The correct answer is D because ...", nil, "D"},
		{"final answer: **C**", nil, "C"},
		{"After weighing them, the answer is option A.", nil, "A"},
		{"Answer:\n\nJ", nil, "J"},
		{`So we get \boxed{B}.`, nil, "B"},
		{`\boxed{\text{C}}`, nil, "C"},
		{"I pick **D**.", nil, "D"},
		{"**B.** Mercury is closest to the Sun.", nil, "B"},
		{"(A) is wrong, (C) is right.", nil, "C"}, // the last in parentheses
		{"C", nil, "C"},
		{"I think C is right.", nil, "C"},     // "I" is a word
		{"A good guess would be B", nil, "B"}, // "A" is a word
		{"I'm sure: B", nil, "B"},             // so is "I'm"
		{"Probably B, as I said", nil, "B"},   // the last lone capital is a word
		{"My pick is C. A bold claim, I know.", nil, "C"},
		{"It is D, I'm sure", nil, "D"},
		{"the answer is a bit longer than that", nil, ""}, // lower case is no letter
		{"Mercury", four, "B"},                            // a choice's text
		{"mercury.", four, "B"},
		{"Answer: F", four, ""}, // beyond the four choices
		{"Answer: F; no wait, Answer: B", four, "B"},
		{"None of them", four, ""},
		{"Answers vary; I'd go with (C)", nil, "C"},
		{"The answer is Clearly the second one", nil, ""}, // not a lone C
	}
	for _, tt := range tests {
		got, ok := ExtractChoice(tt.in, tt.choices)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("ExtractChoice(%q, %v) = %q, %v; want %q", tt.in, tt.choices, got, ok, tt.want)
		}
	}
}

func TestItemCorrect(t *testing.T) {
	item := func(g Grader, answers ...string) Item {
		return Item{Grader: g, Answers: answers, Tolerance: DefaultTolerance}
	}
	tests := []struct {
		name   string
		it     Item
		answer string
		want   bool
	}{
		{"exact trims", item(GraderExact, "Paris"), "  Paris\n", true},
		{"exact counts case", item(GraderExact, "Paris"), "paris", false},
		{"exact is not contains", item(GraderExact, "Paris"), "Paris, France", false},
		{"exact any answer", item(GraderExact, "Paris", "Paris, France"), "Paris, France", true},
		{"numeric equal", item(GraderNumeric, "72"), "She sold 72 clips.", true},
		{"numeric expected with working", item(GraderNumeric, "48/2 = 24, 48+24 = 72\n#### 72"), "72", true},
		{"numeric off by one", item(GraderNumeric, "72"), "71", false},
		{"numeric no number", item(GraderNumeric, "72"), "seventy-two", false},
		{"numeric commas", item(GraderNumeric, "1234"), "1,234", true},
		{"numeric percent", item(GraderNumeric, "50%"), "50", true},
		{"numeric fraction", item(GraderNumeric, "0.75"), "3/4", true},
		{"numeric tolerance", Item{Grader: GraderNumeric, Answers: []string{"3.14159"}, Tolerance: 0.01}, "about 3.14", true},
		{"numeric outside tolerance", Item{Grader: GraderNumeric, Answers: []string{"3.14159"}, Tolerance: 0.001}, "about 3.14", false},
		{"numeric default tolerance is tight", item(GraderNumeric, "0.333"), "1/3", false},
		{"regex matches", Item{Grader: GraderRegex, Pattern: regexp.MustCompile(`\bAu\b`)}, "Gold is Au.", true},
		{"regex word", Item{Grader: GraderRegex, Pattern: regexp.MustCompile(`\bAu\b`)}, "because", false},
		{"choice letter", Item{Grader: GraderChoice, Answers: []string{"C"}}, "The answer is (C)", true},
		{"choice other", Item{Grader: GraderChoice, Answers: []string{"C"}}, "The answer is (B)", false},
		{"contains case", item(GraderContains, "Blue Whale"), "It is the blue whale.", true},
		{"contains spacing", item(GraderContains, "blue whale"), "the blue\n  whale", true},
		{"contains missing", item(GraderContains, "blue whale"), "the whale", false},
	}
	for _, tt := range tests {
		if got := tt.it.Correct(tt.answer); got != tt.want {
			t.Errorf("%s: Correct(%q) = %v, want %v", tt.name, tt.answer, got, tt.want)
		}
	}
}

func TestItemNormal(t *testing.T) {
	tests := []struct {
		g      Grader
		a, b   string
		agrees bool
	}{
		{GraderNumeric, "The answer is 42.", "42", true},
		{GraderNumeric, "1,000", "1000.0", true},
		{GraderNumeric, "41", "42", false},
		{GraderChoice, "Answer: C", "(C)", true},
		{GraderChoice, "Answer: C", "Answer: D", false},
		{GraderExact, " Paris ", "Paris", true},
		{GraderExact, "Paris", "paris", false},
		{GraderContains, "The Blue Whale.", "the blue  whale", true},
		{GraderNumeric, "no number", "none either", false}, // unreadable answers agree with nothing
	}
	for _, tt := range tests {
		it := Item{Grader: tt.g}
		na, nb := it.Normal(tt.a), it.Normal(tt.b)
		if got := na != "" && na == nb; got != tt.agrees {
			t.Errorf("%s: Normal(%q) = %q, Normal(%q) = %q; agree = %v, want %v", tt.g, tt.a, na, tt.b, nb, got, tt.agrees)
		}
	}
}

func TestMajority(t *testing.T) {
	num := Item{Grader: GraderNumeric, Answers: []string{"42"}, Tolerance: DefaultTolerance}
	tests := []struct {
		name           string
		answers        []string
		correct, agree bool
	}{
		{"two of three right", []string{"42", "41", "The answer is 42"}, true, false},
		{"two of three wrong", []string{"42", "41", "41.0"}, false, false},
		{"three-way tie goes to the first agent", []string{"42", "41", "40"}, true, false},
		{"tie, first agent wrong", []string{"41", "42", "40"}, false, false},
		{"two groups of two, the first agent's wins", []string{"41", "42", "42", "41"}, false, false},
		{"all agree", []string{"42", "42.0", "forty-two is 42"}, true, true},
		{"an agent without an answer", []string{"42", "", "42"}, true, false},
		{"an unreadable answer joins no group", []string{"no idea", "41", "42"}, false, false},
		{"nobody answered", []string{"", ""}, false, false},
	}
	for _, tt := range tests {
		c, a := majority(num, tt.answers)
		if c != tt.correct || a != tt.agree {
			t.Errorf("%s: majority(%q) = correct %v, agree %v; want %v, %v", tt.name, strings.Join(tt.answers, " | "), c, a, tt.correct, tt.agree)
		}
	}
}
