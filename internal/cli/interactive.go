package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/provider"
)

const interactiveHelp = `Type a question and press Enter; the agents answer it with the conversation so far.
Commands:
  /help, /h          this help
  /status            the team, the turns so far and the log folder
  /reset, /clear     forget the conversation and the files of earlier turns (the next
                     question starts fresh)
  /quit, /exit, /q   leave (Ctrl-D too)`

// interactive runs a prompt loop: each question is one turn of the same session, logged under
// turn_<n> of one log folder, with the earlier questions and final answers as history. The turns
// share their MCP servers, and each starts from the previous winner's workspace.
func interactive(ctx context.Context, cfg *config.Config, in io.Reader, stdout io.Writer,
	runTurn func(app.Options) (app.Result, error)) (err error) {
	fmt.Fprintf(stdout, "massgen interactive: %d agents (%s). /help for commands, /quit to leave.\n", len(cfg.Agents), agentSummary(cfg))
	conv := app.NewConversation()
	defer func() {
		if cerr := conv.Close(); cerr != nil && err == nil {
			err = &exitError{code: ExitExecution, err: cerr}
		}
	}()
	var history []provider.Message
	session := ""
	turn := 0
	lines := bufio.NewScanner(in)
	lines.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for {
		fmt.Fprint(stdout, "\nUser: ")
		if !lines.Scan() {
			fmt.Fprintln(stdout)
			return lines.Err()
		}
		q := strings.TrimSpace(lines.Text())
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
			fmt.Fprintf(stdout, "agents: %s\nturns: %d (%d in the current conversation)\n", agentSummary(cfg), turn, len(history)/2)
			if session != "" {
				fmt.Fprintf(stdout, "logs: %s\n", session)
			}
			continue
		}
		if strings.HasPrefix(q, "/") {
			fmt.Fprintf(stdout, "Unknown command %s; /help lists the commands.\n", q)
			continue
		}
		turn++
		res, err := runTurn(app.Options{Question: q, History: history, Session: session, Turn: turn, Conversation: conv})
		if err != nil {
			if turn == 1 || ctx.Err() != nil {
				return err // the setup is wrong: nothing to keep
			}
			// A later turn that could not start leaves the conversation as it was.
			fmt.Fprintf(stdout, "This turn could not start: %v\n", err)
			continue
		}
		session = res.Session
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

func agentSummary(cfg *config.Config) string {
	parts := make([]string, 0, len(cfg.Agents))
	for _, a := range cfg.Agents {
		parts = append(parts, fmt.Sprintf("%s (%s %s)", a.ID, a.Backend.Type, a.Backend.Model))
	}
	return strings.Join(parts, ", ")
}
