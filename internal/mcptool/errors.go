package mcptool

import (
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
)

// StartError is a server that could not be used: it did not start, did not answer, or died
// before an agent got its tools. Target is the command line or URL as configured (secrets
// unexpanded); Command is the program of a stdio server, "" for streamable-http.
type StartError struct {
	Server  string
	Target  string
	Command string
	Err     error
}

func (e *StartError) Error() string { return fmt.Sprintf("mcp server %q: %v", e.Server, e.Err) }
func (e *StartError) Unwrap() error { return e.Err }

// Hint says what the user can do about it.
func (e *StartError) Hint() string {
	switch {
	case e.Command == "":
		return fmt.Sprintf("check that the server at %s is running and reachable, or remove %q from the agent's mcp_servers", e.Target, e.Server)
	case errors.Is(e.Err, exec.ErrNotFound) || errors.Is(e.Err, fs.ErrNotExist) || errors.Is(e.Err, fs.ErrPermission):
		return fmt.Sprintf("check that `%s` is installed and on PATH (or that the path is right and executable), or remove %q from the agent's mcp_servers", e.Command, e.Server)
	}
	return fmt.Sprintf("run `%s` by hand to see why it stops, or remove %q from the agent's mcp_servers", e.Target, e.Server)
}

// ToolWarning is a server that works but gives an agent fewer tools than its config asks for:
// allowed_tools names a tool the server lacks, or a tool's name is already taken.
type ToolWarning struct {
	Server string
	Msg    string
}

func (w *ToolWarning) Error() string { return fmt.Sprintf("mcp server %q: %s", w.Server, w.Msg) }
