package temporalrun

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/app"
	"massgen/internal/event"
	"massgen/internal/provider"
)

// restartsTeam: a answers, both vote for it; its check of the first attempt's answer asks
// for a restart, of the second's submits. With workspaces each agent writes a file first.
func restartsTeam(workspaces bool) string {
	ws := ""
	if workspaces {
		ws = `
      cwd: ws
      tool_calls:
        - {name: write_file, args: {path: notes.md, content: "members"}}`
	}
	return `
agents:
  - id: a
    backend:
      type: scripted
      model: s` + ws + `
      answers: ["Lennon, 1940, rhythm guitar.", "Lennon (1940) and McCartney (1942), both songwriters and singers."]
      vote: agent1
      improve_after: 3
      post_evaluation: [restart, submit]
      restart_reason: McCartney is missing
      restart_instructions: Describe both members
  - id: b
    backend:
      type: scripted
      model: s` + ws + `
      answers: ["Lennon.", "Lennon and McCartney."]
      vote: agent1
      improve_after: 3
      latency: 30ms
orchestrator:
  final_presentation: verbatim
  coordination: {max_orchestration_restarts: 2}
`
}

// restartEvents are a log's post-evaluations, decisions and restarts, and what its calls used.
type restartEvents struct {
	started   []event.PostEvaluationStarted
	submitted []event.AnswerSubmittedFinal
	restarts  []event.OrchestrationRestarted
	finals    []string // each attempt's final answer, in order
	checks    int      // post-evaluation model calls
	used      provider.Usage
	// afresh: the agents whose first call after a restart starts a new conversation with
	// the restart's feedback
	afresh []string
	// rounds: the round of each agent's first call after a restart (1: its first turn)
	rounds map[string]int
}

func readRestarts(t *testing.T, dir string) restartEvents {
	t.Helper()
	r := restartEvents{rounds: map[string]int{}}
	first := map[string]bool{}
	for _, e := range readLog(t, dir) {
		switch p := e.Payload.(type) {
		case event.PostEvaluationStarted:
			r.started = append(r.started, p)
		case event.AnswerSubmittedFinal:
			r.submitted = append(r.submitted, p)
		case event.OrchestrationRestarted:
			r.restarts = append(r.restarts, p)
		case event.FinalAnswer:
			r.finals = append(r.finals, p.Content)
		case event.ModelCalled:
			if p.Stage == provider.StagePostEvaluation {
				r.checks++
			}
			if len(r.restarts) > 0 && p.Stage != provider.StagePostEvaluation && !first[p.Agent] {
				first[p.Agent] = true
				if p.Fresh && len(p.Messages) > 0 && strings.HasPrefix(p.Messages[0].Content, "<PREVIOUS ATTEMPT FEEDBACK>") {
					r.afresh = append(r.afresh, p.Agent)
				}
			}
		case event.UsageReported:
			r.used = r.used.Add(p.Usage)
			if _, seen := r.rounds[p.Agent]; len(r.restarts) > 0 && !seen && p.Round > 0 && !p.Presentation {
				r.rounds[p.Agent] = p.Round
			}
		}
	}
	slices.Sort(r.afresh) // the agents' turns race
	return r
}

