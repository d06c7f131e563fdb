package eval

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLoad(t *testing.T) {
	data := `{"id": "q1", "question": "What is 6 x 7?", "answer": 42, "grader": "numeric", "tolerance": 0.5}

{"question": "Which planet has the shortest year?", "choices": ["Venus", "Mercury", "Mars"], "answer": "Mercury", "subject": "astronomy"}
{"id": 7, "question": "Name a primary colour.", "answers": ["red", "blue", "yellow"], "grader": "contains", "level": 1}
{"id": "q4", "question": "Gold's symbol?", "grader": "regex", "pattern": "\\bAu\\b"}
{"id": "q5", "question": "Say hi", "answer": "hi"}
`
	items, warnings, err := Load(strings.NewReader(data), "set.jsonl", Defaults{})
	if err != nil {
		t.Fatal(err)
	}
	type brief struct {
		ID, Prompt string
		Line       int
		Answers    []string
		Grader     Grader
		Tolerance  float64
		Pattern    string
	}
	var got []brief
	for _, it := range items {
		b := brief{ID: it.ID, Prompt: it.Prompt, Line: it.Line, Answers: it.Answers, Grader: it.Grader, Tolerance: it.Tolerance}
		if it.Pattern != nil {
			b.Pattern = it.Pattern.String()
		}
		got = append(got, b)
	}
	want := []brief{
		{ID: "q1", Prompt: "What is 6 x 7?", Line: 1, Answers: []string{"42"}, Grader: GraderNumeric, Tolerance: 0.5},
		{ID: "line3", Prompt: "Which planet has the shortest year?\n\nA. Venus\nB. Mercury\nC. Mars", Line: 3, Answers: []string{"B"}, Grader: GraderChoice},
		{ID: "7", Prompt: "Name a primary colour.", Line: 4, Answers: []string{"red", "blue", "yellow"}, Grader: GraderContains},
		{ID: "q4", Prompt: "Gold's symbol?", Line: 5, Grader: GraderRegex, Pattern: `\bAu\b`},
		{ID: "q5", Prompt: "Say hi", Line: 6, Answers: []string{"hi"}, Grader: GraderExact},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("items (-want +got):\n%s", d)
	}
	wantWarn := []string{
		`set.jsonl: key "level" is not a dataset key and is ignored (1 lines); the keys are id, question, answer, answers, grader, choices, tolerance, pattern`,
		`set.jsonl: key "subject" is not a dataset key and is ignored (1 lines); the keys are id, question, answer, answers, grader, choices, tolerance, pattern`,
	}
	if d := cmp.Diff(wantWarn, warnings); d != "" {
		t.Errorf("warnings (-want +got):\n%s", d)
	}
}

func TestLoad_Defaults(t *testing.T) {
	data := `{"id": "a", "question": "q", "answer": "1/2"}
{"id": "b", "question": "q", "answer": "x", "grader": "exact"}
{"id": "c", "question": "q", "grader": "regex"}
`
	items, _, err := Load(strings.NewReader(data), "d", Defaults{Grader: GraderNumeric, Tolerance: 0.1, Pattern: "x+"})
	if err != nil {
		t.Fatal(err)
	}
	if items[0].Grader != GraderNumeric || items[0].Tolerance != 0.1 {
		t.Errorf("a: grader %s tolerance %g, want numeric 0.1", items[0].Grader, items[0].Tolerance)
	}
	if items[1].Grader != GraderExact {
		t.Errorf("b: grader %s, want its own exact", items[1].Grader)
	}
	if items[2].Pattern == nil || items[2].Pattern.String() != "x+" {
		t.Errorf("c: pattern %v, want --pattern's x+", items[2].Pattern)
	}
	limited, _, err := Load(strings.NewReader(data), "d", Defaults{Grader: GraderNumeric, Pattern: "x", Limit: 2})
	if err != nil || len(limited) != 2 {
		t.Errorf("Limit 2: %d items, %v; want 2", len(limited), err)
	}
}

