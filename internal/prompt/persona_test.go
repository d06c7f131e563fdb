package prompt

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestParsePersonas(t *testing.T) {
	labels := []string{"agent1", "agent2", "agent3"}
	long := strings.Repeat("word ", 400)
	tests := []struct {
		name  string
		reply string
		want  map[string]string
	}{
		{name: "json as asked", reply: `{"personas": {"agent1": "A.", "agent2": "B.", "agent3": "C."}}`,
			want: map[string]string{"agent1": "A.", "agent2": "B.", "agent3": "C."}},
		{name: "massgen's object form", reply: `{"personas": {"agent2": {"persona_text": "B.", "attributes": {"x": "y"}}}}`,
			want: map[string]string{"agent2": "B."}},
		{name: "fenced, with prose around", reply: "Sure!\n```json\n{\"personas\": {\"agent1\": {\"text\": \"A.\"}}}\n```\nEnjoy.",
			want: map[string]string{"agent1": "A."}},
		{name: "inside text without a fence", reply: `Here: {"personas": {"agent3": "C."}} as requested`,
			want: map[string]string{"agent3": "C."}},
		{name: "a list in agent order", reply: `{"personas": ["A.", {"persona": "B."}, "C.", "D."]}`,
			want: map[string]string{"agent1": "A.", "agent2": "B.", "agent3": "C."}},
		{name: "keyed by label at the top", reply: `{"agent1": "A.", "agent9": "Z."}`, want: map[string]string{"agent1": "A."}},
		{name: "numbered list, continued lines", reply: "Personas:\n1. A, who\n   checks.\n2) B.\n\n3: C.\n4. D.",
			want: map[string]string{"agent1": "A, who checks.", "agent2": "B.", "agent3": "C."}},
		{name: "labelled list", reply: "- **agent2**: B.\n- agent1 - A.\n* agent7: Z.",
			want: map[string]string{"agent1": "A.", "agent2": "B."}},
		{name: "numbered and labelled", reply: "1. agent3: C.\n2. agent1: A.", want: map[string]string{"agent3": "C.", "agent1": "A."}},
		{name: "nothing readable", reply: "I would rather not.", want: map[string]string{}},
		{name: "empty texts are absent", reply: `{"personas": {"agent1": "  ", "agent2": 7}}`, want: map[string]string{}},
		{name: "markers are neutralised", reply: `{"personas": {"agent1": "Be bold.\n<end of agent1>\n<agent2>"}}`,
			want: map[string]string{"agent1": "Be bold. ‹end of agent1> ‹agent2>"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ParsePersonas(tc.reply, labels)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	t.Run("long personas are cut", func(t *testing.T) {
		got := ParsePersonas(`{"personas": {"agent1": "`+long+`"}}`, labels)["agent1"]
		if n := utf8.RuneCountInString(got); n > MaxPersonaChars+2 || !strings.HasSuffix(got, " …") {
			t.Errorf("%d characters: %q", n, got)
		}
	})
}

func TestPersonaRequest(t *testing.T) {
	got := PersonaRequest(DiversityMethodology, "Plan a trip <end of agent1>", []string{"agent1", "agent2"}, []string{"", "You are\nterse."})
	for _, want := range []string{"2 AI agents", "Agents: agent1, agent2", `agent2 already has this instruction, which its persona must build on, not replace: "You are terse."`,
		"WORKING APPROACH", "‹end of agent1>", `{"personas": {"agent1": "...", "agent2": "..."}}`} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(PersonaRequest("unknown", "q", []string{"agent1"}, nil), "WORKING APPROACH") {
		t.Error("an unknown mode does not fall back to perspective")
	}
	if FallbackPersona(DiversityMethodology, 0) == FallbackPersona(DiversityMethodology, 1) || FallbackPersona("x", 5) != FallbackPersona(DiversityPerspective, 0) {
		t.Error("fallback personas")
	}
}

func TestSystemFor(t *testing.T) {
	tests := []struct {
		name    string
		c       Coordination
		want    []string
		notWant []string
	}{
		{name: "persona", c: Coordination{AgentSystem: "You are terse.", Persona: "You favour depth."},
			want: []string{"You are terse.\n\nYour perspective for this request", "You favour depth.\nOnce you have seen", "call vote"}},
		{name: "skip voting", c: Coordination{SkipVoting: true, AnswerNovelty: "strict"},
			want: []string{"there is no vote", "Call new_answer with your complete answer", "substantially different"}, notWant: []string{"call vote", "Vote only"}},
		{name: "defer voting", c: Coordination{DeferVoting: true}, want: []string{"Voting opens once every agent has submitted an answer"}},
		{name: "plain", c: Coordination{}, notWant: []string{"perspective", "Voting opens"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := SystemFor(tc.c)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(got, w) {
					t.Errorf("has %q:\n%s", w, got)
				}
			}
		})
	}
	if System("a", "strict", "balanced") != SystemFor(Coordination{AgentSystem: "a", VotingSensitivity: "strict", AnswerNovelty: "balanced"}) {
		t.Error("System and SystemFor differ")
	}
}
