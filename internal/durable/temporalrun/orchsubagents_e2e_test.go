package temporalrun

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/engine"
	"massgen/internal/event"
)

// runPriced runs cfg with every call priced (pricedScripted), remotely when remote is set.
func runPriced(t *testing.T, cfg *config.Config, root string, remote func(context.Context, *config.Config, engine.Options) engine.Result) app.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := app.Run(ctx, cfg, app.Options{Question: "What is 6 times 7?", Logging: true, LogRoot: filepath.Join(root, "logs"),
		WorkspaceRoot: filepath.Join(root, "ws"), NewProvider: pricedScripted, Remote: remote})
	if err != nil || res.ExitCode != 0 || res.Err != nil {
		t.Fatalf("run: %+v, %v", res.Result, err)
	}
	return res
}

// orchSubagents is what a log says of the orchestrator's subagents: the subagents started
// (each with its log folder), and what each spent.
type orchSubagents struct {
	started  map[string]string
	children float64
	logged   float64 // the usage the log reports, the subagents' included
}

func orchSubagentsOf(t *testing.T, evs []event.Event) orchSubagents {
	t.Helper()
	o := orchSubagents{started: map[string]string{}}
	for _, e := range evs {
		switch p := e.Payload.(type) {
		case event.UsageReported:
			o.logged += p.CostUSD
		case event.SubagentStarted:
			if _, twice := o.started[p.ID]; twice {
				t.Errorf("subagent %s started twice", p.ID)
			}
			o.started[p.ID] = p.LogDir
		case event.SubagentFinished:
			if p.Status != event.SubagentCompleted {
				t.Errorf("subagent %s: %s %s", p.ID, p.Status, p.Error)
			}
			o.children += p.CostUSD
		}
	}
	return o
}

// checkSubagentLogs fails unless each started subagent's log is in the starter's log folder,
// where the events name it.
func checkSubagentLogs(t *testing.T, dir string, started map[string]string) {
	t.Helper()
	for id, logDir := range started {
		want := filepath.Join(dir, "subagents", id, "turn_1")
		if logDir != want {
			t.Errorf("subagent %s's log is named %s, want %s", id, logDir, want)
		}
		if _, err := os.Stat(filepath.Join(want, "events.jsonl")); err != nil {
			t.Errorf("subagent %s's log: %v", id, err)
		}
	}
}

// TestSession_RoundEvaluatorAsLocally: before each round after the agent's first answer the
// round evaluator runs on the worker holding the session, and its report opens the round;
// the session ends as locally: the same reports, final answer and cost (the evaluator's
// team's calls counted once), the evaluator's logs in the starter's log folder.
func TestSession_RoundEvaluatorAsLocally(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	cfg := loadTeam(t, `
agents:
  - id: solo
    backend: {type: scripted, answers: ["The answer is 41.", "The answer is 42: 6 times 7."], checklist_correct: "42"}
orchestrator:
  voting_sensitivity: checklist_gated
  max_new_answers_per_agent: 2
  coordination:
    enable_subagents: true
    subagent_types: [round_evaluator]
    round_evaluator_before_checklist: true
    orchestrator_managed_round_evaluator: true
    round_evaluator_transformation_pressure: gentle
`)
	root := t.TempDir()
	local := runPriced(t, cfg, filepath.Join(root, "local"), nil)
	target, c, _ := heldSessions(t, "evaluator-test", &Activities{NewProvider: pricedScripted})
	remote := runPriced(t, cfg, filepath.Join(root, "remote"), remoteOn(c, target))
	if remote.Winner != local.Winner || remote.FinalAnswer != local.FinalAnswer {
		t.Errorf("on Temporal %s answered %q; locally %s answered %q", remote.Winner, remote.FinalAnswer, local.Winner, local.FinalAnswer)
	}
	reports := func(evs []event.Event) (out []event.RoundEvaluated) {
		for _, e := range evs {
			if p, ok := e.Payload.(event.RoundEvaluated); ok {
				out = append(out, p)
			}
		}
		return out
	}
	revs, levs := readLog(t, remote.Dir), readLog(t, local.Dir)
	rr, lr := reports(revs), reports(levs)
	if len(rr) != 2 || rr[0].Warning != "" || !cmp.Equal(rr, lr) {
		t.Errorf("round_evaluated on Temporal %+v, locally %+v", rr, lr)
	}
	ro, lo := orchSubagentsOf(t, revs), orchSubagentsOf(t, levs)
	if len(ro.started) != 2 || len(lo.started) != 2 {
		t.Errorf("evaluators started: on Temporal %v, locally %v", ro.started, lo.started)
	}
	checkSubagentLogs(t, remote.Dir, ro.started)
	if math.Abs(remote.CostUSD-local.CostUSD) > 1e-9 || math.Abs(ro.children-lo.children) > 1e-9 || ro.children < 2*centsPerCall ||
		math.Abs(remote.CostUSD-ro.logged) > 1e-9 {
		t.Errorf("cost on Temporal $%.2f (logged $%.2f), locally $%.2f; the evaluators' $%.2f on Temporal, $%.2f locally",
			remote.CostUSD, ro.logged, local.CostUSD, ro.children, lo.children)
	}
}

