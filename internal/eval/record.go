package eval

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
	"time"

	"massgen/internal/event"
	"massgen/internal/private"
)

// Item statuses in the results file.
const (
	StatusOK     = "ok"     // the session ran and has a final answer (a timeout included)
	StatusFailed = "failed" // the session could not start or ended in an execution error
)

// Record is one line of the results file: one finished item. It holds the raw answers, so the
// summary grades them afresh from the dataset; the Correct fields are what the grader said
// when the line was written, for people reading the file.
type Record struct {
	ID string `json:"id"`
	// Fingerprint identifies the item's question, answers and grader: a resumed run refuses
	// a results file whose items changed since.
	Fingerprint string `json:"fingerprint"`
	// Team identifies the config the item ran with.
	Team     string `json:"team"`
	Status   string `json:"status"`
	Error    string `json:"error,omitempty"`
	ExitCode int    `json:"exit_code"`
	// EndReason is how coordination ended (consensus, timeout, ...).
	EndReason string `json:"end_reason,omitempty"`
	LogDir    string `json:"log_dir,omitempty"`
	Winner    string `json:"winner,omitempty"`
	Final     string `json:"final_answer"`
	Correct   bool   `json:"correct"`
	// Agents are in config order.
	Agents []AgentRecord `json:"agents"`
	// Votes are those of the final tally: the votes that decided the winner.
	Votes  []Vote `json:"votes,omitempty"`
	Tokens Tokens `json:"tokens"`
	// Calls counts the session's model calls (attempts included).
	Calls     int       `json:"calls"`
	CostUSD   float64   `json:"cost_usd"`
	CostKnown bool      `json:"cost_known"`
	Seconds   float64   `json:"wall_seconds"`
	Started   time.Time `json:"started"`
}

// AgentRecord is what one agent did on an item.
type AgentRecord struct {
	ID      string `json:"id"`
	Backend string `json:"backend"`
	Model   string `json:"model,omitempty"`
	// Answers are every answer of the agent the session accepted, in order: the first is
	// what it would have said alone, the last where the team's discussion left it.
	Answers []string `json:"answers"`
	// Endorsed, for an agent that never answered, is the answer its first vote was for (an
	// agent that joined late under lazy start and agreed): its stance, graded as its answer.
	Endorsed     string `json:"endorsed,omitempty"`
	FirstCorrect bool   `json:"first_correct"`
	LastCorrect  bool   `json:"last_correct"`
	// CostUSD is the agent's whole spend on the item; FirstCostUSD and FirstTokens what it
	// spent until its first answer was accepted, the price of answering alone.
	CostUSD      float64 `json:"cost_usd"`
	FirstCostUSD float64 `json:"first_cost_usd"`
	FirstTokens  Tokens  `json:"first_tokens"`
	// Calls counts its model calls; FirstCalls those until its first answer was accepted.
	Calls      int  `json:"calls"`
	FirstCalls int  `json:"first_calls"`
	Unpriced   bool `json:"unpriced,omitempty"`
	// Error is the agent's last error, when it had one.
	Error string `json:"error,omitempty"`
}

// Vote is one vote of the final tally.
type Vote struct {
	Voter string `json:"voter"`
	For   string `json:"for"`
}

// Tokens add up the usage of model calls.
type Tokens struct {
	Input       int64 `json:"input"`
	CachedInput int64 `json:"cached_input"`
	Output      int64 `json:"output"`
	Reasoning   int64 `json:"reasoning"`
}

// Add returns the sum of two counts.
func (t Tokens) Add(o Tokens) Tokens {
	return Tokens{t.Input + o.Input, t.CachedInput + o.CachedInput, t.Output + o.Output, t.Reasoning + o.Reasoning}
}

// Fingerprint identifies what an item asks and how it is graded.
func (it Item) Fingerprint() string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%q\x00%g", it.ID, it.Prompt, it.Grader, it.Answers, it.Tolerance)
	if it.Pattern != nil {
		fmt.Fprintf(h, "\x00%s", it.Pattern.String())
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// grade fills the Correct fields of r from the item.
func (r *Record) grade(it Item) {
	r.Correct = r.Status == StatusOK && it.Correct(r.Final)
	for k := range r.Agents {
		a := &r.Agents[k]
		a.FirstCorrect = len(a.Answers) > 0 && it.Correct(a.Answers[0])
		a.LastCorrect = len(a.Answers) > 0 && it.Correct(a.Answers[len(a.Answers)-1])
	}
}

// ReadResults reads a results file: the last line of each id wins (a failed item retried
// later is done). A file that does not exist holds nothing. A last line cut off mid-write
// (the process was killed) is skipped with a warning; any other bad line is an error.
func ReadResults(path string) (map[string]Record, []string, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]Record{}, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("open the results file: %w", err)
	}
	defer f.Close()
	out := map[string]Record{}
	var warnings []string
	r := bufio.NewReader(f)
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, nil, fmt.Errorf("read %s: %w", path, err)
		}
		last := errors.Is(err, io.EOF)
		text := bytes.TrimSpace(line)
		if len(text) > 0 {
			var rec Record
			if jerr := json.Unmarshal(text, &rec); jerr != nil || rec.ID == "" {
				if last && !bytes.HasSuffix(line, []byte("\n")) {
					warnings = append(warnings, fmt.Sprintf("%s:%d: the last line was cut off (the run was killed while writing it); that item runs again", path, n))
					break
				}
				return nil, nil, fmt.Errorf("%s:%d: not a result line (is this a results file of massgen eval?)", path, n)
			}
			out[rec.ID] = rec
		}
		if last {
			break
		}
	}
	return out, warnings, nil
}

// resultsFile appends records, one line each, as items finish.
type resultsFile struct {
	mu sync.Mutex
	f  *os.File
}

// openResults opens path for appending, creating it; a last line without its newline (cut off
// by a kill) gets one, so the next record starts on its own line.
func openResults(path string) (*resultsFile, error) {
	f, err := private.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_APPEND)
	if err != nil {
		return nil, fmt.Errorf("open the results file: %w", err)
	}
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		b := make([]byte, 1)
		if _, err := f.ReadAt(b, st.Size()-1); err == nil && b[0] != '\n' {
			if _, err := f.Write([]byte("\n")); err != nil {
				f.Close()
				return nil, fmt.Errorf("write %s: %w", path, err)
			}
		}
	}
	return &resultsFile{f: f}, nil
}

// append writes one record as one line in one write, so that a kill leaves at worst a cut
// last line.
func (w *resultsFile) append(r Record) error {
	b, err := event.MarshalPlain(r)
	if err != nil {
		return fmt.Errorf("encode the result of %s: %w", r.ID, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write the result of %s: %w", r.ID, err)
	}
	return nil
}

func (w *resultsFile) close() error { return w.f.Close() }

// oneLine shortens an error message to one line for the progress output.
func oneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
