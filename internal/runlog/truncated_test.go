package runlog

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"massgen/internal/event"
	"massgen/internal/readmodel"
)

// A final answer cut off by the token limit looked complete in status.json (issue 9 item 10).
func TestStatusJSON_MarksTruncatedFinalAnswer(t *testing.T) {
	for _, truncated := range []bool{false, true} {
		s := readmodel.NewState()
		t0 := time.Unix(0, 0)
		s.Apply(event.Event{Seq: 1, Time: t0, Payload: event.SessionStarted{Agents: []event.AgentInfo{{ID: "a", Label: "agent1"}}}})
		s.Apply(event.Event{Seq: 2, Time: t0, Payload: event.FinalAnswer{Agent: "a", Label: "agent1.final", Content: "Paris is",
			Truncated: truncated, TruncatedBy: event.TruncatedTokenLimit}})
		var st struct {
			Results struct {
				Preview   string `json:"final_answer_preview"`
				Truncated bool   `json:"final_answer_truncated"`
			} `json:"results"`
		}
		if err := json.Unmarshal(StatusJSON(s, t0), &st); err != nil {
			t.Fatal(err)
		}
		marked := strings.HasSuffix(st.Results.Preview, " (truncated at the token limit)")
		if st.Results.Truncated != truncated || marked != truncated || !strings.HasPrefix(st.Results.Preview, "Paris is") {
			t.Errorf("truncated=%v: status results %+v", truncated, st.Results)
		}
	}
}
