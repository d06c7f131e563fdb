// Package eval measures a team on a dataset: it runs every item of a JSONL file through the
// team, one session per item, grades the final answer and every agent's answers, and reports
// voted accuracy against what the agents could have done alone (their first answers, a
// majority vote over them, the best any agent reached), with tokens, cost and time. Results
// are appended to a JSONL file one finished item at a time, so an interrupted run continues
// where it stopped.
package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Caps on a dataset, checked before any session starts.
const (
	// MaxLineBytes is the longest line a dataset may have.
	MaxLineBytes = 1 << 20
	// MaxItems is the most items one dataset may hold; --limit takes the first N of a bigger
	// file.
	MaxItems = 100_000
	// maxErrors is how many bad lines one load reports before it stops reading.
	maxErrors = 20
)

// Item is one question of a dataset, checked and ready to grade.
type Item struct {
	ID   string
	Line int // 1-based line in the dataset file
	// Question is the question as the dataset gives it; Prompt is what the team is asked
	// (the question with its choices, when it has some).
	Question, Prompt string
	// Answers are the accepted answers: an answer is correct when it matches any of them.
	// For the choice grader they are letters ("C"), a choice's text being turned into its
	// letter on load.
	Answers []string
	Grader  Grader
	Choices []string
	// Tolerance is the numeric grader's largest accepted difference.
	Tolerance float64
	// Pattern is the regex grader's pattern.
	Pattern *regexp.Regexp
}

// Defaults apply to the items that do not set their own: the command line's --grader,
// --pattern and --tolerance.
type Defaults struct {
	Grader    Grader // "" means exact, or choice for an item with choices
	Pattern   string
	Tolerance float64 // 0 means DefaultTolerance
	// Limit keeps the first Limit items (0: all of them, up to the cap).
	Limit int
	// MaxItems caps the items of a dataset (0: MaxItems); a bigger one is refused unless
	// Limit takes a part of it.
	MaxItems int
}

// DefaultTolerance is the numeric grader's tolerance when neither the item nor the command
// line sets one: room for float rounding, not for a wrong answer.
const DefaultTolerance = 1e-6

// line is one dataset line as written. Answers and ids may be JSON numbers (a GSM8K export
// often has "answer": 72).
type line struct {
	ID        json.RawMessage   `json:"id"`
	Question  *string           `json:"question"`
	Answer    json.RawMessage   `json:"answer"`
	Answers   []json.RawMessage `json:"answers"`
	Grader    string            `json:"grader"`
	Choices   []json.RawMessage `json:"choices"`
	Tolerance *float64          `json:"tolerance"`
	Pattern   *string           `json:"pattern"`
}

// knownKeys are the keys a line may have; any other is reported once as ignored, since public
// sets carry metadata (subject, level, ...) worth keeping in the file.
var knownKeys = []string{"id", "question", "answer", "answers", "grader", "choices", "tolerance", "pattern"}

// LoadError lists the bad lines of a dataset, each with its line number.
type LoadError struct {
	Name  string
	Lines []string // "NAME:LINE: message"
	More  bool     // reading stopped at maxErrors
}

func (e *LoadError) Error() string {
	msg := strings.Join(e.Lines, "\n")
	if e.More {
		msg += fmt.Sprintf("\n(stopped after %d bad lines)", maxErrors)
	}
	return msg
}

