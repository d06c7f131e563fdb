package eval

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/engine"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/provider/simulated"
)

// Options configure an eval run.
type Options struct {
	// Dataset names the dataset in the summary; Items are its items.
	Dataset string
	Items   []Item
	// Config is the team every item runs with. ConfigFor, when set, returns the team of one
	// item instead (a caller that varies the team per item; the tests script the agents'
	// answers per question this way).
	Config    *config.Config
	ConfigFor func(Item) *config.Config
	// Team identifies the team in the results file (a hash of the config file); a resumed run
	// warns when finished items ran with another.
	Team string
	// Out is the results file: read first (its finished items are skipped), then appended to.
	Out string
	// Logging writes each item's session log under LogRoot, as a run does.
	Logging bool
	LogRoot string
	// Concurrency is how many items run at once (0 or 1: one at a time).
	Concurrency int
	Limits      Limits
	// MaxFailures stops starting items once that many in a row have failed (0: never), so a
	// revoked key or an exhausted quota does not fail the whole dataset one item at a time.
	MaxFailures int
	// MaxCostUSD stops starting items once the items finished in this run have cost that
	// much (0: no cap); the items already running finish.
	MaxCostUSD float64
	// Progress is told of each item as it is done, one call at a time.
	Progress func(Progress)
	// Getenv, Version and Args go to every session (app.Options).
	Getenv  func(string) string
	Version string
	Args    []string
	// Remote runs each item's session elsewhere (app.Options.Remote: Temporal workers, which
	// make the model calls, so Limits do not reach them).
	Remote func(ctx context.Context, cfg *config.Config, o engine.Options) engine.Result
	// NewProvider overrides the backend factory (tests); nil means app.NewProvider.
	NewProvider func(b config.Backend, key, keyEnv string) (provider.Provider, error)
	// Simulation, when set, runs the population's simulated agents on every item instead of
	// NewProvider's backends; Config must be Simulation.Config() (massgen eval --simulate).
	Simulation *simulated.Population
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Progress reports one finished item.
type Progress struct {
	Item   Item
	Record Record
	// Done counts the items finished in this run, Todo those the run set out to do;
	// Skipped were already in the results file.
	Done, Todo, Skipped int
	// Elapsed is the time since the run started.
	Elapsed time.Duration
}

// Outcome is how a run ended.
type Outcome struct {
	Summary Summary
	// ExitCode is 0 when every item has a result, 2 when some failed (or the run stopped
	// at MaxFailures), 4 when the run was interrupted.
	ExitCode int
	// Warnings are about the results file (a cut last line, items run with another team).
	Warnings []string
	// Stopped says why the run stopped early ("" when it did not).
	Stopped string
}

// Run runs every item the results file does not hold yet, appending each finished one to it,
// and returns the summary over the whole dataset. Interrupting ctx stops the run: the items in
// progress are left out of the file (a resumed run redoes them) and Outcome.ExitCode is 4. An
// error is a run that could not go on: a results file that belongs to another dataset, a team
// that cannot start (an *app.Error with exit code 1).
func Run(ctx context.Context, o Options) (Outcome, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.NewProvider == nil {
		o.NewProvider = app.NewProvider
	}
	o.Concurrency = max(o.Concurrency, 1)
	done, warnings, err := ReadResults(o.Out)
	if err != nil {
		return Outcome{}, &app.Error{Code: app.ExitConfig, Err: err}
	}
	var todo []Item
	otherTeam := 0
	for _, it := range o.Items {
		rec, ok := done[it.ID]
		if !ok {
			todo = append(todo, it)
			continue
		}
		if rec.Fingerprint != it.Fingerprint() {
			return Outcome{}, &app.Error{Code: app.ExitConfig, Err: fmt.Errorf("item %s (line %d) is not the one %s holds a result for: its question, answers or grader changed; "+
				"write the results to a new file (--out) or delete that item's line there", it.ID, it.Line, o.Out)}
		}
		if o.Team != "" && rec.Team != o.Team {
			otherTeam++
		}
		if rec.Status != StatusOK {
			todo = append(todo, it) // a failed item is tried again
		}
	}
	if otherTeam > 0 {
		warnings = append(warnings, fmt.Sprintf("%d finished items in %s ran with another team config: the summary mixes the two", otherTeam, o.Out))
	}
	rf, err := openResults(o.Out)
	if err != nil {
		return Outcome{}, &app.Error{Code: app.ExitExecution, Err: err}
	}
	started := o.Now()
	r := &runner{o: o, rf: rf, lims: newLimiters(o.Limits), skipped: len(o.Items) - len(todo), todo: len(todo), done: done, started: started}
	r.work(ctx, todo)
	closeErr := rf.close()
	out := Outcome{Warnings: warnings, Stopped: r.stopped}
	if r.fatal != nil {
		return out, r.fatal
	}
	if closeErr != nil {
		return out, &app.Error{Code: app.ExitExecution, Err: fmt.Errorf("close the results file: %w", closeErr)}
	}
	out.Summary = Summarize(o.Items, r.done)
	out.Summary.Dataset, out.Summary.Results = o.Dataset, o.Out
	out.Summary.WallSeconds = o.Now().Sub(started).Seconds()
	out.Summary.Limits = o.Limits.String()
	if o.Simulation != nil {
		simulatedBaselines(&out.Summary, o.Simulation, o.Items, r.done)
	}
	switch {
	case ctx.Err() != nil:
		out.ExitCode = app.ExitInterrupted
	case out.Summary.Failed > 0 || r.stopped != "":
		out.ExitCode = app.ExitExecution
	}
	return out, nil
}

// runner runs the items of one eval run.
type runner struct {
	o             Options
	rf            *resultsFile
	lims          limiters
	todo, skipped int
	started       time.Time

	mu    sync.Mutex // guards the fields below, and serialises Progress calls
	done  map[string]Record
	count int // items finished in this run
	// failedRun counts the failures in a row; stopped and fatal end the run.
	failedRun int
	spent     float64 // the cost of the items finished in this run
	stopped   string
	fatal     error
}

// work runs the items with o.Concurrency workers; it returns once every worker has stopped.
func (r *runner) work(ctx context.Context, items []Item) {
	feed := make(chan Item)
	var wg sync.WaitGroup
	for range min(r.o.Concurrency, max(len(items), 1)) {
		wg.Go(func() {
			for it := range feed {
				r.one(ctx, it)
			}
		})
	}
	for _, it := range items {
		if ctx.Err() != nil || r.halted() {
			break
		}
		select {
		case feed <- it:
		case <-ctx.Done():
		}
	}
	close(feed)
	wg.Wait()
}

func (r *runner) halted() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fatal != nil || r.stopped != ""
}

