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
  /reset, /clear     forget the conversation (the next question starts fresh)
  /quit, /exit, /q   leave (Ctrl-D too)`

// interactive runs a prompt loop: each question is one turn of the same session, logged under
// turn_<n> of one log folder, with the earlier questions and final answers as history.
func interactive(ctx context.Context, cfg *config.Config, in io.Reader, stdout io.Writer,
	runTurn func(app.Options) (app.Result, error)) error {
	fmt.Fprintf(stdout, "massgen interactive: %d agents (%s). /help for commands, /quit to leave.\n", len(cfg.Agents), agentSummary(cfg))
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
		res, err := runTurn(app.Options{Question: q, History: history, Session: session, Turn: turn})
		if err != nil {
			return err
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
