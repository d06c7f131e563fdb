package prompt

import (
	"regexp"
	"strings"
	"testing"

	"massgen/internal/provider"
)

func TestSystem_StablePrefixAndSettings(t *testing.T) {
	a := System("You are terse.", "lenient", "lenient")
	if a != System("You are terse.", "lenient", "lenient") {
		t.Fatal("system prompt is not deterministic")
	}
	if !strings.HasPrefix(a, "You are terse.\n\n") {
		t.Errorf("agent's own system message is not first: %q", a[:40])
	}
	if regexp.MustCompile(`\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}`).MatchString(a) {
		t.Error("system prompt carries a date or time, which breaks prompt caching")
	}
	for _, tc := range []struct{ sens, nov, want string }{
		{"balanced", "lenient", "strong and complete"},
		{"strict", "lenient", "reference quality"},
		{"bogus", "lenient", "handles the original message well"},
		{"lenient", "balanced", "meaningfully different approach"},
		{"lenient", "strict", "substantially different"},
	} {
		if s := System("", tc.sens, tc.nov); !strings.Contains(s, tc.want) {
			t.Errorf("System(%s, %s) lacks %q", tc.sens, tc.nov, tc.want)
		}
	}
}

func TestUser(t *testing.T) {
	none := User("Capital of France?", nil, nil)
	if !strings.Contains(none, "<ORIGINAL MESSAGE>\nCapital of France?\n<END OF ORIGINAL MESSAGE>") || !strings.Contains(none, "none yet") {
		t.Errorf("no answers:\n%s", none)
	}
	got := User("Q?", []provider.Message{{Role: provider.RoleUser, Content: "hi"}, {Role: provider.RoleAssistant, Content: "hello"}},
		[]Answer{{Label: "agent1", Content: "A one"}, {Label: "agent3", Content: "A three"}})
	want := "<CONVERSATION HISTORY>\nUser: hi\nAssistant: hello\n<END OF CONVERSATION HISTORY>\n\n" +
		"<ORIGINAL MESSAGE>\nQ?\n<END OF ORIGINAL MESSAGE>\n\n<CURRENT ANSWERS>\n" +
		"<agent1>\nA one\n<end of agent1>\n\n<agent3>\nA three\n<end of agent3>\n<END OF CURRENT ANSWERS>"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestUpdate(t *testing.T) {
	u := Update("Your vote was not counted.", []Answer{{Label: "agent2", Content: "New"}})
	if !strings.HasPrefix(u, "Your vote was not counted.") || !strings.Contains(u, "<agent2>\nNew\n<end of agent2>") ||
		!strings.HasSuffix(u, "vote or new_answer.") {
		t.Errorf("update:\n%s", u)
	}
}

func TestTools_VoteEnumListsOnlyAnsweredAgents(t *testing.T) {
	enum := func(ts []provider.ToolSpec) any {
		props := ts[1].Parameters["properties"].(map[string]any)
		return props["agent_id"].(map[string]any)["enum"]
	}
	ts := Tools([]string{"agent1", "agent3"})
	if ts[0].Name != "new_answer" || ts[1].Name != "vote" {
		t.Fatalf("tools %s, %s", ts[0].Name, ts[1].Name)
	}
	got := enum(ts).([]any)
	if len(got) != 2 || got[0] != "agent1" || got[1] != "agent3" {
		t.Errorf("enum = %v", got)
	}
	if e := enum(Tools(nil)); e != nil {
		t.Errorf("enum with no answers = %v, want none", e)
	}
}

func TestPresentationUser(t *testing.T) {
	got := PresentationUser("Q?", "agent2", VoteResult{Votes: 2, Reasons: []string{"clear", " "}, Tie: true},
		[]Answer{{Label: "agent1", Content: "one"}, {Label: "agent2", Content: "two"}})
	for _, want := range []string{"Your answer (agent2) received 2 vote(s).", "tie was broken", "- clear\n",
		"<agent1>\none\n<end of agent1>\n\n(your own answer)\n<agent2>\ntwo\n<end of agent2>", "Present the final answer now."} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "- \n") {
		t.Error("blank reason listed")
	}
}
