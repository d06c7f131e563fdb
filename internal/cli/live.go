package cli

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/charmbracelet/x/term"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/permission"
	"massgen/internal/provider"
	"massgen/internal/tui"
	"massgen/internal/view"
)

// isTerminal reports whether w and r are both a terminal, so the live view can draw and read
// keys.
func isTerminal(w io.Writer, r io.Reader) bool {
	wf, ok := w.(*os.File)
	if !ok || !term.IsTerminal(wf.Fd()) {
		return false
	}
	rf, ok := r.(*os.File)
	return ok && term.IsTerminal(rf.Fd())
}

// chanSink hands events to the live view. It blocks while the view is slow (the view batches,
// so it rarely is) and never once the view is gone.
type chanSink struct {
	ch   chan event.Event
	done chan struct{}
}

func (s chanSink) Handle(e event.Event) {
	select {
	case s.ch <- e:
	case <-s.done:
	}
}

// liveTurn is what the live view of one turn is told besides its events.
type liveTurn struct {
	// oneShot: the view leaves when the session ends; otherwise (an interactive turn) it stays
	// until q, which goes back to the prompt.
	oneShot bool
	// notices are the config warnings, printed to stderr before the view opened and hidden
	// behind it: the view shows them under its header.
	notices []string
	// unpriced are the team's models without a price, so the summary says "price unknown"
	// rather than $0.0000.
	unpriced []string
	// asks carries the live view's answers to the permission engine's asks (y and n).
	asks *permission.Broker
}

// newLiveTurn describes a turn of cfg; warnings are the config's, as loadConfig returned them.
func newLiveTurn(cfg *config.Config, warnings []string, oneShot bool) liveTurn {
	return liveTurn{oneShot: oneShot, notices: warnings, unpriced: app.UnpricedModels(cfg), asks: permission.NewBroker()}
}

// options are the live view's options for the turn.
func (l liveTurn) options(stdin io.Reader, stdout io.Writer, cancel func()) tui.Options {
	o := tui.Options{Input: stdin, Output: stdout, OnCancel: cancel, Leave: l.oneShot, Notices: l.notices}
	if !l.oneShot {
		o.EndKeyHelp = "back to the prompt"
	}
	if l.asks != nil {
		o.Answer, o.Reply = l.asks.Answer, l.asks.Reply
	}
	return o
}

// runLive runs one turn under the live view: the session in a goroutine, the view in this one.
// q or Ctrl-C in the view cancels the session, which then ends (exit 4) with its logs written.
// A one-shot run's view quits when the session ends and leaves its final screen on the
// terminal; an interactive turn's stays until q, and then the final answer is printed, since
// the view's screen goes away.
func runLive(ctx context.Context, cfg appRun, stdin io.Reader, stdout io.Writer, turn liveTurn) (app.Result, error) {
	sessCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	sink := chanSink{ch: make(chan event.Event, 1<<14), done: make(chan struct{})}
	var res app.Result
	var runErr error
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		defer close(sink.ch)
		res, runErr = cfg(sessCtx, []event.Sink{sink})
	}()
	viewErr := tui.Run(ctx, sink.ch, turn.options(stdin, stdout, cancel))
	close(sink.done)
	cancel()
	<-finished
	if runErr != nil {
		return res, runErr
	}
	if viewErr != nil && ctx.Err() == nil {
		fmt.Fprintf(stdout, "massgen: the live view failed (%v); the session ran to its end\n", viewErr)
	}
	if !turn.oneShot || viewErr != nil {
		printOutcome(stdout, res, turn.unpriced...) // the final screen did not stay
	}
	return res, nil
}

// appRun runs one turn with the given views.
type appRun func(ctx context.Context, sinks []event.Sink) (app.Result, error)

// printOutcome prints what stays on the terminal after the live view: the final answer, the
// usage and where the logs are. unpriced are the models whose cost is unknown.
func printOutcome(w io.Writer, res app.Result, unpriced ...string) {
	// Without an answer the error says why, once, as the run ends.
	if res.FinalAnswer != "" {
		fmt.Fprintf(w, "Final answer (by %s):\n\n%s\n\n", res.Winner, res.FinalAnswer)
		if note := event.TruncationNote(res.TruncatedBy); note != "" {
			fmt.Fprintf(w, "%s\n\n", note)
		}
	}
	if res.Usage != (provider.Usage{}) {
		fmt.Fprintln(w, view.UsageLine(res.Usage, res.CostUSD, unpriced...))
	}
}