// Load reads a JSONL dataset: one JSON object per line, blank lines skipped. name labels the
// errors (the file's path). Every bad line is reported with its number, up to maxErrors, in a
// *LoadError; warnings list keys that were ignored.
func Load(r io.Reader, name string, d Defaults) (items []Item, warnings []string, err error) {
	if d.Grader != "" && !slices.Contains(Graders, d.Grader) {
		return nil, nil, fmt.Errorf("unknown grader %q (want one of %s)", d.Grader, graderList())
	}
	var defPattern *regexp.Regexp
	if d.Pattern != "" {
		if defPattern, err = regexp.Compile(d.Pattern); err != nil {
			return nil, nil, fmt.Errorf("the pattern %q is not a valid regular expression: %v", d.Pattern, err)
		}
	}
	if d.Tolerance < 0 {
		return nil, nil, fmt.Errorf("the tolerance must be 0 or more (got %g)", d.Tolerance)
	}
	limit := MaxItems
	if d.MaxItems > 0 {
		limit = d.MaxItems
	}
	le := &LoadError{Name: name}
	ignored := map[string]int{}
	seen := map[string]int{} // id -> line
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLineBytes)
	n := 0
	for sc.Scan() {
		n++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		if d.Limit > 0 && len(items) >= d.Limit {
			break
		}
		if len(items) >= limit {
			return nil, nil, fmt.Errorf("%s: more than %d items; run a part of it with --limit N, or split the file", name, limit)
		}
		it, keys, err := parseLine(text, n, d, defPattern)
		for _, k := range keys {
			ignored[k]++
		}
		if err == nil {
			if prev, dup := seen[it.ID]; dup {
				err = fmt.Errorf("id %q is already used on line %d: ids must be unique, the results file is keyed by them", it.ID, prev)
			} else {
				seen[it.ID] = n
			}
		}
		if err != nil {
			le.Lines = append(le.Lines, fmt.Sprintf("%s:%d: %v", name, n, err))
			if len(le.Lines) == maxErrors {
				le.More = true
				return nil, nil, le
			}
			continue
		}
		items = append(items, it)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			le.Lines = append(le.Lines, fmt.Sprintf("%s:%d: the line is longer than %d bytes", name, n+1, MaxLineBytes))
			return nil, nil, le
		}
		return nil, nil, fmt.Errorf("read %s: %w", name, err)
	}
	if len(le.Lines) > 0 {
		return nil, nil, le
	}
	if len(items) == 0 {
		return nil, nil, fmt.Errorf("%s holds no items: write one JSON object per line, such as {\"id\": \"q1\", \"question\": \"...\", \"answer\": \"42\"}", name)
	}
	keys := make([]string, 0, len(ignored))
	for k := range ignored {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		warnings = append(warnings, fmt.Sprintf("%s: key %q is not a dataset key and is ignored (%d lines); the keys are %s", name, k, ignored[k], strings.Join(knownKeys, ", ")))
	}
	return items, warnings, nil
}

// parseLine checks one line; keys are the unknown keys it holds.
func parseLine(text []byte, n int, d Defaults, defPattern *regexp.Regexp) (Item, []string, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(text, &raw); err != nil {
		return Item{}, nil, fmt.Errorf("not a JSON object: %v", err)
	}
	var keys []string
	for k := range raw {
		if !slices.Contains(knownKeys, k) {
			keys = append(keys, k)
		}
	}
	var l line
	if err := json.Unmarshal(text, &l); err != nil {
		return Item{}, keys, fmt.Errorf("bad value: %v", err)
	}
	it := Item{Line: n, ID: "line" + strconv.Itoa(n)}
	if len(l.ID) > 0 && string(l.ID) != "null" {
		id, err := scalar(l.ID)
		if err != nil || strings.TrimSpace(id) == "" {
			return it, keys, fmt.Errorf("id must be a non-empty string or a number")
		}
		it.ID = id
	}
	if l.Question == nil || strings.TrimSpace(*l.Question) == "" {
		return it, keys, fmt.Errorf("item %s has no question: add \"question\": \"...\"", it.ID)
	}
	it.Question = *l.Question
	for k, c := range l.Choices {
		s, err := scalar(c)
		if err != nil || strings.TrimSpace(s) == "" {
			return it, keys, fmt.Errorf("choices[%d] must be a non-empty string", k)
		}
		it.Choices = append(it.Choices, s)
	}
	if len(it.Choices) == 1 || len(it.Choices) > len(letters) {
		return it, keys, fmt.Errorf("choices must list 2 to %d options (got %d)", len(letters), len(it.Choices))
	}
	answers, err := answerList(l)
	if err != nil {
		return it, keys, err
	}
	it.Answers = answers

	it.Grader = Grader(strings.TrimSpace(l.Grader))
	switch {
	case it.Grader != "":
		if !slices.Contains(Graders, it.Grader) {
			return it, keys, fmt.Errorf("unknown grader %q (want one of %s)", l.Grader, graderList())
		}
	case d.Grader != "":
		it.Grader = d.Grader
	case len(it.Choices) > 0:
		it.Grader = GraderChoice
	default:
		it.Grader = GraderExact
	}
	if l.Tolerance != nil && it.Grader != GraderNumeric {
		return it, keys, fmt.Errorf("tolerance goes with the numeric grader (this item's grader is %s)", it.Grader)
	}
	if l.Pattern != nil && it.Grader != GraderRegex {
		return it, keys, fmt.Errorf("pattern goes with the regex grader (this item's grader is %s)", it.Grader)
	}
	if err := it.prepare(l, d, defPattern); err != nil {
		return it, keys, err
	}
	it.Prompt = render(it.Question, it.Choices)
	return it, keys, nil
}

