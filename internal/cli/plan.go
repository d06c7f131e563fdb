package cli

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/private"
	"massgen/internal/prompt"
	"massgen/internal/runlog"
	"massgen/internal/taskplan"
)

// Plan-then-execute (MassGen's --plan and --execute-plan), built from the same session: a
// planning run is an ordinary run whose question asks for a project plan, whose every
// new_answer must hold a valid one (taskplan.ParseProject; a bad one is refused with what to
// fix), and whose final plan is written to plan.json in its turn's log folder. An execution
// run reads such a file and is an ordinary run with task planning on, every agent starting
// with the planned tasks as its own task plan and the planned request as its question.

var planDepths = []string{"dynamic", "shallow", "medium", "deep"}

// checkPlanFlags checks --plan, --plan-depth, --plan-steps and --execute-plan before anything
// is loaded.
func checkPlanFlags(o *runOptions) error {
	if o.planDepth != "" && !slices.Contains(planDepths, o.planDepth) {
		return exitf(ExitConfig, "--plan-depth %q: use dynamic, shallow (5-10 tasks), medium (20-50) or deep (100-200)", o.planDepth)
	}
	if (o.planDepth != "" || o.planSteps != 0) && !o.plan {
		return exitf(ExitConfig, "--plan-depth and --plan-steps go with --plan: add --plan to make a plan")
	}
	if o.planSteps < 0 || o.planSteps > taskplan.MaxTasksCeiling {
		return exitf(ExitConfig, "--plan-steps %d: use 1 to %d tasks", o.planSteps, taskplan.MaxTasksCeiling)
	}
	if o.plan && o.executePlan != "" {
		return exitf(ExitConfig, "--plan makes a plan and --execute-plan carries one out: run massgen --plan first, then massgen --execute-plan latest")
	}
	if o.plan && o.temporal.addr != "" {
		// Its check of every new_answer is a function of this process (app.Options.CheckAnswer);
		// --execute-plan runs on Temporal, its plan travels with the session.
		return exitf(ExitConfig, "--plan does not run on Temporal yet (this process checks every answer for a valid plan): run it without --temporal; --execute-plan runs on Temporal")
	}
	if (o.plan || o.executePlan != "") && o.web.on {
		return exitf(ExitConfig, "%s does not run with --web yet: run it in the terminal, then open the log folder with massgen serve", planFlag(o))
	}
	if o.plan && o.noLogs {
		return exitf(ExitConfig, "--plan writes the plan into the log folder: leave out --no-logs")
	}
	return nil
}

func planFlag(o *runOptions) string {
	if o.plan {
		return "--plan"
	}
	return "--execute-plan"
}

// planRun is a planning run's settings.
type planRun struct {
	depth    string
	steps    int
	maxTasks int
	request  string // the person's question, without the planning instructions
}

func newPlanRun(o *runOptions, cfg *config.Config) *planRun {
	if !o.plan {
		return nil
	}
	tp := cfg.Orchestrator.TaskPlanning
	steps := cmp.Or(o.planSteps, tp.TargetSteps)
	return &planRun{depth: cmp.Or(o.planDepth, tp.Depth, "dynamic"), steps: steps, maxTasks: taskplan.MaxTasksCeiling}
}

// wrap is the question the planning agents read.
func (p *planRun) wrap(q string) string {
	p.request = q
	return prompt.PlanModeQuestion(q, p.depth, p.steps, p.maxTasks)
}

// check is every new_answer's check: it must hold a valid project plan.
func (p *planRun) check(content string) error {
	_, err := taskplan.ParseProject(content)
	return err
}

// save writes the plan of a finished planning run to plan.json in its turn folder: the final
// answer's plan, or, when the presenter's text holds none, the presenting agent's last
// accepted answer's, which passed the check.
func (p *planRun) save(res app.Result) (string, error) {
	if res.Dir == "" {
		return "", errors.New("--plan: the run wrote no log folder to put the plan in")
	}
	tasks, err := taskplan.ParseProject(res.FinalAnswer)
	if err != nil && res.Winner != "" {
		if _, st, lerr := runlog.LoadTurn(res.Dir); lerr == nil {
			if a := st.Agent(res.Winner); a != nil && a.LatestAnswer() != nil {
				tasks, err = taskplan.ParseProject(a.LatestAnswer().Content)
			}
		}
	}
	if err != nil {
		return "", fmt.Errorf("--plan: the run ended without a valid plan (%v); the final answer is in %s", err, filepath.Join(res.Dir, "final"))
	}
	path := filepath.Join(res.Dir, taskplan.ProjectFile)
	proj := taskplan.Project{Tasks: tasks, Question: p.request, Depth: p.depth, Session: res.Session, Turn: turnOf(res.Dir)}
	if err := private.WriteFileAtomic(path, proj.Marshal()); err != nil {
		return "", fmt.Errorf("--plan: writing the plan: %w", err)
	}
	return path, nil
}

