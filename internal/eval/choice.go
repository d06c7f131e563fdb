package eval

import (
	"massgen/internal/lazy"
	"regexp"
	"strings"
	"sync"
)

// letters are the choice letters a multiple-choice item may use.
const letters = "ABCDEFGHIJ"

// The ways an answer names its choice, most explicit first; the letter itself is always a
// capital, so "the answer is a bit longer" chooses nothing.
var choiceRes = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		// "Answer: C", "The answer is (C)", "final answer: **C**", "answer is option C".
		regexp.MustCompile(`(?i:\banswer)(?:\s+(?i:is))?\s*[:=]?\s*(?:\*\*)?\s*(?:(?i:option|choice)\s+)?[\(\[]?\s*\b([A-J])\b`),
		// \boxed{C}, \boxed{\text{C}}.
		regexp.MustCompile(`\\boxed\{\s*(?:\\text(?:bf)?\{)?\s*\(?([A-J])\b`),
		// **C**, **(C)**, **C.** or **C)** starting a bold phrase.
		regexp.MustCompile(`\*\*\s*\(?([A-J])(?:\)|\.|:|\*\*)`),
		// (C).
		regexp.MustCompile(`\(([A-J])\)`),
	}
})

// standaloneRe finds a capital letter standing alone, the last resort.
var standaloneRe = lazy.Regexp(`\b([A-J])\b`)

// ExtractChoice returns the letter an answer chooses. It looks, in order, for an answer
// phrase ("Answer: C", "The answer is (C)"), \boxed{C}, a bold letter (**C**), a letter in
// parentheses ((C)), the whole answer being one choice's text, and last a capital letter
// standing alone, the last such letter in each case. A and I followed by a lower-case word
// ("A good point", "I think") are words, not choices. With choices given only their letters
// count (A-D for four choices).
func ExtractChoice(answer string, choices []string) (string, bool) {
	valid := letters
	if len(choices) > 0 {
		valid = letters[:len(choices)]
	}
	for _, re := range choiceRes() {
		if l, ok := lastLetter(re, answer, valid, false); ok {
			return l, true
		}
	}
	for k, c := range choices {
		if normText(c) == normText(answer) {
			return letters[k : k+1], true
		}
	}
	return lastLetter(standaloneRe(), answer, valid, true)
}

// lastLetter is the last match of re whose letter is valid; word skips A and I used as words.
func lastLetter(re *regexp.Regexp, s, valid string, word bool) (string, bool) {
	m := re.FindAllStringSubmatchIndex(s, -1)
	for k := len(m) - 1; k >= 0; k-- {
		from, to := m[k][2], m[k][3]
		l := s[from:to]
		if !strings.Contains(valid, l) {
			continue
		}
		if word && isWordUse(s, l, to) {
			continue
		}
		return l, true
	}
	return "", false
}

// isWordUse reports whether the letter l ending at s[to] is the English word "A" or "I": a
// lower-case word or an apostrophe (I'm) follows it.
func isWordUse(s, l string, to int) bool {
	if l != "A" && l != "I" {
		return false
	}
	rest := s[to:]
	if strings.HasPrefix(rest, "'") || strings.HasPrefix(rest, "’") {
		return true
	}
	rest = strings.TrimLeft(rest, " ")
	return len(rest) < len(s[to:]) && rest != "" && rest[0] >= 'a' && rest[0] <= 'z'
}
