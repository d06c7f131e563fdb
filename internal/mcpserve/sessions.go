package mcpserve

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"massgen/internal/runlog"
)

// ReadInput is read_session's arguments.
type ReadInput struct {
	LogDir    string `json:"log_dir,omitempty" jsonschema:"a session's log folder (the log_dir ask_team returned) or one of its turn_<n> folders, under this server's log root"`
	SessionID string `json:"session_id,omitempty" jsonschema:"a session id, log_<timestamp>"`
}

// SessionReport is read_session's result.
type SessionReport struct {
	SessionID string       `json:"session_id"`
	LogDir    string       `json:"log_dir"`
	Status    string       `json:"status" jsonschema:"the newest turn's status: completed, timeout, failed, interrupted, running, incomplete (the process died) or unknown"`
	Turns     []TurnReport `json:"turns"`
}

// TurnReport is one turn of a session.
type TurnReport struct {
	Turn            int           `json:"turn"`
	Dir             string        `json:"dir"`
	Question        string        `json:"question"`
	Status          string        `json:"status"`
	ExitCode        *int          `json:"exit_code,omitempty"`
	Error           string        `json:"error,omitempty"`
	DurationSeconds float64       `json:"duration_seconds"`
	Agents          []AgentReport `json:"agents"`
	Answers         int           `json:"answers" jsonschema:"answers accepted in the turn"`
	Votes           []Vote        `json:"votes" jsonschema:"the votes that counted at the end"`
	Winner          string        `json:"winner"`
	WinnerAnswer    string        `json:"winner_answer,omitempty" jsonschema:"the label of the answer that won, agent<i>.<k>"`
	FinalAnswer     string        `json:"final_answer"`
	Tokens          Tokens        `json:"tokens"`
	CostUSD         float64       `json:"cost_usd"`
	CostKnown       bool          `json:"cost_known"`
	Incomplete      string        `json:"incomplete,omitempty" jsonschema:"why the log is known to be incomplete"`
}

// AgentReport is one agent in a turn.
type AgentReport struct {
	ID        string `json:"id"`
	Backend   string `json:"backend"`
	Model     string `json:"model"`
	Status    string `json:"status"`
	Answers   int    `json:"answers"`
	VotesCast int    `json:"votes_cast"`
	Errors    int    `json:"errors"`
}

func (s *Server) readSession(_ context.Context, _ *mcp.CallToolRequest, in ReadInput) (*mcp.CallToolResult, SessionReport, error) {
	id, turn, err := s.locate(in)
	if err != nil {
		return nil, SessionReport{}, err
	}
	sess, err := runlog.ReadSession(s.logRoot, id, s.now())
	if err != nil {
		return nil, SessionReport{}, fmt.Errorf("cannot read session %s: %w", id, err)
	}
	out := SessionReport{SessionID: id, LogDir: sess.Dir, Status: sess.Status(), Turns: []TurnReport{}}
	for _, t := range sess.Turns {
		if turn == 0 || t.N == turn {
			out.Turns = append(out.Turns, reportTurn(t))
		}
	}
	return nil, out, nil
}

// locate finds the session (and turn, 0 for all) in asks for. A log_dir must lie in this
// server's log root: read_session reads logs, not whatever folder a caller names.
func (s *Server) locate(in ReadInput) (string, int, error) {
	switch {
	case in.LogDir != "" && in.SessionID != "":
		return "", 0, errors.New("give log_dir or session_id, not both")
	case in.SessionID != "":
		if !runlog.IsSessionID(in.SessionID) {
			return "", 0, fmt.Errorf("%q is not a session id: ids are log_<timestamp> folder names, as ask_team's session_id", in.SessionID)
		}
		if _, err := os.Stat(filepath.Join(s.logRoot, in.SessionID)); err != nil {
			return "", 0, fmt.Errorf("no session %s in the log root %s", in.SessionID, s.logRoot)
		}
		return in.SessionID, 0, nil
	case in.LogDir != "":
		return s.locateDir(in.LogDir)
	}
	ids, err := runlog.SessionIDs(s.logRoot)
	if err != nil {
		return "", 0, fmt.Errorf("cannot list the sessions in %s: %w", s.logRoot, err)
	}
	if len(ids) == 0 {
		return "", 0, fmt.Errorf("no session in the log root %s yet: ask_team writes one", s.logRoot)
	}
	return ids[0], 0, nil
}

