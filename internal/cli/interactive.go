package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/lineedit"
	"massgen/internal/provider"
	"massgen/internal/runlog"
	"massgen/internal/termtext"
)

const interactiveHelp = `Type a question and press Enter; the agents answer it with the conversation so far.
Commands:
  /help, /h          this help
  /status            the team, the turns so far and the log folder
  /reset, /clear     forget the conversation and the files of earlier turns (the next
                     question starts fresh)
  /quit, /exit, /q   leave (Ctrl-D too, or Ctrl-C twice)
Keys: ←/→, Home/End (Ctrl-A/E), ↑/↓ history, Ctrl-K/U/W delete to the end, to the start, a
word; Ctrl-C clears the line.`

const promptText = "User: "

// interactiveSetup is where an interactive run starts.
type interactiveSetup struct {
	resume  *runlog.Continuation // the logged session it continues; nil for a new one
	logRoot string
	history string // the prompt history file; "" keeps the history in memory
}

// setup is the interactive start of a run writing logs under logRoot (when logging).
func (s *sessionFlags) setup(logRoot string, logging bool) interactiveSetup {
	st := interactiveSetup{resume: s.continuation(), logRoot: logRoot}
	if logging {
		// Beside the logs, which hold every question anyway, and hidden from the agents with
		// them; one file per log root, so each project has its own.
		st.history = filepath.Join(logRoot, "prompt_history")
	}
	return st
}

// interactive runs a prompt loop: each question is one turn of the same session, logged under
// turn_<n> of one log folder, with the earlier questions and final answers as history. The turns
// share their MCP servers, and each starts from the previous winner's workspace. A session
// continued from its log folder goes on where it stopped.
func interactive(ctx context.Context, cfg *config.Config, setup interactiveSetup, in io.Reader, stdout io.Writer,
	runTurn func(app.Options) (app.Result, error)) error {
	return converse(ctx, cfg, setup, newPrompter(in, stdout, setup.history), stdout, runTurn)
}

// prompter reads the questions.
type prompter interface {
	// ask shows the prompt and returns the line typed: io.EOF at the end of the input,
	// lineedit.ErrInterrupted after Ctrl-C twice, or ctx's error once ctx has ended.
	ask(ctx context.Context) (string, error)
	// remember keeps a line for ↑.
	remember(line string)
}

// newPrompter is the line editor when in and out are the same terminal, else plain lines.
func newPrompter(in io.Reader, out io.Writer, historyPath string) prompter {
	fin, okIn := in.(*os.File)
	fout, okOut := out.(*os.File)
	if okIn && okOut {
		if r, ok := lineedit.Open(fin, fout); ok {
			hist, err := lineedit.OpenHistory(historyPath, 0)
			p := &editorPrompter{r: r, hist: hist, out: out}
			if err != nil {
				p.warn(err)
			}
			return p
		}
	}
	lines := bufio.NewScanner(in)
	lines.Buffer(make([]byte, 0, 64<<10), 1<<20)
	// What is typed shows on the terminal; anywhere else (a pipe, a file) the transcript
	// would read "User: massgen: ..." without it.
	return &plainPrompter{lines: lines, out: out, echo: !isTerminal(out, in)}
}

// editorPrompter edits lines in raw mode with history.
type editorPrompter struct {
	r      *lineedit.Reader
	hist   *lineedit.History
	out    io.Writer
	warned bool
}

func (p *editorPrompter) ask(ctx context.Context) (string, error) {
	fmt.Fprintln(p.out)
	return p.r.ReadLine(ctx, promptText, p.hist.Entries())
}

func (p *editorPrompter) remember(line string) {
	if err := p.hist.Add(line); err != nil {
		p.warn(err)
	}
}

// warn reports a history file that cannot be used, once: the history still works in memory.
func (p *editorPrompter) warn(err error) {
	if !p.warned {
		p.warned = true
		fmt.Fprintf(p.out, "warning: %v (the history is kept for this session only)\n", err)
	}
}

// plainPrompter reads lines as they come: from a pipe, a file, or a terminal this system has
// no line editor for.
type plainPrompter struct {
	lines *bufio.Scanner
	out   io.Writer
	echo  bool
}

func (p *plainPrompter) ask(ctx context.Context) (string, error) {
	fmt.Fprint(p.out, "\n"+promptText)
	if !p.lines.Scan() {
		fmt.Fprintln(p.out)
		if err := p.lines.Err(); err != nil {
			return "", err
		}
		return "", io.EOF
	}
	// A Ctrl-C that came while the prompt waited is for the prompt, never for this line.
	if err := ctx.Err(); err != nil {
		fmt.Fprintln(p.out)
		return "", err
	}
	line := p.lines.Text()
	if p.echo {
		fmt.Fprintln(p.out, termtext.Clean(line))
	}
	return line, nil
}

