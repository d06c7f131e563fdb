package mcpserve

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/readmodel"
	"massgen/internal/runlog"
	"massgen/internal/usage"
)

// AskInput is ask_team's arguments.
type AskInput struct {
	Question     string   `json:"question"`
	Team         string   `json:"team,omitempty"`
	Files        []string `json:"files,omitempty"`
	ContextPaths []string `json:"context_paths,omitempty"`
	CwdContext   string   `json:"cwd_context,omitempty"`
}

// AskResult is ask_team's structured result.
type AskResult struct {
	Answer string        `json:"answer" jsonschema:"the final answer, as the presenting agent wrote it"`
	Winner string        `json:"winner" jsonschema:"the id of the agent that presented the final answer; empty when no agent answered"`
	Votes  []runlog.Vote `json:"votes" jsonschema:"the votes that counted at the end, in agent order"`
	// Decision is why the winner won (nil when coordination did not end with a winner).
	Decision  *readmodel.Decision `json:"decision,omitempty" jsonschema:"why the winner won: the tally with each vote's weight, confidence and reason, the strongest dissent, the verifiers' verdicts"`
	CostUSD   float64             `json:"cost_usd" jsonschema:"what the session's model calls cost, in US dollars"`
	CostKnown bool                `json:"cost_known" jsonschema:"false when some model has no price, so cost_usd is not its whole cost"`
	Tokens    runlog.Tokens       `json:"tokens"`
	LogDir    string              `json:"log_dir" jsonschema:"the session's log folder (absolute), for read_session and massgen logs"`
	SessionID string              `json:"session_id" jsonschema:"the session's log folder name, log_<timestamp>"`
	Team      string              `json:"team"`
	Status    string              `json:"status" jsonschema:"completed, timeout (the best answer so far), failed or interrupted"`
	ExitCode  int                 `json:"exit_code" jsonschema:"the exit code massgen would have ended with: 0 ok, 2 failed, 3 timeout, 4 interrupted"`
	Error     string              `json:"error,omitempty"`
}

// maxPaths bounds ask_team's files and context_paths together.
const maxPaths = 256

// askTeam is ask_team: it checks the arguments, takes a session slot and runs the session
// under a context the client's cancellation and Close both cancel.
func (s *Server) askTeam(ctx context.Context, req *mcp.CallToolRequest, in AskInput) (*mcp.CallToolResult, AskResult, error) {
	question := strings.TrimSpace(in.Question)
	switch {
	case question == "":
		return nil, AskResult{}, errors.New("the question is empty: pass the question or task for the team as question")
	case len(in.Question) > s.maxQ:
		return nil, AskResult{}, fmt.Errorf("the question is %d bytes, over this server's limit of %d: put long material in a file and share it with files", len(in.Question), s.maxQ)
	case !utf8.ValidString(question):
		return nil, AskResult{}, errors.New("the question is not valid UTF-8 text")
	}
	name, cfg, err := s.team(in.Team)
	if err != nil {
		return nil, AskResult{}, err
	}
	if cfg, err = s.shareFiles(cfg, in); err != nil {
		return nil, AskResult{}, err
	}
	if err := s.acquire(); err != nil {
		return nil, AskResult{}, err
	}
	defer s.release()

	runCtx, cancel := context.WithCancel(s.base)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel) // the client cancelled, or went away
	defer stop()
	p := newProgress(req)
	if p.notify != nil {
		p.start(ctx)
	}
	res, err := s.run(runCtx, cfg, app.Options{
		Question: question,
		Logging:  true,
		LogRoot:  s.logRoot,
		Sinks:    []event.Sink{p},
		Version:  s.version,
		Secrets:  []string{s.token},
		// What metadata.json records; massgen logs and serve read the team back from it.
		Args: []string{"massgen", "mcp", "--config", name + "=" + cfg.Path},
	})
	p.finish()
	if err != nil {
		// Could not start: the same message the command line prints (a missing key, a
		// context path that does not exist, an MCP server that cannot start, ...).
		var ae *app.Error
		if errors.As(err, &ae) {
			return nil, AskResult{}, ae.Err
		}
		return nil, AskResult{}, err
	}
	out := result(name, res, p.snapshot())
	return toolResult(out, res), out, nil
}