// answerList reads "answer" or "answers".
func answerList(l line) ([]string, error) {
	hasOne := len(l.Answer) > 0 && string(l.Answer) != "null"
	if hasOne && len(l.Answers) > 0 {
		return nil, fmt.Errorf("give \"answer\" or \"answers\", not both")
	}
	raws := l.Answers
	if hasOne {
		raws = []json.RawMessage{l.Answer}
	}
	var out []string
	for k, r := range raws {
		s, err := scalar(r)
		if err != nil {
			if hasOne {
				return nil, fmt.Errorf("answer must be a string or a number")
			}
			return nil, fmt.Errorf("answers[%d] must be a string or a number", k)
		}
		if strings.TrimSpace(s) == "" {
			return nil, fmt.Errorf("an answer is empty")
		}
		out = append(out, s)
	}
	return out, nil
}

// prepare checks the item against its grader and puts its answers in the grader's terms.
func (it *Item) prepare(l line, d Defaults, defPattern *regexp.Regexp) error {
	if it.Grader != GraderRegex && len(it.Answers) == 0 {
		return fmt.Errorf("item %s has no answer: add \"answer\": \"...\" or \"answers\": [...]", it.ID)
	}
	switch it.Grader {
	case GraderNumeric:
		it.Tolerance = DefaultTolerance
		if d.Tolerance > 0 {
			it.Tolerance = d.Tolerance
		}
		if l.Tolerance != nil {
			if *l.Tolerance < 0 {
				return fmt.Errorf("tolerance must be 0 or more (got %g)", *l.Tolerance)
			}
			it.Tolerance = *l.Tolerance
		}
		for _, a := range it.Answers {
			if _, ok := ExtractNumber(a); !ok {
				return fmt.Errorf("answer %q holds no number, which the numeric grader needs", a)
			}
		}
	case GraderChoice:
		for k, a := range it.Answers {
			letter, err := it.choiceLetter(a)
			if err != nil {
				return err
			}
			it.Answers[k] = letter
		}
	case GraderRegex:
		switch {
		case l.Pattern != nil:
			p, err := regexp.Compile(*l.Pattern)
			if err != nil {
				return fmt.Errorf("pattern %q is not a valid regular expression: %v", *l.Pattern, err)
			}
			it.Pattern = p
		case defPattern != nil:
			it.Pattern = defPattern
		default:
			return fmt.Errorf("item %s uses the regex grader without a pattern: add \"pattern\": \"...\" or pass --pattern", it.ID)
		}
	}
	return nil
}

// choiceLetter is an expected answer of the choice grader as a letter: a letter itself (A,
// "(b)"), or the text of one of the choices.
func (it *Item) choiceLetter(a string) (string, error) {
	s := strings.Trim(strings.TrimSpace(a), "()[]. ")
	if len(s) == 1 {
		k := strings.IndexByte(letters, strings.ToUpper(s)[0])
		if k >= 0 && (len(it.Choices) == 0 || k < len(it.Choices)) {
			return letters[k : k+1], nil
		}
	}
	for k, c := range it.Choices {
		if normText(c) == normText(a) {
			return letters[k : k+1], nil
		}
	}
	if len(it.Choices) > 0 {
		return "", fmt.Errorf("answer %q is neither a letter A-%c nor the text of one of the choices", a, letters[len(it.Choices)-1])
	}
	return "", fmt.Errorf("answer %q is not a letter A-J (the choice grader; add \"choices\" to give the answer as a choice's text)", a)
}

// scalar reads a JSON string or number as a string.
func scalar(r json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(r, &s); err == nil {
		return s, nil
	}
	var num json.Number
	if err := json.Unmarshal(r, &num); err != nil {
		return "", err
	}
	return num.String(), nil
}

// render is the question the team reads: the choices follow it, one a line, as "A. text".
func render(question string, choices []string) string {
	if len(choices) == 0 {
		return question
	}
	var b strings.Builder
	b.WriteString(strings.TrimRight(question, " \n"))
	b.WriteString("\n")
	for k, c := range choices {
		fmt.Fprintf(&b, "\n%c. %s", letters[k], strings.TrimSpace(c))
	}
	return b.String()
}
