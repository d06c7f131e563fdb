package runlog

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"massgen/internal/provider"
)

// Continuation is what the next turn of a logged session starts from, rebuilt from its log
// folder alone, so a session goes on in a new process as it would have in the old one: the
// conversation (earlier questions and final answers), the last winner's workspace, and the
// config the session ran with (its MCP servers come from there).
type Continuation struct {
	Session  Session
	NextTurn int
	// History is the conversation the next turn carries: the history the newest readable turn
	// started with, plus its question and answer when it has one. Questions and answers are
	// as the log holds them, secrets already replaced.
	History []provider.Message
	// Answered is the newest turn with an answer (0: none); Unfinished are the turns after it
	// that ended without one (crashed, interrupted or failed): the next turn continues from
	// Answered, as the interactive loop would have.
	Answered   int
	Unfinished []TurnSummary
	// Workspace is final/<winner>/workspace of the newest turn of the conversation that has
	// one; "" for none.
	Workspace string
	// From the newest turn that recorded them (metadata.json).
	ConfigPath string
	Args       []string
	Team       []TeamAgent
}

// Continue rebuilds what session s's next turn starts from.
//
// The history of a turn that crashed, was interrupted or failed is the one it started with:
// nothing of it is carried, and the workspace is that of the newest earlier winner. A turn that
// started with an empty history began a new conversation (the first turn, or one after
// /reset), so no earlier workspace is carried past it.
func Continue(s Session) (*Continuation, error) {
	if len(s.Turns) == 0 {
		return nil, fmt.Errorf("session %s has no turn_<n> folders: nothing to continue", s.ID)
	}
	c := &Continuation{Session: s, NextTurn: s.Last().N + 1}
	base := -1
	for i, t := range slices.Backward(s.Turns) {
		st, err := FirstEvent(t.Dir)
		if err != nil {
			continue // the process died before it wrote anything
		}
		base = i
		c.History = slices.Clone(st.History)
		if t.Answered() {
			if answer, ok := FinalAnswerText(t); ok {
				c.History = append(c.History,
					provider.Message{Role: provider.RoleUser, Content: st.Question},
					provider.Message{Role: provider.RoleAssistant, Content: answer})
			}
		}
		break
	}
	if a, ok := s.LastAnswered(); ok && len(c.History) > 0 {
		c.Answered = a.N
	}
	for _, t := range s.Turns {
		if t.N > c.Answered && !t.Answered() {
			c.Unfinished = append(c.Unfinished, t)
		}
	}
	for j := base; j >= 0; j-- {
		t := s.Turns[j]
		if ws := winnerDir(t, "workspace"); ws != "" {
			c.Workspace = ws
			break
		}
		if st, err := FirstEvent(t.Dir); err == nil && len(st.History) == 0 {
			break
		}
	}
	for _, t := range slices.Backward(s.Turns) {
		if t.ConfigPath != "" || len(t.Team) > 0 || len(t.Args) > 0 {
			c.ConfigPath, c.Args, c.Team = t.ConfigPath, t.Args, t.Team
			break
		}
	}
	return c, nil
}

// FinalAnswerText reads the final answer turn t wrote (final/<winner>/answer.txt), at most
// event.MaxLine bytes of it.
func FinalAnswerText(t TurnSummary) (string, bool) {
	dir := winnerDir(t, "")
	if dir == "" {
		return "", false
	}
	data, err := readCapped(filepath.Join(dir, "answer.txt"), maxAnswerFile, true)
	if err != nil {
		return "", false
	}
	return strings.ToValidUTF8(string(data), "\uFFFD"), true
}

// winnerDir returns final/<winner>[/sub] in turn t, if it is a real folder: a link planted in
// a log could otherwise make massgen copy any folder into the next turn's workspaces. The
// winner is the recorded one, else the only folder under final/.
func winnerDir(t TurnSummary, sub string) string {
	final := filepath.Join(t.Dir, "final")
	if !realDir(final) {
		return ""
	}
	name := ""
	if t.Winner != "" {
		name = safeName(t.Winner)
	} else {
		entries, _ := os.ReadDir(final)
		for _, e := range entries {
			if e.IsDir() {
				if name != "" {
					return "" // two candidates and no record of the winner
				}
				name = e.Name()
			}
		}
	}
	if name == "" {
		return ""
	}
	dir := filepath.Join(final, name)
	if !realDir(dir) {
		return ""
	}
	if sub != "" {
		dir = filepath.Join(dir, sub)
		if !realDir(dir) {
			return ""
		}
	}
	return dir
}

// realDir reports whether path is a folder itself, not a link to one.
func realDir(path string) bool {
	info, err := os.Lstat(path)
	return err == nil && info.IsDir()
}
