package engine

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/readmodel"
)

// sureOf answers content with a confidence, then votes for target with one, as soon as
// target has an answer (for the first label until then).
func sureOf(content string, answerConf float64, target string, voteConf float64) *fake {
	return &fake{next: func(n int, req provider.Request) step {
		if req.Stage == provider.StagePresentation {
			return step{text: "FINAL: " + content}
		}
		if !hasOwnAnswer(req, content) {
			b, _ := json.Marshal(map[string]any{"content": content, "confidence": answerConf})
			return step{text: content, calls: []provider.ToolCall{{ID: "c1", Name: "new_answer", Arguments: string(b)}}}
		}
		label := target
		if ls := labels(req); !slices.Contains(ls, target) {
			label = ls[0]
		}
		b, _ := json.Marshal(map[string]any{"agent_id": label, "reason": content + " is right", "confidence": voteConf})
		return step{calls: []provider.ToolCall{{ID: "c1", Name: "vote", Arguments: string(b)}}}
	}}
}

func weighedTeam() ([]Agent, config.Orchestrator) {
	as := agents(sureOf("Paris.", 0.9, "agent1", 0.9), sureOf("Lyon.", 0.6, "agent2", 0.8), sureOf("Lyon!", 0.5, "agent2", 0.7))
	return as, config.Orchestrator{VoteWeighting: config.WeightConfidence, AgentWeights: map[string]float64{"a1": 3}}
}

// decisionOf folds a log, written out as events.jsonl and read back, into its decision record.
func decisionOf(t *testing.T, evs []event.Event) *readmodel.Decision {
	t.Helper()
	var buf bytes.Buffer
	for _, e := range evs {
		line, err := event.EncodeLine(e)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(line)
	}
	back, err := event.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	st := readmodel.NewState()
	for _, e := range back {
		st.Apply(e)
	}
	return st.Decision()
}

// TestVoteWeighting_TheLogExplainsTheVote: under confidence weighting one sure, heavy vote
// (3 x 0.9) beats two (0.8 + 0.7); the tools offer the confidence argument; the decision record
// folded from events.jsonl alone agrees with the engine's tally, names the strongest dissent,
// and a session resumed from a log cut before the end (kill -9) records the same decision.
func TestVoteWeighting_TheLogExplainsTheVote(t *testing.T) {
	as, orch := weighedTeam()
	rec := &recorder{}
	bus := event.NewBus(nil)
	bus.Subscribe(rec)
	res := Run(t.Context(), Options{Question: "Capital?", Agents: as, Orchestrator: orch, Bus: bus})
	if res.ExitCode != 0 || res.Winner != "a1" {
		t.Fatalf("result %+v: the heavy, sure agent1 should win", res)
	}
	if req := as[0].Provider.(*fake).requests(); len(req) == 0 || !hasConfidenceParam(req[0]) {
		t.Fatal("the workflow tools do not offer a confidence under confidence weighting")
	}
	evs := rec.all()
	ended := ofType[event.CoordinationEnded](evs)[0]
	d := decisionOf(t, evs)
	if d == nil || !d.Agrees || d.WinnerLabel != "agent1" || d.Weighting != "confidence" {
		t.Fatalf("decision %+v", d)
	}
	for k, c := range d.Tally {
		if c.Score != ended.Tally[k].Score || c.Votes != ended.Tally[k].Votes {
			t.Errorf("%s: the log folds to %d votes worth %v, the engine counted %d worth %v", c.Label, c.Votes, c.Score, ended.Tally[k].Votes, ended.Tally[k].Score)
		}
	}
	if d.Tally[0].Score != 2.7 || d.Tally[1].Score != 1.5 {
		t.Errorf("scores %v and %v, want 2.7 (3 x 0.9) and 1.5 (0.8 + 0.7)", d.Tally[0].Score, d.Tally[1].Score)
	}
	if d.Dissent == nil || d.Dissent.VoterLabel != "agent2" || d.Dissent.Worth != 0.8 || d.Dissent.Reason != "Lyon. is right" {
		t.Errorf("strongest dissent %+v, want agent2's vote worth 0.8", d.Dissent)
	}

	// kill -9 after the last vote, before coordination ended: the resumed session ends it.
	cut := slices.IndexFunc(evs, func(e event.Event) bool { _, ok := e.Payload.(event.CoordinationEnded); return ok })
	log := evs[:cut]
	as, orch = weighedTeam()
	rec2 := &recorder{}
	bus = event.NewBus(nil)
	bus.ResumeAt(int64(len(log)))
	bus.Subscribe(rec2)
	res = Run(t.Context(), Options{Question: "Capital?", Agents: as, Orchestrator: orch, Bus: bus, Restore: &Restore{Events: log, Previous: "killed"}})
	if res.ExitCode != 0 || res.Winner != "a1" {
		t.Fatalf("resumed: %+v", res)
	}
	again := decisionOf(t, append(slices.Clone(log), rec2.all()...))
	// The resumed engine counted the restored votes with their confidences.
	if ended := ofType[event.CoordinationEnded](rec2.all()); len(ended) != 1 || ended[0].Tally[0].Score != 2.7 {
		t.Errorf("the resumed engine's tally %+v, want agent1 at 2.7", ended)
	}
	if diff := cmp.Diff(d, again, cmp.AllowUnexported(readmodel.DecisionCount{}, readmodel.Ballot{})); diff != "" {
		t.Errorf("the resumed session's decision differs (-first +resumed):\n%s", diff)
	}
}

func hasConfidenceParam(req provider.Request) bool {
	for _, tl := range req.Tools {
		if tl.Name == "vote" {
			props, _ := tl.Parameters["properties"].(map[string]any)
			_, ok := props["confidence"]
			return ok
		}
	}
	return false
}