// attemptFiles are the log's final answers (each attempt's final/ and the turn's), with the
// answers' content. The answers' and votes' folders are left out: whether the slower agent
// answers and votes before the attempt is decided is a race, locally as on Temporal.
func attemptFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if !strings.HasPrefix(rel, "final/") && !regexp.MustCompile(`^attempt_\d+/final/`).MatchString(rel) {
			return nil
		}
		out[rel] = ""
		if strings.HasSuffix(rel, "/answer.txt") {
			b, err := os.ReadFile(p)
			out[rel] = string(b)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSession_RestartsAsLocally: on Temporal the presenter's check runs on a worker (the
// holder, for a session with workspaces), its restart makes the workflow coordinate a second
// attempt whose agents read the feedback, and the session ends as the local run does: the same
// checks, decisions, restarts and final answers, logged once, every attempt's calls counted,
// each attempt's log in attempt_<k>/ and, with workspaces, the same final workspace; also when
// the workflow continues as new runs between turns.
func TestSession_RestartsAsLocally(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	for _, tt := range []struct {
		name      string
		held      bool
		continued bool // the workflow continues as new between turns: the attempt rides in the carried state
	}{{"plain", false, false}, {"held", true, false}, {"held, continued as new", true, true}} {
		held := tt.held
		t.Run(tt.name, func(t *testing.T) {
			target, c, root := heldSessions(t, "restarts-"+strings.ReplaceAll(tt.name, " ", ""), &Activities{})
			if tt.continued {
				target.HistoryLimit = minHistoryLimit
			}
			cfg := loadTeam(t, restartsTeam(held))
			local, err := app.Run(t.Context(), cfg, app.Options{Question: "Who founded the Beatles?", Logging: true,
				LogRoot: filepath.Join(root, "local"), WorkspaceRoot: filepath.Join(root, "local-ws")})
			if err != nil {
				t.Fatal(err)
			}
			remote := runLogged(t, cfg, filepath.Join(root, "remote"), remoteOn(c, target))
			const want = "Lennon (1940) and McCartney (1942), both songwriters and singers."
			if remote.ExitCode != 0 || remote.Winner != "a" || remote.FinalAnswer != want || local.FinalAnswer != want {
				t.Fatalf("Temporal: %+v; local: %+v", remote.Result, local.Result)
			}
			lo, re := readRestarts(t, local.Dir), readRestarts(t, remote.Dir)
			if len(re.restarts) != 1 || re.restarts[0].Attempt != 2 || re.restarts[0].Reason != "McCartney is missing" || re.checks != 2 ||
				len(re.afresh) != 2 || re.rounds["a"] != 1 {
				t.Fatalf("on Temporal: restarts %+v, %d checks, agents starting afresh %v in rounds %v", re.restarts, re.checks, re.afresh, re.rounds)
			}
			for what, d := range map[string]string{
				"checks started": cmp.Diff(lo.started, re.started), "decisions": cmp.Diff(lo.submitted, re.submitted),
				"restarts": cmp.Diff(lo.restarts, re.restarts), "final answers": cmp.Diff(lo.finals, re.finals),
				"agents starting afresh": cmp.Diff(lo.afresh, re.afresh),
			} {
				if d != "" {
					t.Errorf("the %s differ from the local run's (-local +Temporal):\n%s", what, d)
				}
			}
			for id, n := range re.rounds {
				if n != 1 {
					t.Errorf("%s's first call after the restart is in round %d, want 1 (a new attempt's first turn)", id, n)
				}
			}
			if lo.checks != re.checks {
				t.Errorf("%d post-evaluation calls on Temporal, %d locally", re.checks, lo.checks)
			}
			// Every call of both attempts is in the session's usage, once.
			if re.used.InputTokens == 0 || remote.Usage != re.used {
				t.Errorf("session usage %+v, its calls reported %+v", remote.Usage, re.used)
			}
			lf, rf := attemptFiles(t, local.Dir), attemptFiles(t, remote.Dir)
			for _, k := range []string{"attempt_1/final/a/answer.txt", "attempt_2/final/a/answer.txt", "final/a/answer.txt"} {
				if _, ok := rf[k]; !ok {
					t.Errorf("the log on Temporal lacks %s: %v", k, slices.Sorted(mapKeys(rf)))
				}
			}
			if d := cmp.Diff(lf, rf); d != "" {
				t.Errorf("the attempts' final answers differ (-local +Temporal):\n%s", d)
			}
			// The winner's answer of each attempt is in that attempt's folder.
			for _, dir := range []string{local.Dir, remote.Dir} {
				for _, k := range []string{"attempt_1", "attempt_2"} {
					if m, _ := filepath.Glob(filepath.Join(dir, k, "a", "*", "answer.txt")); len(m) != 1 {
						t.Errorf("%s holds %d answers of a, want 1", filepath.Join(dir, k), len(m))
					}
				}
			}
			if held {
				ws := func(dir string) map[string]string {
					return workspaceFiles(t, filepath.Join(dir, "final", "a", "workspace"))
				}
				got, want := ws(remote.Dir), ws(local.Dir)
				if got["notes.md"] != "members" || !cmp.Equal(got, want) {
					t.Errorf("final workspace on Temporal differs from the local run's:\n%s", cmp.Diff(want, got))
				}
			}
		})
	}
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