func (s *Server) locateDir(dir string) (string, int, error) {
	notOurs := fmt.Errorf("%s is not a session folder under this server's log root %s: pass a log_dir ask_team returned, "+
		"or a session_id (massgen mcp --log-root sets the root)", dir, s.logRoot)
	p := dir
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.dir, p)
	}
	real, err := filepath.EvalSymlinks(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", 0, fmt.Errorf("%s does not exist", p)
	}
	if err != nil {
		return "", 0, fmt.Errorf("cannot read %s: %w", p, err)
	}
	root, err := filepath.EvalSymlinks(s.logRoot)
	if err != nil {
		return "", 0, notOurs
	}
	rel, err := filepath.Rel(root, real)
	if err != nil {
		return "", 0, notOurs
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	switch {
	case len(parts) == 1 && runlog.IsSessionName(parts[0]):
		return parts[0], 0, nil
	case len(parts) == 2 && runlog.IsSessionName(parts[0]) && runlog.IsTurnName(parts[1]):
		n, _ := strconv.Atoi(strings.TrimPrefix(parts[1], "turn_"))
		return parts[0], n, nil
	}
	return "", 0, notOurs
}

// reportTurn folds the turn's events.jsonl (at most runlog.MaxEventsRead of it); what its
// summary files say fills in for a log that cannot be read.
func reportTurn(t runlog.TurnSummary) TurnReport {
	r := TurnReport{Turn: t.N, Dir: t.Dir, Question: t.Question, Status: t.Status, ExitCode: t.ExitCode, Error: t.Error,
		DurationSeconds: t.Duration, Agents: []AgentReport{}, Votes: []Vote{}, Winner: t.Winner, CostUSD: t.CostUSD, CostKnown: true,
		Tokens: Tokens{Input: t.Usage.InputTokens, CachedInput: t.Usage.CachedInputTokens, Output: t.Usage.OutputTokens,
			Reasoning: t.Usage.ReasoningTokens, Estimated: t.Usage.Estimated}}
	if text, ok := runlog.FinalAnswerText(t); ok {
		r.FinalAnswer = text
	}
	turn, err := runlog.ReadTurnLimited(t.Dir)
	if err != nil {
		r.Incomplete = err.Error()
		return r
	}
	st := turn.State
	r.Incomplete = turn.Incomplete
	if r.Question == "" {
		r.Question = st.Question
	}
	if st.Ended {
		code := st.ExitCode
		r.Status, r.ExitCode, r.Error = st.SessionStatus, &code, st.SessionError
	}
	for _, a := range st.Agents {
		r.Agents = append(r.Agents, AgentReport{ID: a.ID, Backend: a.Backend, Model: a.Model, Status: string(a.Status),
			Answers: len(a.Answers), VotesCast: a.VotesCast, Errors: a.Errors})
		if v := a.Vote; v != nil && v.Version == st.Version {
			r.Votes = append(r.Votes, Vote{Voter: a.ID, For: v.Target, Reason: v.Reason})
		}
	}
	r.Answers, r.WinnerAnswer, r.CostKnown = st.Totals.Answers, st.WinnerAnswer, st.CostKnown()
	if st.Winner != "" {
		r.Winner = st.Winner
	}
	if st.Final != nil && st.Final.Content != "" {
		r.FinalAnswer = st.Final.Content
	}
	u := st.Totals.Usage
	r.Tokens = Tokens{Input: u.InputTokens, CachedInput: u.CachedInputTokens, Output: u.OutputTokens, Reasoning: u.ReasoningTokens, Estimated: u.Estimated}
	r.CostUSD = st.Totals.CostUSD
	return r
}
