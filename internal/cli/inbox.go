package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"massgen/internal/app"
	"massgen/internal/engine"
	"massgen/internal/permission"
)

// inbox is --inbox-dir (MassGen v0.1.95's runtime inbox): a script steers a running session by
// dropping msg_*.json files into a folder, each one JSON object:
//
//	{"request_id": "bc_1", "content": "Markdown"}   answers an agent's ask_others question
//	                                                (broadcast: human; "" skips it)
//	{"request_id": "ask_2", "decision": "allow"}    answers a permission ask
//	{"content": "Focus on the cost"}                 a message to every agent (human input)
//
// The ids come from the broadcast_asked and permission_asked events (--stream-events, or the
// log's events.jsonl). Each file is read once, then renamed <name>.done, or <name>.rejected
// with an INBOX: line on the error stream saying why.
type inbox struct {
	dir   string
	errs  io.Writer
	every time.Duration
}

// turnInbox is the inbox serving one turn: its answers go to the turn's broker and steering.
type turnInbox struct {
	*inbox
	broker *permission.Broker
	steer  *engine.Steering
}

// maxInboxFile caps what one inbox file may hold.
const maxInboxFile = 64 << 10

// newInbox makes dir (if needed) and returns its inbox with its absolute path.
func newInbox(dir string, errs io.Writer) (*inbox, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("--inbox-dir %s: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("--inbox-dir: %w", err)
	}
	return &inbox{dir: abs, errs: errs, every: 200 * time.Millisecond}, nil
}

// serve lets the inbox answer the turn o runs: it gives the turn a broker (the one a view
// already answers through, or its own) and a steering, and reads the folder until the
// returned stop is called. A nil inbox does nothing.
func (in *inbox) serve(ctx context.Context, o *app.Options) (stop func()) {
	if in == nil {
		return func() {}
	}
	if o.Approvals == nil {
		o.Approvals = permission.NewBroker()
	}
	if o.Steering == nil {
		o.Steering = engine.NewSteering()
	}
	t := &turnInbox{inbox: in, broker: o.Approvals, steer: o.Steering}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { t.run(ctx) })
	return func() { cancel(); wg.Wait() }
}

// run reads the folder until ctx ends.
func (in *turnInbox) run(ctx context.Context) {
	t := time.NewTicker(in.every)
	defer t.Stop()
	for {
		in.scan()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// scan takes every new msg_*.json file, in name order.
func (in *turnInbox) scan() {
	entries, err := os.ReadDir(in.dir)
	if err != nil {
		fmt.Fprintf(in.errs, "INBOX: cannot read %s: %v\n", in.dir, err)
		return
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if n := e.Name(); strings.HasPrefix(n, "msg_") && strings.HasSuffix(n, ".json") {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		path := filepath.Join(in.dir, n)
		if err := in.take(path); err != nil {
			fmt.Fprintf(in.errs, "INBOX: %s rejected: %v\n", n, err)
			_ = os.Rename(path, path+".rejected")
			continue
		}
		_ = os.Rename(path, path+".done")
	}
}

// inboxMessage is one file's content.
type inboxMessage struct {
	RequestID string  `json:"request_id"`
	Content   *string `json:"content"`
	Decision  string  `json:"decision"`
}

// take acts on one file.
func (in *turnInbox) take(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return errors.New("not a regular file (a link or a folder is not read)")
	}
	if fi.Size() > maxInboxFile {
		return fmt.Errorf("%d bytes, over the %d-byte limit", fi.Size(), maxInboxFile)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var m inboxMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf(`not a JSON object (write {"request_id": "bc_1", "content": "..."}): %v`, err)
	}
	switch {
	case m.RequestID != "" && m.Decision != "":
		return in.broker.Answer(m.RequestID, m.Decision)
	case m.RequestID != "" && m.Content != nil:
		return in.broker.Reply(m.RequestID, *m.Content)
	case m.RequestID != "":
		return errors.New(`give "content" (an answer to a question) or "decision" (allow or deny a permission ask)`)
	case m.Content != nil:
		return in.steer.Send(*m.Content)
	}
	return errors.New(`give "request_id" with "content" or "decision", or "content" alone (a message to the agents)`)
}
