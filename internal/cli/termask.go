package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/charmbracelet/x/term"

	"massgen/internal/event"
	"massgen/internal/permission"
	"massgen/internal/provider"
	"massgen/internal/termtext"
)

// termAsker answers the permission engine's asks at a terminal without the live view (plain
// output, --no-display, the interactive prompt): each ask is printed with what it wants, and
// the next line typed decides it (y or yes allows; anything else denies). The agents'
// questions to the person (broadcast: human) are asked the same way: the next line typed is
// the answer, an empty one skips the question. It reads the
// terminal only while an ask waits, so the prompt's own lines are never taken, and gives up
// reading once the ask is decided another way (its timeout) or the turn ends.
type termAsker struct {
	broker *permission.Broker
	out    io.Writer
	read   lineReader

	mu      sync.Mutex
	queue   []termAsk
	decided map[string]bool
	wake    chan struct{} // a send: the queue or decided changed
}

// termAsk is a permission ask or a question, waiting its turn at the terminal.
type termAsk struct {
	perm     event.PermissionAsked
	question *event.BroadcastAsked
}

func (t termAsk) id() string {
	if t.question != nil {
		return t.question.ID
	}
	return t.perm.ID
}

// maxAskTarget bounds how much of an ask's target (a command, a path) is printed.
const maxAskTarget = 500

// lineReader reads one line from the terminal, giving up (ok false) once stop says so.
type lineReader func(ctx context.Context, stop func() bool) (line string, ok bool)

// terminalReader reads lines from stdin when it is a person's terminal; nil when it is not (a
// pipe, a file, a system without the non-blocking reads asks need).
func terminalReader(stdin io.Reader) lineReader {
	f, ok := stdin.(*os.File)
	if !ok || !term.IsTerminal(f.Fd()) {
		return nil
	}
	return terminalLines(f)
}

// newTermAsker returns the asker of a turn whose stdin and out are a person's terminal, or nil
// when they are not (the asks then follow automation_default).
func newTermAsker(stdin io.Reader, out io.Writer) *termAsker {
	read := terminalReader(stdin)
	if read == nil {
		return nil
	}
	return &termAsker{broker: permission.NewBroker(), out: out, read: read, decided: map[string]bool{}, wake: make(chan struct{}, 1)}
}

// Handle takes the asks and decisions of the turn; it never blocks the bus.
func (a *termAsker) Handle(e event.Event) {
	a.mu.Lock()
	switch p := e.Payload.(type) {
	case event.PermissionAsked:
		a.queue = append(a.queue, termAsk{perm: p})
	case event.PermissionDecided:
		a.decided[p.ID] = true
	case event.BroadcastAsked:
		if !p.Human {
			a.mu.Unlock()
			return
		}
		a.queue = append(a.queue, termAsk{question: &p})
	case event.BroadcastDone:
		a.decided[p.ID] = true
	default:
		a.mu.Unlock()
		return
	}
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// run asks the person each ask in turn until ctx is done.
func (a *termAsker) run(ctx context.Context) {
	for {
		next, ok := a.next(ctx)
		if !ok {
			return
		}
		if next.question != nil {
			a.askQuestion(ctx, *next.question)
			continue
		}
		ask := next.perm
		rule := ask.Rule
		if rule == "" {
			rule = ask.Risk + " risk"
		}
		// %q: the target is the model's, and must not write escape sequences to the terminal.
		fmt.Fprintf(a.out, "\npermission: %s wants %s %q (%s). Allow? [y/N] (%.0f s, then automation_default) ",
			ask.Agent, ask.Action, provider.Clip(ask.Target, maxAskTarget), rule, ask.TimeoutSeconds)
		line, ok := a.read(ctx, func() bool { return ctx.Err() != nil || a.isDecided(ask.ID) })
		if !ok {
			fmt.Fprintln(a.out, "(decided without you)")
			continue
		}
		decision := permission.Deny
		if l := strings.ToLower(strings.TrimSpace(line)); l == "y" || l == "yes" {
			decision = permission.Allow
		}
		if err := a.broker.Answer(ask.ID, decision); err != nil {
			fmt.Fprintln(a.out, "(it was decided meanwhile)")
			continue
		}
		fmt.Fprintf(a.out, "permission: %s\n", decision)
	}
}

// askQuestion puts an agent's question to the person; the next line is the answer.
func (a *termAsker) askQuestion(ctx context.Context, q event.BroadcastAsked) {
	// The question is the model's: Clean keeps its lines and drops escape sequences.
	fmt.Fprintf(a.out, "\nquestion from %s (%s):\n%s\nYour answer (Enter alone skips; %.0f s): ",
		q.Agent, q.ID, termtext.Clean(provider.Clip(q.Question, maxAskTarget*4)), q.TimeoutSeconds)
	line, ok := a.read(ctx, func() bool { return ctx.Err() != nil || a.isDecided(q.ID) })
	if !ok {
		fmt.Fprintln(a.out, "(it ended without you)")
		return
	}
	if err := a.broker.Reply(q.ID, strings.TrimSpace(line)); err != nil {
		fmt.Fprintf(a.out, "(not taken: %v)\n", err)
		return
	}
	fmt.Fprintln(a.out, "answer sent")
}

// next waits for an ask not yet decided.
func (a *termAsker) next(ctx context.Context) (termAsk, bool) {
	for {
		a.mu.Lock()
		for len(a.queue) > 0 {
			ask := a.queue[0]
			a.queue = a.queue[1:]
			if !a.decided[ask.id()] {
				a.mu.Unlock()
				return ask, true
			}
		}
		a.mu.Unlock()
		select {
		case <-ctx.Done():
			return termAsk{}, false
		case <-a.wake:
		}
	}
}

func (a *termAsker) isDecided(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.decided[id]
}
