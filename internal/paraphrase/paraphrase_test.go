package paraphrase

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const q = "What is the capital of France?"

// model answers the two calls with fixed replies and counts them.
type model struct {
	write, check string
	writeErr     error
	calls        []Request
}

func (m *model) call(_ context.Context, r Request) (string, error) {
	m.calls = append(m.calls, r)
	if r.Stage == StageWrite {
		return m.write, m.writeErr
	}
	return m.check, nil
}

func verdicts(conf ...float64) string {
	var parts []string
	for k, c := range conf {
		eq := c >= 0
		parts = append(parts, fmt.Sprintf(`{"index": %d, "equivalent": %v, "confidence": %v}`, k+1, eq, max(c, 0)))
	}
	return `{"verdicts": [` + strings.Join(parts, ",") + `]}`
}

func TestWrite(t *testing.T) {
	three := "```json\n" + `{"paraphrases": ["Which city is the capital of France?", "Could you tell me the capital city of France?", "Name the French capital, please: what is it?"]}` + "\n```"
	for _, tc := range []struct {
		name     string
		s        Settings
		m        model
		want     []string // per slot: the text, or "-" for a failed slot
		calls    int
		warnings string
	}{
		{name: "all pass", s: Settings{Variants: 3, Validate: true, Threshold: 0.8}, m: model{write: three, check: verdicts(0.9, 0.95, 0.85)},
			want: []string{"Which city is the capital of France?", "Could you tell me the capital city of France?", "Name the French capital, please: what is it?"}, calls: 2},
		{name: "check refuses one", s: Settings{Variants: 3, Validate: true, Threshold: 0.8}, m: model{write: three, check: verdicts(0.9, -1, 0.85)},
			want: []string{"Which city is the capital of France?", "-", "Name the French capital, please: what is it?"}, calls: 2, warnings: "2 of 3"},
		{name: "check unsure", s: Settings{Variants: 3, Validate: true, Threshold: 0.9}, m: model{write: three, check: verdicts(0.95, 0.5, 0.91)},
			want: []string{"Which city is the capital of France?", "-", "Name the French capital, please: what is it?"}, calls: 2},
		{name: "check junk", s: Settings{Variants: 3, Validate: true, Threshold: 0.8}, m: model{write: three, check: "sure, all fine"},
			want: []string{"-", "-", "-"}, calls: 2, warnings: "0 of 3"},
		{name: "no check", s: Settings{Variants: 2}, m: model{write: three}, want: []string{"Which city is the capital of France?", "Could you tell me the capital city of France?"}, calls: 1},
		{name: "junk reply", s: Settings{Variants: 2, Validate: true}, m: model{write: "I cannot help with that."}, calls: 1, warnings: "could not be read"},
		{name: "call fails", s: Settings{Variants: 2, Validate: true}, m: model{writeErr: errors.New("429 too many requests")}, calls: 1, warnings: "429"},
		{name: "copies and fragments", s: Settings{Variants: 4}, m: model{write: `{"paraphrases": ["what is the capital of  france?", "Paris?", "Which city is the capital of France?", "Which city is the capital of France?"]}`},
			want: []string{"-", "-", "Which city is the capital of France?", "-"}, calls: 1},
		{name: "drift", s: Settings{Variants: 2}, m: model{write: `{"paraphrases": ["Tell me a long story about dragons, knights, castles, and the politics of medieval kingdoms in great detail please.", 7]}`},
			want: []string{"-", "-"}, calls: 1},
		{name: "fewer than asked", s: Settings{Variants: 3}, m: model{write: `{"paraphrases": ["Which city is the capital of France?"]}`},
			want: []string{"Which city is the capital of France?", "-", "-"}, calls: 1},
		{name: "zero variants", s: Settings{Variants: 0}, calls: 0, warnings: "num_variants 0"},
		{name: "unknown strategy", s: Settings{Variants: 2, Strategy: "wild"}, calls: 0, warnings: `strategy "wild"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Write(t.Context(), tc.s, q, tc.m.call)
			if err != nil {
				t.Fatal(err)
			}
			if len(tc.m.calls) != tc.calls {
				t.Errorf("%d calls, want %d", len(tc.m.calls), tc.calls)
			}
			if tc.warnings != "" && !strings.Contains(out.Warning, tc.warnings) {
				t.Errorf("warning %q, want it to contain %q", out.Warning, tc.warnings)
			}
			if len(tc.want) == 0 && len(out.Slots) > 0 && out.Passed() > 0 {
				t.Errorf("slots %+v, want none passed", out.Slots)
			}
			for k, w := range tc.want {
				if k >= len(out.Slots) {
					t.Fatalf("%d slots, want %d", len(out.Slots), len(tc.want))
				}
				got := out.Slots[k]
				if w == "-" {
					if got.OK() || got.Why == "" {
						t.Errorf("slot %d = %+v, want a failure with its reason", k, got)
					}
				} else if got.Text != w || !got.OK() {
					t.Errorf("slot %d = %+v, want %q", k, got, w)
				}
			}
			// Agent i reads slot i mod N; a failed slot's agent reads the original.
			for i := range 2 * len(out.Slots) {
				text, _ := out.For(i)
				if s := out.Slots[i%len(out.Slots)]; text != s.Text || (!s.OK() && text != "") {
					t.Errorf("For(%d) = %q, slot %+v", i, text, s)
				}
			}
		})
	}
}

func TestWrite_Temperature(t *testing.T) {
	for _, tc := range []struct {
		strategy string
		rng      []float64
		want     string
	}{{"diverse", []float64{0.3, 0.9}, "0.9"}, {"conservative", []float64{0.3, 0.9}, "0.3"}, {"balanced", []float64{0.3, 0.9}, "0.6"}, {"diverse", nil, "none"}} {
		m := model{write: `{"paraphrases": ["Which city is the capital of France?"]}`, check: verdicts(0.9)}
		if _, err := Write(t.Context(), Settings{Variants: 1, Strategy: tc.strategy, TemperatureRange: tc.rng, Validate: true}, q, m.call); err != nil {
			t.Fatal(err)
		}
		got := "none"
		if tp := m.calls[0].Temperature; tp != nil {
			got = fmt.Sprintf("%.1f", *tp)
		}
		if got != tc.want {
			t.Errorf("%s %v: temperature %s, want %s", tc.strategy, tc.rng, got, tc.want)
		}
		if tp := m.calls[1].Temperature; tp == nil || *tp != 0 {
			t.Errorf("the check call's temperature is %v, want 0", tp)
		}
	}
}

func TestWrite_LongQuestionIsNotSent(t *testing.T) {
	var m model
	out, err := Write(t.Context(), Settings{Variants: 2}, strings.Repeat("word ", MaxQuestionChars), m.call)
	if err != nil || len(m.calls) != 0 || out.Passed() != 0 || !strings.Contains(out.Warning, "over the") {
		t.Errorf("out %+v err %v calls %d: want no call and a warning", out, err, len(m.calls))
	}
}

func TestWrite_Cancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	m := model{writeErr: context.Canceled}
	if _, err := Write(ctx, Settings{Variants: 2}, q, m.call); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestCache(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	c := Cache{Dir: dir}
	s := Settings{Variants: 2, Strategy: "balanced"}
	key := Key(s, q, "openai/gpt-5-nano@")
	good := Outcome{Slots: []Slot{{Text: "Which city is the capital of France?"}, {Text: "Name the capital of France."}}}
	if _, ok := c.Get(key); ok {
		t.Fatal("hit on an empty cache")
	}
	if err := c.Put(key, Outcome{Slots: []Slot{{Text: "x"}, {Why: "failed"}}}); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Get(key); ok {
		t.Fatal("an outcome with a failed slot was kept: it should be tried again")
	}
	if err := c.Put(key, good); err != nil {
		t.Fatal(err)
	}
	got, ok := c.Get(key)
	if !ok || len(got.Slots) != 2 || got.Slots[1].Text != good.Slots[1].Text {
		t.Fatalf("Get = %+v %v", got, ok)
	}
	st, err := os.Stat(filepath.Join(dir, key+".json"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("cache file %v %v, want mode 0600", st, err)
	}
	// Another strategy, model or question is another key.
	for _, other := range []string{Key(Settings{Variants: 2, Strategy: "diverse"}, q, "openai/gpt-5-nano@"), Key(s, q, "claude/x@"), Key(s, q+" ", "openai/gpt-5-nano@x")} {
		if other == key {
			t.Error("two different requests share a key")
		}
	}
	// A damaged or oversized file is a miss, never an error.
	_ = os.WriteFile(filepath.Join(dir, key+".json"), []byte("{not json"), 0o600)
	if _, ok := c.Get(key); ok {
		t.Error("a damaged file was a hit")
	}
	_ = os.WriteFile(filepath.Join(dir, key+".json"), []byte(strings.Repeat(" ", maxCacheFile+1)), 0o600)
	if _, ok := c.Get(key); ok {
		t.Error("an oversized file was a hit")
	}
}