func turnOf(dir string) int {
	var n int
	_, _ = fmt.Sscanf(filepath.Base(dir), "turn_%d", &n)
	return n
}

// planTurn wraps a turn of a planning run: the planning question and answer check in, the
// plan file out, and where it is said (automation's PLAN_FILE: line, or a note).
func planTurn(p *planRun, prep turnPrep, turn func(app.Options) (app.Result, error)) func(app.Options) (app.Result, error) {
	return func(opts app.Options) (app.Result, error) {
		opts.Question = p.wrap(opts.Question)
		opts.CheckAnswer = p.check
		res, err := turn(opts)
		if err != nil || res.Dir == "" {
			return res, err
		}
		path, serr := p.save(res)
		if serr != nil {
			return res, exitf(ExitExecution, "%v", serr)
		}
		if prep.display == "silent" {
			fmt.Fprintf(prep.lines, "PLAN_FILE: %s\n", path)
		} else {
			fmt.Fprintf(prep.stderr, "massgen: plan written to %s; carry it out with massgen --execute-plan latest (or that path)\n", path)
		}
		return res, nil
	}
}

// executePlan is an execution run: the plan file it carries out.
type executePlan struct {
	path    string
	project taskplan.Project
}

// loadExecutePlan reads the plan --execute-plan names: latest (the newest plan under the log
// root), a plan file, a log or turn folder holding one, or a session id (log_<timestamp>).
func loadExecutePlan(arg, logRoot string) (*executePlan, error) {
	path, err := findPlan(arg, logRoot)
	if err != nil {
		return nil, exitf(ExitConfig, "--execute-plan %s: %v", arg, err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, exitf(ExitConfig, "--execute-plan: %v", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 8<<20))
	if err != nil {
		return nil, exitf(ExitConfig, "--execute-plan: reading %s: %v", path, err)
	}
	proj, err := taskplan.ReadProject(data)
	if err != nil {
		return nil, exitf(ExitConfig, "--execute-plan %s: %v", path, err)
	}
	return &executePlan{path: path, project: proj}, nil
}

func findPlan(arg, logRoot string) (string, error) {
	if arg == "latest" {
		ids, err := runlog.SessionIDs(logRoot)
		if err != nil {
			return "", err
		}
		for _, id := range ids {
			if p, ok := planIn(filepath.Join(logRoot, id)); ok {
				return p, nil
			}
		}
		return "", fmt.Errorf("no plan under %s: make one with massgen --plan \"question\"", logRoot)
	}
	path := arg
	if runlog.IsSessionID(arg) {
		if _, err := os.Stat(arg); err != nil {
			path = filepath.Join(logRoot, arg)
		}
	}
	info, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("no such plan file or log folder (use latest, a plan.json, or a log folder of a --plan run)")
	}
	if !info.IsDir() {
		return path, nil
	}
	if p, ok := planIn(path); ok {
		return p, nil
	}
	return "", fmt.Errorf("%s holds no %s: it is not the log folder of a --plan run", path, taskplan.ProjectFile)
}

// planIn returns the plan file of a turn folder, or of the newest turn of a log folder that
// has one.
func planIn(dir string) (string, bool) {
	if isRegular(filepath.Join(dir, taskplan.ProjectFile)) {
		return filepath.Join(dir, taskplan.ProjectFile), true
	}
	turns, err := runlog.FindTurns(dir)
	if err != nil {
		return "", false
	}
	for i := len(turns) - 1; i >= 0; i-- {
		if p := filepath.Join(turns[i], taskplan.ProjectFile); isRegular(p) {
			return p, true
		}
	}
	return "", false
}

func isRegular(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular()
}

// apply makes cfg an execution run's, as MassGen's prepare_plan_execution_config does: task
// planning on, with the plans also in the agents' workspaces. It returns the run's question:
// the planned request, with extra (the command line's question, "" for none) as instructions.
func (e *executePlan) apply(cfg *config.Config, extra string) string {
	cfg.Orchestrator.TaskPlanning.Enabled = true
	cfg.Orchestrator.TaskPlanning.FilesystemMode = true
	return prompt.ExecutePlanQuestion(e.project.Question, extra, len(e.project.Tasks))
}