func (p *plainPrompter) remember(string) {}

// converse is the loop of interactive, reading from p.
func converse(ctx context.Context, cfg *config.Config, setup interactiveSetup, p prompter, stdout io.Writer,
	runTurn func(app.Options) (app.Result, error)) (err error) {
	banner(stdout, cfg, setup.resume)
	conv := app.NewConversation()
	var history []provider.Message
	session, turn := "", 0
	if r := setup.resume; r != nil {
		conv = app.ResumeConversation(r.Workspace)
		history, session, turn = slices.Clone(r.History), r.Session.ID, r.NextTurn-1
	}
	defer func() {
		if cerr := conv.Close(); cerr != nil && err == nil {
			err = &exitError{code: ExitExecution, err: cerr}
		}
	}()
	ran := 0 // turns this process started
	for {
		line, err := p.ask(ctx)
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case errors.Is(err, lineedit.ErrInterrupted) || ctx.Err() != nil:
			// Ctrl-C at the prompt leaves; nothing was running, so nothing is lost.
			fmt.Fprintln(stdout, "Goodbye")
			return nil
		case err != nil:
			return exitf(ExitExecution, "cannot read the question: %v", err)
		}
		q := strings.TrimSpace(line)
		if q != "" {
			p.remember(q)
		}
		switch strings.ToLower(q) {
		case "":
			continue
		case "/quit", "/exit", "/q", "quit", "exit", "q":
			return nil
		case "/help", "/h":
			fmt.Fprintln(stdout, interactiveHelp)
			continue
		case "/reset", "/clear", "reset", "clear":
			history = nil
			conv.Reset()
			fmt.Fprintln(stdout, "Conversation cleared.")
			continue
		case "/status":
			fmt.Fprintf(stdout, "agents: %s\nturns: %d (%d in the current conversation)\n", termtext.Clean(agentSummary(cfg)), turn, len(history)/2)
			if session != "" {
				fmt.Fprintf(stdout, "logs: %s\n", termtext.Clean(shellQuote(absPath(filepath.Join(setup.logRoot, session)))))
			}
			continue
		}
		if strings.HasPrefix(q, "/") {
			fmt.Fprintf(stdout, "Unknown command %s; /help lists the commands.\n", termtext.Clean(q))
			continue
		}
		turn++
		ran++
		res, err := runTurn(app.Options{Question: q, History: history, Session: session, Turn: turn, Conversation: conv})
		if err != nil {
			if ran == 1 || ctx.Err() != nil {
				return err // the setup is wrong: nothing to keep
			}
			// A later turn that could not start leaves the conversation as it was.
			fmt.Fprintf(stdout, "This turn could not start: %v\n", err)
			continue
		}
		if res.Session != "" {
			session = res.Session
		}
		if res.ExitCode == ExitInterrupted || ctx.Err() != nil {
			return &exitError{code: ExitInterrupted, err: errors.New("interrupted")}
		}
		if res.FinalAnswer != "" {
			history = append(history,
				provider.Message{Role: provider.RoleUser, Content: q},
				provider.Message{Role: provider.RoleAssistant, Content: res.FinalAnswer})
		}
	}
}

// banner introduces the loop in a few short lines, so it never wraps mid-word.
func banner(w io.Writer, cfg *config.Config, resume *runlog.Continuation) {
	tw := termtext.NewWriter(w)
	fmt.Fprintf(tw, "massgen interactive: %s\n", plural(len(cfg.Agents), "agent"))
	width := 0
	for _, a := range cfg.Agents {
		width = max(width, min(len(a.ID), 24))
	}
	for _, a := range cfg.Agents {
		fmt.Fprintf(tw, "  %-*s  %s\n", width, a.ID, strings.TrimSpace(a.Backend.Type+" "+a.Backend.Model))
	}
	if resume != nil {
		for _, l := range continuingNote(resume) {
			fmt.Fprintln(tw, strings.ToUpper(l[:1])+l[1:])
		}
	}
	fmt.Fprintln(tw, "/help lists the commands; /quit or Ctrl-D leaves.")
}

func agentSummary(cfg *config.Config) string {
	parts := make([]string, 0, len(cfg.Agents))
	for _, a := range cfg.Agents {
		parts = append(parts, fmt.Sprintf("%s (%s %s)", a.ID, a.Backend.Type, a.Backend.Model))
	}
	return strings.Join(parts, ", ")
}

// shellQuote returns p as a shell reads it back: as is when it holds no special character,
// else in single quotes.
func shellQuote(p string) string {
	if p != "" && strings.Trim(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-:@%+,=") == "" {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}
