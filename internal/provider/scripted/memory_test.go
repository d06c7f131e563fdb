package scripted

import (
	"context"
	"testing"

	"massgen/internal/config"
	"massgen/internal/memory"
	"massgen/internal/provider"
)

// Memory's calls get replies of the shape memory reads: the facts of an answer, a summary;
// neither counts as one of the agent's coordination calls.
func TestProvider_MemoryCalls(t *testing.T) {
	system, user := memory.ExtractionPrompt("Where is Paris?", "Paris is in France. It lies on the Seine!")
	tests := []struct {
		name, system, user, want string
	}{
		{"facts", system, user, `{"facts":["Paris is in France.","It lies on the Seine!"]}`},
		{"no facts", system, "Question:\nq\n\nAnswer:\n", `{"facts":[]}`},
		{"summary", "You compress a conversation.", "First we read the file. Then we fixed it.\nThe code is 42.", "Summary: First we read the file. The code is 42."},
	}
	p := New(config.Script{Answers: []string{"Paris."}}, "m")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := collect(t, p.Stream(context.Background(), provider.Request{System: tt.system, Stage: provider.StageMemory,
				Messages: []provider.Message{{Role: provider.RoleUser, Content: tt.user}}}))
			if r.err != nil || r.text != tt.want || r.stop != "stop" {
				t.Errorf("reply %q (stop %q, err %v), want %q", r.text, r.stop, r.err, tt.want)
			}
		})
	}
	if facts, err := memory.ParseFacts(`{"facts":["Paris is in France."]}`); err != nil || len(facts) != 1 {
		t.Errorf("memory reads the reply as %q, %v", facts, err)
	}
	if p.calls != 0 {
		t.Errorf("%d coordination calls counted", p.calls)
	}
}
