package temporalrun

import (
	"errors"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"massgen/internal/durable"
)

// A worker without --trust-sessions refuses a session with a coding-agent CLI agent (it
// would run the CLI, with its own file and shell tools, on the worker's machine), saying
// which agent and naming the flag; with the flag it takes the session.
func TestReceive_CLIAgentNeedsTrustedSessions(t *testing.T) {
	for _, typ := range []string{"claude_code", "codex", "gemini_cli", "copilot"} {
		t.Run(typ, func(t *testing.T) {
			cfg := loadTeam(t, "agents:\n  - id: coder\n    backend: {type: "+typ+"}\n")
			doc, err := durable.Encode(cfg)
			if err != nil {
				t.Fatal(err)
			}
			_, err = (&Activities{}).receive(Session{Config: doc})
			var ae *temporal.ApplicationError
			if !errors.As(err, &ae) || ae.Type() != refusedType || !ae.NonRetryable() {
				t.Fatalf("untrusted worker: %v, want a non-retryable %q error", err, refusedType)
			}
			for _, want := range []string{"agent coder: runs the " + typ + " coding-agent CLI", "--trust-sessions"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%q does not say %q", err, want)
				}
			}
			if _, err := (&Activities{TrustSessions: true}).receive(Session{Config: doc}); err != nil {
				t.Errorf("trusted worker: %v", err)
			}
		})
	}
}