// team returns the team named name, the first one for "".
func (s *Server) team(name string) (string, *config.Config, error) {
	if name == "" {
		return s.teams[0].Name, s.teams[0].Config, nil
	}
	if cfg, ok := s.byName[name]; ok {
		return name, cfg, nil
	}
	return "", nil, fmt.Errorf("no team %q: the teams are %s (list_teams describes them)", name, strings.Join(s.teamNames(), ", "))
}

func (s *Server) teamNames() []string {
	names := make([]string, len(s.teams))
	for i, t := range s.teams {
		names[i] = t.Name
	}
	return names
}

// shareFiles returns cfg with files, context_paths and cwd_context added to its context paths
// (the YAML's own entries keep theirs), as the command line adds @paths and --cwd-context.
// cfg itself is never changed.
func (s *Server) shareFiles(cfg *config.Config, in AskInput) (*config.Config, error) {
	mode := strings.ToLower(in.CwdContext)
	switch mode {
	case "", "ro", "rw", "read", "write":
	default:
		return nil, fmt.Errorf("cwd_context %q: use ro (the agents may read %s) or rw (the final presenter may also write it)", in.CwdContext, s.dir)
	}
	paths := slices.Concat(in.Files, in.ContextPaths)
	if len(paths) == 0 && mode == "" {
		return cfg, nil
	}
	if len(paths) > maxPaths {
		return nil, fmt.Errorf("%d files and context paths: share at most %d (a folder shares everything in it)", len(paths), maxPaths)
	}
	add, err := s.resolvePaths(paths)
	if err != nil {
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(s.dir); mode != "" && (err != nil || !s.allows(real)) {
		return nil, s.outsideError([]string{"cwd_context's folder " + s.dir})
	}
	out := *cfg
	merged := slices.Clone(cfg.Orchestrator.ContextPaths)
	for _, a := range add {
		if !slices.ContainsFunc(merged, func(c config.ContextPath) bool { return samePath(c.Path, a.Path) }) {
			merged = append(merged, a)
		}
	}
	if mode != "" {
		// cwd_context decides the folder's permission, also of an entry the config has for
		// it, as --cwd-context does.
		k := slices.IndexFunc(merged, func(c config.ContextPath) bool { return samePath(c.Path, s.dir) })
		if k < 0 {
			merged = append(merged, config.ContextPath{Path: s.dir})
			k = len(merged) - 1
		}
		merged[k].Write = mode == "rw" || mode == "write"
	}
	out.Orchestrator.ContextPaths = merged
	return &out, nil
}

// resolvePaths turns the paths a client gave into read-only context paths: ~ is the home
// folder, a relative path is taken from the server's folder. Every one must exist and lie,
// symlinks resolved, in an allowed folder; the error names each one that does not. The
// context paths are the resolved ones, so a link changed after the check changes nothing.
func (s *Server) resolvePaths(paths []string) ([]config.ContextPath, error) {
	var out []config.ContextPath
	var bad, outside []string
	for _, given := range paths {
		p := strings.TrimSpace(given)
		if p == "" {
			bad = append(bad, `"" (an empty path)`)
			continue
		}
		if p == "~" || strings.HasPrefix(p, "~/") {
			home, err := os.UserHomeDir()
			if err != nil {
				bad = append(bad, fmt.Sprintf("%s (no home folder to expand ~ in)", given))
				continue
			}
			p = home + p[1:]
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(s.dir, p)
		}
		p = filepath.Clean(p)
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s (%s does not exist)", given, p))
			continue
		}
		if !s.allows(real) {
			if real != p {
				given += " (a link to " + real + ")"
			}
			outside = append(outside, given)
			continue
		}
		p = real
		if !slices.ContainsFunc(out, func(c config.ContextPath) bool { return c.Path == p }) {
			out = append(out, config.ContextPath{Path: p})
		}
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("files that do not exist: %s. Paths are taken from the server's folder %s unless absolute", strings.Join(bad, "; "), s.dir)
	}
	if len(outside) > 0 {
		return nil, s.outsideError(outside)
	}
	return out, nil
}