// TestSession_VerifierSubagentAsLocally: a verifier subagent checks the answers on the worker
// holding the session, as the orchestrator's own subagent; its verdicts, the winner and the
// cost are the local run's.
func TestSession_VerifierSubagentAsLocally(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	cfg := loadTeam(t, `
agents:
  - id: a1
    backend: {type: scripted, answers: ["Forty-two."], vote: agent1, verdicts: [fail]}
  - id: a2
    backend: {type: scripted, answers: ["It is 42."], vote: agent1, verdicts: [fail]}
orchestrator:
  final_answer_strategy: winner_reuse
  verifiers: [{aspect: correctness, subagent: true}]
`)
	root := t.TempDir()
	local := runPriced(t, cfg, filepath.Join(root, "local"), nil)
	target, c, _ := heldSessions(t, "verifier-subagent-test", &Activities{NewProvider: pricedScripted})
	remote := runPriced(t, cfg, filepath.Join(root, "remote"), remoteOn(c, target))
	if remote.Winner != local.Winner || remote.FinalAnswer != local.FinalAnswer {
		t.Errorf("on Temporal %s answered %q; locally %s answered %q", remote.Winner, remote.FinalAnswer, local.Winner, local.FinalAnswer)
	}
	verdicts := func(evs []event.Event) (out []string) {
		for _, e := range evs {
			if p, ok := e.Payload.(event.AnswerVerified); ok {
				out = append(out, p.AnswerLabel+":"+p.Verdict+":"+p.SubagentID)
			}
		}
		return out
	}
	revs, levs := readLog(t, remote.Dir), readLog(t, local.Dir)
	if rv, lv := verdicts(revs), verdicts(levs); len(rv) == 0 || !cmp.Equal(rv, lv) {
		t.Errorf("verdicts on Temporal %v, locally %v", rv, lv)
	}
	ro, lo := orchSubagentsOf(t, revs), orchSubagentsOf(t, levs)
	checkSubagentLogs(t, remote.Dir, ro.started)
	// The agents' own calls vary locally with who answers first (and a call cut off when
	// coordination ends is not paid): the verifiers' do not, and each is counted once.
	if math.Abs(ro.children-lo.children) > 1e-9 || ro.children < centsPerCall || math.Abs(remote.CostUSD-ro.logged) > 1e-9 {
		t.Errorf("cost on Temporal $%.2f (logged $%.2f), the verifiers' $%.2f; locally $%.2f, the verifiers' $%.2f",
			remote.CostUSD, ro.logged, ro.children, local.CostUSD, lo.children)
	}
}

// emergingTeam: two scripted agents whose first checklists fail (voting_threshold 0), so that
// each answers again and scores the criteria that emerged meanwhile.
const emergingTeam = `
agents:
  - id: a
    backend: {type: scripted, answers: ["The answer is 41.", "The answer is 42: 6 times 7."], checklist_correct: "42", improve_after: 3}
  - id: b
    backend: {type: scripted, answers: ["It is 40.", "It is 42, checked: 6 times 7."], checklist_correct: "42", improve_after: 3}
orchestrator:
  voting_sensitivity: checklist_gated
  voting_threshold: 0
  max_new_answers_per_agent: 2
  coordination:
    criteria_mode: %s
    bootstrap_max_per_agent_per_round: 2
`

// TestSession_EmergingCriteriaAsLocally: with checklist-gated votes on Temporal, the agents'
// checklists reach the workflow with their turns (their votes pass), and criteria emerge as
// locally: proposed with a checklist (bootstrap_inline) or written by the critic on the worker
// holding the session (bootstrap_subagent), once per answer set, scored by later checklists.
func TestSession_EmergingCriteriaAsLocally(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	target, c, _ := heldSessions(t, "emerging-test", &Activities{NewProvider: pricedScripted})
	for _, mode := range []string{config.CriteriaBootstrapInline, config.CriteriaBootstrapSubagent} {
		t.Run(mode, func(t *testing.T) {
			cfg := loadTeam(t, fmt.Sprintf(emergingTeam, mode))
			root := t.TempDir()
			local := runPriced(t, cfg, filepath.Join(root, "local"), nil)
			remote := runPriced(t, cfg, filepath.Join(root, "remote"), remoteOn(c, target))
			type logged struct {
				first    event.CriteriaEmerged
				versions []int
				scored   bool // a checklist scored E5
				rejected []string
			}
			read := func(evs []event.Event) (l logged) {
				for _, e := range evs {
					switch p := e.Payload.(type) {
					case event.CriteriaEmerged:
						if l.first.Source == "" {
							l.first = p
						}
						if p.Source == event.CriteriaSubagent {
							l.versions = append(l.versions, p.Version)
						}
					case event.ChecklistSubmitted:
						for _, sc := range p.Scores {
							for _, it := range sc.Items {
								l.scored = l.scored || it.ID == "E5"
							}
						}
					case event.ToolRejected:
						if p.Tool == "vote" {
							l.rejected = append(l.rejected, p.Error)
						}
					}
				}
				return l
			}
			revs, levs := readLog(t, remote.Dir), readLog(t, local.Dir)
			re, lo := read(revs), read(levs)
			if len(re.first.Added) == 0 || !cmp.Equal(re.first.Added, lo.first.Added) || re.first.Warning != "" {
				t.Errorf("the first criteria to emerge on Temporal %+v, locally %+v", re.first, lo.first)
			}
			if !re.scored || len(re.rejected) > 0 {
				t.Errorf("on Temporal E5 scored: %v; votes refused: %v", re.scored, re.rejected)
			}
			seen := map[int]bool{}
			for _, v := range re.versions {
				if seen[v] {
					t.Errorf("answer set %d critiqued twice", v)
				}
				seen[v] = true
			}
			ro := orchSubagentsOf(t, revs)
			if mode == config.CriteriaBootstrapSubagent && len(ro.started) != len(re.versions) {
				t.Errorf("%d critics started, %d critiques", len(ro.started), len(re.versions))
			}
			checkSubagentLogs(t, remote.Dir, ro.started)
			if math.Abs(remote.CostUSD-ro.logged) > 1e-9 {
				t.Errorf("cost on Temporal $%.2f, its log's usage $%.2f", remote.CostUSD, ro.logged)
			}
		})
	}
}
