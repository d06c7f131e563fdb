package cli

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"massgen/internal/event"
	"massgen/internal/permission"
	"massgen/internal/permission/rule"
)

// The asker answers the permission gate's asks with the lines typed (y allows, anything else
// denies), never prints the model's escape sequences, and stops with its context.
func TestTermAsker(t *testing.T) {
	lines := make(chan string, 4)
	var mu sync.Mutex
	var out bytes.Buffer
	a := &termAsker{broker: permission.NewBroker(), decided: map[string]bool{}, wake: make(chan struct{}, 1),
		out: writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return out.Write(p) }),
		read: func(ctx context.Context, stop func() bool) (string, bool) {
			for {
				select {
				case l := <-lines:
					return l, true
				case <-time.After(5 * time.Millisecond):
					if stop() {
						return "", false
					}
				}
			}
		}}
	gate := permission.NewGate(permission.GateOptions{Broker: a.broker, Timeout: time.Minute,
		Publish: func(p event.Payload) { a.Handle(event.Event{Payload: p}) }})
	p, err := permission.NewPolicy(permission.Config{Ask: []string{"command(*)"}, AutomationDefault: rule.AllowAll}, "")
	if err != nil {
		t.Fatal(err)
	}
	gate.Add("a", p)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { a.run(ctx) })
	lines <- "y"
	if r := gate.Check(t.Context(), "a", "execute_command", `{"command":"ls"}`); r != "" {
		t.Errorf("y: refused: %s", r)
	}
	lines <- "no thanks"
	if r := gate.Check(t.Context(), "a", "execute_command", `{"command":"\u001b[2Jrm -rf x"}`); r == "" {
		t.Error("a line other than y allowed the call")
	}
	cancel()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if strings.Contains(out.String(), "\x1b") {
		t.Errorf("an escape sequence of the model's reached the terminal: %q", out.String())
	}
	if !strings.Contains(out.String(), `wants command "ls"`) || !strings.Contains(out.String(), "permission: allow") ||
		!strings.Contains(out.String(), "permission: deny") {
		t.Errorf("output %q", out.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
