package temporalrun

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"massgen/internal/engine"
)

// Steering a session on Temporal: the caller's engine.Steering (the dashboard's buttons,
// --inbox-dir's messages) forwards each act to the workflow as an update, which the
// coordinator applies between its other work. Stopping an agent cancels its running turn's
// activity (the worker learns it at its next heartbeat); Answer Now ends coordination, which
// cancels every running turn; a message reaches each agent at its next turn; a person's
// answer to a permission ask waits in the workflow for the worker whose gate asked
// (asks.go).

// Steer is one act of steering (UpdateSteer): exactly one field is set.
type Steer struct {
	Stop      string     `json:"stop,omitempty"` // the agent to stop
	AnswerNow bool       `json:"answer_now,omitempty"`
	Message   string     `json:"message,omitempty"`
	Answer    *AskAnswer `json:"answer,omitempty"`
}

// notRunningType marks the error of a steering act that came when coordination was not
// running (engine.ErrNotRunning).
const notRunningType = "not_running"

// validSteer refuses, before it enters the history, an act that is malformed or comes when
// coordination is over.
func (w *run) validSteer(_ workflow.Context, s Steer) error {
	n := 0
	for _, set := range []bool{s.Stop != "", s.AnswerNow, s.Message != "", s.Answer != nil} {
		if set {
			n++
		}
	}
	switch {
	case n != 1:
		return errors.New("steer one thing at a time: stop, answer_now, message or answer")
	case s.Answer != nil:
		return w.validAnswer(*s.Answer) // the presentation's calls ask too: not only while coordinating
	case len(s.Message) > engine.MaxHumanInput:
		return fmt.Errorf("the message is %d bytes, over the %d-byte limit", len(s.Message), engine.MaxHumanInput)
	case w.x.Ended():
		return temporal.NewApplicationError(engine.ErrNotRunning.Error(), notRunningType)
	}
	return nil
}

// steer applies one act and wakes the coordination loop.
func (w *run) steer(_ workflow.Context, s Steer) error {
	var err error
	switch {
	case s.Stop != "":
		var i int
		if i, err = w.x.StopAgent(s.Stop); err == nil && w.running[i] != nil {
			w.running[i].cancel()
		}
	case s.Answer != nil:
		w.answers = append(w.answers, *s.Answer)
		return nil
	case s.AnswerNow:
		err = w.x.AnswerNow()
	default:
		err = w.x.Send(s.Message)
	}
	if errors.Is(err, engine.ErrNotRunning) {
		return temporal.NewApplicationError(err.Error(), notRunningType)
	}
	if err != nil {
		return temporal.NewApplicationError(err.Error(), "refused")
	}
	w.wake.SendAsync(true)
	return nil
}

// remoteSteering is a session's workflow as engine.Steering forwards to it.
type remoteSteering struct {
	c   client.Client
	wid string
}

// steerTimeout bounds one act's round trip.
const steerTimeout = 30 * time.Second

func (r remoteSteering) StopAgent(id string) error { return r.send(Steer{Stop: id}) }
func (r remoteSteering) AnswerNow() error          { return r.send(Steer{AnswerNow: true}) }
func (r remoteSteering) Send(text string) error    { return r.send(Steer{Message: text}) }

func (r remoteSteering) send(s Steer) error {
	ctx, cancel := context.WithTimeout(context.Background(), steerTimeout)
	defer cancel()
	h, err := r.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: r.wid, UpdateName: UpdateSteer, Args: []any{s},
		WaitForStage: client.WorkflowUpdateStageCompleted})
	if err == nil {
		err = h.Get(ctx, nil)
	}
	if err == nil {
		return nil
	}
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		if ae.Type() == notRunningType {
			return engine.ErrNotRunning
		}
		return errors.New(ae.Message())
	}
	if msg := err.Error(); strings.Contains(msg, "already completed") || strings.Contains(msg, "closing workflow") {
		// The session ended while the act was on its way.
		return engine.ErrNotRunning
	}
	return fmt.Errorf("steer the session on Temporal: %s", shortError(err))
}
