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
	SessionID string              `json:"session_id"`
	LogDir    string              `json:"log_dir"`
	Status    string              `json:"status" jsonschema:"the newest turn's status: completed, timeout, failed, interrupted, running, incomplete (the process died) or unknown"`
	Turns     []runlog.TurnReport `json:"turns"`
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
	out := SessionReport{SessionID: id, LogDir: sess.Dir, Status: sess.Status(), Turns: []runlog.TurnReport{}}
	for _, t := range sess.Turns {
		if turn == 0 || t.N == turn {
			out.Turns = append(out.Turns, runlog.ReportTurn(t, s.now()))
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
