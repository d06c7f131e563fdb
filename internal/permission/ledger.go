package permission

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"massgen/internal/event"

	"massgen/internal/private"
)

// LedgerFile is the audit ledger's path in a turn's log folder. MassGen writes
// .massgen/approvals/ledger.jsonl; here each turn keeps its own, next to its events.
const LedgerFile = "approvals/ledger.jsonl"

// maxPreview caps the arguments a ledger entry quotes.
const maxPreview = 200

// Entry is one ledger line: MassGen's ApprovalLedger fields (seq, timestamp, run_id,
// agent_id, tool, normalized_pattern, risk, reason, args_preview, decision, operator, scope,
// source, feedback), plus what this engine adds (id, action, target, rule, asked, by).
type Entry struct {
	Seq               int     `json:"seq"`
	Timestamp         float64 `json:"timestamp"`
	RunID             string  `json:"run_id"`
	AgentID           string  `json:"agent_id"`
	Tool              string  `json:"tool"`
	NormalizedPattern string  `json:"normalized_pattern"`
	Risk              string  `json:"risk"`
	Reason            string  `json:"reason"`
	ArgsPreview       string  `json:"args_preview"`
	Decision          string  `json:"decision"` // allow | deny
	Operator          string  `json:"operator"` // human | policy | rule | hardline | budget
	Scope             string  `json:"scope"`    // once: every answer here covers one call
	Source            string  `json:"source"`   // rule | provider | budget | hardline
	Feedback          string  `json:"feedback,omitempty"`
	ID                string  `json:"id"`
	Action            string  `json:"action"`
	Target            string  `json:"target"`
	Rule              string  `json:"rule,omitempty"`
	Asked             bool    `json:"asked"`
	By                string  `json:"by"`
}

// Ledger appends entries to the audit ledger, one JSON line each, written through to the
// file before the call runs: a crash loses no decision. It records; it never decides.
type Ledger struct {
	mu  sync.Mutex
	f   *os.File
	seq int
	err error // the first write error, reported once by Close
}

// OpenLedger creates the ledger in dir (a turn's log folder).
func OpenLedger(dir string) (*Ledger, error) {
	p := filepath.Join(dir, LedgerFile)
	if err := private.MkdirAll(filepath.Dir(p)); err != nil {
		return nil, fmt.Errorf("permissions ledger: %w", err)
	}
	f, err := private.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND)
	if err != nil {
		return nil, fmt.Errorf("permissions ledger: %w", err)
	}
	return &Ledger{f: f}, nil
}

// Write appends e, numbering it; a failed write is kept for Close and the run goes on.
func (l *Ledger) Write(e Entry) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e.Seq = l.seq
	l.seq++
	if e.Timestamp == 0 {
		e.Timestamp = float64(time.Now().UnixMicro()) / 1e6
	}
	b, err := json.Marshal(e)
	if err == nil {
		// One write per line, on a file without a buffer of its own: flushed per entry.
		_, err = l.f.Write(append(b, '\n'))
	}
	if err != nil && l.err == nil {
		l.err = fmt.Errorf("permissions ledger: %w", err)
	}
}

// LedgerSink writes to l every audited decision published (event.PermissionDecided), as the
// run with id runID records it: locally the gate's events, on Temporal the workers' events
// as they reach the starter, from their preview (a lost attempt's decisions are recorded
// too: its calls may have run) and not again when logged. It writes through, so a decision
// is on disk once published.
func LedgerSink(l *Ledger, runID string) event.Sink {
	return event.SinkFunc(func(e event.Event) {
		d, ok := e.Payload.(event.PermissionDecided)
		if !ok || !d.Audit || e.Previewed {
			return
		}
		operator, source := "policy", "provider"
		switch {
		case d.Rule == "hardline":
			operator, source = "hardline", "hardline"
		case d.By == event.ByRule:
			operator, source = "rule", "rule"
		case d.By == event.ByPerson:
			operator = "human"
		case d.By == event.ByBudget:
			operator, source = "budget", "budget"
		}
		var ts float64
		if !e.Time.IsZero() {
			ts = float64(e.Time.UnixMicro()) / 1e6
		}
		l.Write(Entry{Timestamp: ts, RunID: runID, AgentID: d.Agent, Tool: d.Tool, NormalizedPattern: d.Action + ":" + d.Target,
			Risk: d.Risk, Reason: d.Reason, ArgsPreview: d.Args, Decision: d.Decision, Operator: operator, Scope: "once",
			Source: source, ID: d.ID, Action: d.Action, Target: d.Target, Rule: d.Rule, Asked: d.Asked, By: d.By})
	})
}

// Close closes the file and reports the first write that failed.
func (l *Ledger) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return errors.Join(l.err, l.f.Close())
}
