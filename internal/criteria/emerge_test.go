package criteria

import (
	"strings"
	"testing"
)

// A critic's reply is read whatever wraps its JSON; a reply without it is an error the
// caller reports, never a guess.
func TestFromReply(t *testing.T) {
	for _, tc := range []struct {
		name, reply string
		want        []string
		err         bool
	}{
		{"object", `{"proposed_criteria": [{"text": "A", "category": "stretch"}, {"text": "B"}]}`, []string{"A", "B"}, false},
		{"fenced", "Here you go:\n```json\n{\"proposed_criteria\": [\"A\"]}\n```\nThanks.", []string{"A"}, false},
		{"bare array in text", `I propose [{"text": "A"}] for now.`, []string{"A"}, false},
		{"criteria key", `{"criteria": [{"text": "A"}]}`, []string{"A"}, false},
		{"empty list", `{"proposed_criteria": []}`, nil, false},
		{"prose", "The answers look fine to me.", nil, true},
		{"wrong shape", `{"proposed_criteria": "A"}`, nil, true},
		{"broken json", `{"proposed_criteria": [{"text": "A"`, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := FromReply(tc.reply)
			if (err != nil) != tc.err {
				t.Fatalf("err = %v, want error %v", err, tc.err)
			}
			var texts []string
			for _, p := range got {
				texts = append(texts, p.Text)
			}
			if strings.Join(texts, "|") != strings.Join(tc.want, "|") {
				t.Errorf("got %q, want %q", texts, tc.want)
			}
		})
	}
}

// Every size a model controls is capped: entries, their length.
func TestParseProposals_Caps(t *testing.T) {
	long := strings.Repeat("x", MaxTextChars+1)
	raw := `["` + long + `"` + strings.Repeat(`, "a"`, MaxProposals+3) + `]`
	got, dropped, err := ParseProposals([]byte(raw))
	if err != nil || len(got) != MaxProposals || !strings.Contains(dropped, "entry 1 is 1001 characters") || !strings.Contains(dropped, "past the first 10") {
		t.Fatalf("got %d, dropped %q, err %v", len(got), dropped, err)
	}
}

func TestAccumulator_StableIDsAndRestore(t *testing.T) {
	a := NewAccumulator(Default(), 2)
	a.Merge([]Proposal{{Text: "A"}, {Text: "B"}, {Text: Default()[0].Text}})
	added, evicted := a.Merge([]Proposal{{Text: "C", Category: "could"}})
	if len(added) != 1 || added[0].ID != "E7" || added[0].Category != Stretch || len(evicted) != 1 || evicted[0] != "E5" {
		t.Fatalf("added %v evicted %v", added, evicted)
	}
	b := NewAccumulator(Default(), 2)
	b.Restore(a.Emerged())
	if added, _ := b.Merge([]Proposal{{Text: "D"}}); added[0].ID != "E8" {
		t.Errorf("after restore: %v", added)
	}
}