func samePath(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}

// result is what a session that ran reports.
func result(team string, res app.Result, st *readmodel.State) AskResult {
	out := AskResult{
		Answer: res.FinalAnswer, Winner: res.Winner, Votes: []runlog.Vote{}, Team: team,
		CostUSD: res.CostUSD, CostKnown: st.CostKnown(), Status: res.Status, ExitCode: res.ExitCode,
		Tokens:    runlog.TokensOf(res.Usage),
		SessionID: res.Session,
	}
	if res.Dir != "" {
		out.LogDir = filepath.Dir(res.Dir) // the session folder, as the automation's LOG_DIR:
	}
	for _, a := range st.Agents {
		if v := a.Vote; v != nil && v.Version == st.Version {
			out.Votes = append(out.Votes, runlog.Vote{Voter: a.ID, For: v.Target, Reason: v.Reason})
		}
	}
	out.Decision = st.Decision()
	if res.Err != nil {
		out.Error = res.Err.Error()
	}
	if res.CloseErr != nil {
		out.Error = strings.TrimPrefix(out.Error+"; ", "; ") + "some log files could not be written: " + res.CloseErr.Error()
	}
	return out
}

// toolResult is the content a client's model reads: the answer, then one line saying who won,
// how the session ended, what it cost and where its log is. A session without an answer, or
// interrupted or failed, is a tool error that starts with why.
func toolResult(out AskResult, res app.Result) *mcp.CallToolResult {
	var sum strings.Builder
	fmt.Fprintf(&sum, "massgen team %s: %s (exit %d)", out.Team, out.Status, out.ExitCode)
	if out.Winner != "" {
		fmt.Fprintf(&sum, "; winner %s with %d of %d counted votes", out.Winner, votesFor(out.Votes, out.Winner), len(out.Votes))
	}
	if note := event.TruncationNote(res.TruncatedBy); note != "" {
		sum.WriteString("; the answer is cut off " + note)
	}
	cost := usage.Amount{USD: out.CostUSD, Known: out.CostKnown, Estimated: out.Tokens.Estimated}
	fmt.Fprintf(&sum, "; cost %s; %d input and %d output tokens", cost, out.Tokens.Input, out.Tokens.Output)
	if out.LogDir != "" {
		fmt.Fprintf(&sum, "; log %s", out.LogDir)
	}
	if out.Error != "" {
		fmt.Fprintf(&sum, "; error: %s", out.Error)
	}
	r := &mcp.CallToolResult{}
	var why string
	switch {
	case out.ExitCode == app.ExitInterrupted:
		why = "the session was interrupted (the call was cancelled, or the server is stopping); what it produced is kept in its log"
	case out.Answer == "":
		why = "the team produced no answer"
	case out.ExitCode == app.ExitExecution:
		why = "the session failed; this is the best answer it had"
	}
	if why != "" {
		r.IsError = true
		r.Content = []mcp.Content{&mcp.TextContent{Text: why + ".\n" + sum.String()}}
	}
	if out.Answer != "" {
		r.Content = append(r.Content, &mcp.TextContent{Text: out.Answer})
	}
	if why == "" {
		r.Content = append(r.Content, &mcp.TextContent{Text: sum.String()})
	}
	return r
}

func votesFor(votes []runlog.Vote, id string) int {
	n := 0
	for _, v := range votes {
		if v.For == id {
			n++
		}
	}
	return n
}
