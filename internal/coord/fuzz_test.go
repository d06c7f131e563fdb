package coord

import (
	"testing"
	"unicode/utf8"
)

// FuzzResolve feeds model-written tool calls (any name, any argument text) to the machine.
// Whatever a model sends, Resolve does not panic, every rejected call gets feedback naming it,
// an accepted answer is within MaxAnswerChars, and an accepted vote names an agent that has an
// answer.
func FuzzResolve(f *testing.F) {
	for _, seed := range []struct{ name, args, text string }{
		{ToolNewAnswer, `{"content":"Paris."}`, ""},
		{ToolNewAnswer, `{}`, "streamed answer"},
		{ToolVote, `{"agent_id":"agent1","reason":"best"}`, ""},
		{ToolVote, `{"agent_id":"agent9"}`, ""},
		{ToolVote, `{"agent_id":1}`, ""},
		{ToolNewAnswer, `{"content":`, ""},
		{"mcp__x__y", `null`, ""},
		{ToolVote, "\xff\xfe", ""},
	} {
		f.Add(seed.name, seed.args, seed.text, seed.name, seed.args)
	}
	f.Fuzz(func(t *testing.T, name, args, text, name2, args2 string) {
		m := New(Settings{Agents: 3, MaxAnswerChars: 64, Novelty: "balanced"})
		mustAnswer(t, m, 1, "An earlier answer from agent two.")
		calls := []Call{{ID: "c1", Name: name, Arguments: args}, {ID: "c2", Name: name2, Arguments: args2}}
		out := m.Resolve(0, calls, text, m.Version())
		switch out.Kind {
		case Answered:
			if n := utf8.RuneCountInString(out.Answer.Content); n > 64 {
				t.Errorf("accepted an answer of %d characters over MaxAnswerChars 64", n)
			}
		case Voted, StaleVote:
			if _, ok := m.Current(out.Vote.Target); !ok {
				t.Errorf("accepted a vote for agent %d, which has no answer", out.Vote.Target)
			}
		case Retry:
			if len(out.Feedback) == 0 {
				t.Error("every call was rejected, but no feedback says why")
			}
			for _, fb := range out.Feedback {
				if fb.CallID == "" || fb.Error == "" {
					t.Errorf("feedback without a call id or a reason: %+v", fb)
				}
			}
		}
	})
}