// one runs one item and records it, unless the run was interrupted meanwhile.
func (r *runner) one(ctx context.Context, it Item) {
	if r.halted() {
		return
	}
	rec, err := r.session(ctx, it)
	if ctx.Err() != nil {
		return // interrupted: the item is not done, a resumed run redoes it
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		if r.fatal == nil {
			r.fatal = err
		}
		return
	}
	if err := r.rf.append(rec); err != nil {
		if r.fatal == nil {
			r.fatal = &app.Error{Code: app.ExitExecution, Err: err}
		}
		return
	}
	r.done[it.ID] = rec
	r.count++
	if rec.Status == StatusFailed {
		r.failedRun++
		if r.o.MaxFailures > 0 && r.failedRun >= r.o.MaxFailures && r.stopped == "" {
			r.stopped = fmt.Sprintf("%d items in a row failed (--max-failures %d), the last with: %s", r.failedRun, r.o.MaxFailures, oneLine(rec.Error))
		}
	} else {
		r.failedRun = 0
	}
	r.spent += rec.CostUSD
	if r.o.MaxCostUSD > 0 && r.spent >= r.o.MaxCostUSD && r.stopped == "" {
		r.stopped = fmt.Sprintf("the cost cap $%.4f is reached ($%.4f spent)", r.o.MaxCostUSD, r.spent)
	}
	if r.o.Progress != nil {
		r.o.Progress(Progress{Item: it, Record: rec, Done: r.count, Todo: r.todo, Skipped: r.skipped, Elapsed: r.o.Now().Sub(r.started)})
	}
}

// session runs one item's session and builds its record; an error is a team that cannot
// start at all.
func (r *runner) session(ctx context.Context, it Item) (Record, error) {
	cfg := r.o.Config
	if r.o.ConfigFor != nil {
		cfg = r.o.ConfigFor(it)
	}
	obs := newObserver()
	base := r.o.NewProvider
	if r.o.Simulation != nil {
		base = simulatedProviders(r.o.Simulation, it)
	}
	newProvider := func(b config.Backend, key, keyEnv string) (provider.Provider, error) {
		p, err := base(b, key, keyEnv)
		if err != nil {
			return nil, err
		}
		return r.lims.wrap(b.Type, p), nil
	}
	start := r.o.Now()
	res, err := app.Run(ctx, cfg, app.Options{
		Question: it.Prompt, Logging: r.o.Logging, LogRoot: r.o.LogRoot,
		Sinks: []event.Sink{obs}, Getenv: r.o.Getenv, Version: r.o.Version, Args: r.o.Args,
		NewProvider: newProvider, Remote: r.o.Remote,
	})
	rec := Record{ID: it.ID, Fingerprint: it.Fingerprint(), Team: r.o.Team, Status: StatusOK,
		Started: start.UTC(), Seconds: r.o.Now().Sub(start).Seconds(), Agents: []AgentRecord{}}
	if err != nil {
		var ae *app.Error
		if errors.As(err, &ae) && ae.Code == app.ExitConfig {
			return Record{}, err
		}
		rec.Status, rec.Error, rec.ExitCode = StatusFailed, err.Error(), app.ExitExecution
		return rec, nil
	}
	obs.fill(&rec)
	rec.LogDir, rec.ExitCode = res.Dir, res.ExitCode
	if rec.Final == "" {
		rec.Final = res.FinalAnswer
	}
	switch {
	case res.ExitCode == app.ExitExecution || res.ExitCode == app.ExitInterrupted:
		rec.Status = StatusFailed
		rec.Error = "the session failed"
		if res.Err != nil {
			rec.Error = res.Err.Error()
		}
	case res.Err != nil:
		rec.Error = res.Err.Error() // a timeout or the cost budget: the answer still counts
	}
	if res.CloseErr != nil {
		rec.Error = joinMsg(rec.Error, "some log files could not be written: "+res.CloseErr.Error())
	}
	rec.grade(it)
	return rec, nil
}

func joinMsg(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