func TestLoad_BadLines(t *testing.T) {
	data := strings.Join([]string{
		`{"id": "ok", "question": "q", "answer": "a"}`,
		`{"id": "q2", "question": "q", "answer": "a"`,
		`["not", "an", "object"]`,
		`{"id": "q4", "answer": "a"}`,
		`{"id": "q5", "question": "q"}`,
		`{"id": "q6", "question": "q", "answer": "a", "grader": "fuzzy"}`,
		`{"id": "q7", "question": "q", "answer": "forty", "grader": "numeric"}`,
		`{"id": "q8", "question": "q", "answer": "E", "choices": ["a", "b", "c", "d"]}`,
		`{"id": "q9", "question": "q", "grader": "regex", "pattern": "("}`,
		`{"id": "q10", "question": "q", "grader": "regex"}`,
		`{"id": "ok", "question": "q", "answer": "a"}`,
		`{"id": "q12", "question": "q", "answer": "a", "answers": ["b"]}`,
		`{"id": "q13", "question": "q", "answer": "a", "tolerance": 1}`,
		`{"id": "q14", "question": "q", "answer": "a", "choices": ["only one"]}`,
		`{"id": "q15", "question": "q", "answer": {"x": 1}}`,
		`{"id": "", "question": "q", "answer": "a"}`,
		`{"id": "q17", "question": "q", "answer": "Z"}`,
		`{"id": "q18", "question": "q", "answer": "3", "grader": "numeric", "tolerance": -1}`,
	}, "\n")
	_, _, err := Load(strings.NewReader(data), "bad.jsonl", Defaults{})
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("err = %v, want a *LoadError", err)
	}
	wantLines := []string{"2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16", "18"}
	var gotLines []string
	for _, l := range le.Lines {
		gotLines = append(gotLines, strings.Split(strings.TrimPrefix(l, "bad.jsonl:"), ":")[0])
	}
	if d := cmp.Diff(wantLines, gotLines); d != "" {
		t.Errorf("bad lines (-want +got):\n%s\nmessages:\n%s", d, err)
	}
	for _, want := range []string{
		"bad.jsonl:4: item q4 has no question",
		"bad.jsonl:5: item q5 has no answer",
		`bad.jsonl:6: unknown grader "fuzzy" (want one of exact, numeric, regex, choice, contains)`,
		`bad.jsonl:7: answer "forty" holds no number`,
		`bad.jsonl:8: answer "E" is neither a letter A-D nor the text of one of the choices`,
		`bad.jsonl:10: item q10 uses the regex grader without a pattern`,
		`bad.jsonl:11: id "ok" is already used on line 1`,
		`bad.jsonl:13: tolerance goes with the numeric grader`,
		`bad.jsonl:14: choices must list 2 to 10 options`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("errors lack %q:\n%s", want, err)
		}
	}
	// Line 17's "Z" is a fine exact answer.
}

func TestLoad_Caps(t *testing.T) {
	long := `{"question": "` + strings.Repeat("x", MaxLineBytes) + `", "answer": "a"}`
	_, _, err := Load(strings.NewReader(`{"question": "q", "answer": "a"}`+"\n"+long+"\n"), "big.jsonl", Defaults{})
	if err == nil || !strings.Contains(err.Error(), "big.jsonl:2: the line is longer than 1048576 bytes") {
		t.Errorf("long line: err = %v", err)
	}

	var b strings.Builder
	for k := range 11 {
		fmt.Fprintf(&b, "{\"question\": \"q%d\", \"answer\": \"a\"}\n", k)
	}
	_, _, err = Load(strings.NewReader(b.String()), "many.jsonl", Defaults{MaxItems: 10})
	if err == nil || !strings.Contains(err.Error(), "many.jsonl: more than 10 items; run a part of it with --limit N") {
		t.Errorf("too many items: err = %v", err)
	}
	if items, _, err := Load(strings.NewReader(b.String()), "many.jsonl", Defaults{MaxItems: 11}); err != nil || len(items) != 11 {
		t.Errorf("11 items with a cap of 11: %d, %v", len(items), err)
	}
	items, _, err := Load(strings.NewReader(b.String()), "many.jsonl", Defaults{Limit: 3, MaxItems: 10})
	if err != nil || len(items) != 3 {
		t.Errorf("--limit 3 of a big file: %d items, %v", len(items), err)
	}

	_, _, err = Load(strings.NewReader("\n\n"), "empty.jsonl", Defaults{})
	if err == nil || !strings.Contains(err.Error(), "empty.jsonl holds no items") {
		t.Errorf("empty: err = %v", err)
	}
	var le *LoadError
	many := strings.Repeat("{\n", 30)
	if _, _, err = Load(strings.NewReader(many), "junk.jsonl", Defaults{}); !errors.As(err, &le) || len(le.Lines) != maxErrors || !le.More {
		t.Errorf("30 bad lines: err = %v, want the first %d and a note", err, maxErrors)
	}
}
