package cliagent

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"

	"massgen/internal/childproc"
)

// SandboxFunc builds the sandbox of one run: state is the folder of the CLI's own state (its
// HOME and config), to be writable; programs are the folders of the CLI's install and of
// node, to be readable.
type SandboxFunc func(state string, programs []string) (*childproc.Sandbox, error)

// UseSandbox runs every later run of the CLI in the sandbox fn builds as the run starts, so
// that what the CLI's own tools reach is what massgen grants the agent, whatever the CLI's
// permission flags let through. nil runs it unsandboxed.
func (a *Agent) UseSandbox(fn SandboxFunc) {
	a.mu.Lock()
	a.sandbox = fn
	a.mu.Unlock()
}

// OnLogin reports whether the CLI runs on the user's own login (no API key).
func (a *Agent) OnLogin() bool { return a.o.UseLogin }

// errLoginSandbox: on the user's own login the CLI needs the user's home, which the sandbox
// keeps out.
var errLoginSandbox = &fatalError{"a coding-agent CLI on its own login cannot run in the sandbox (command_line_execution_mode: srt), which hides the home folder its login lives in: give the agent an API key, or leave the sandbox out"}

// sandboxed sets cmd to run in the agent's sandbox, if it has one.
func (a *Agent) sandboxed(cmd *childproc.Cmd, bin string) error {
	if a.sandbox == nil {
		return nil
	}
	if a.o.UseLogin {
		return errLoginSandbox
	}
	sb, err := a.sandbox(a.o.Home, programRoots(bin, a.o.PathEnv))
	if err != nil {
		return err
	}
	cmd.Sandbox = sb
	cmd.Env = append(slicesWithout(cmd.Env, "TMPDIR"), "TMPDIR=/tmp")
	return nil
}

// programRoots are the folders a CLI run needs to read to start: the install of the CLI (the
// npm package its command links to, with its node_modules) and node's, each with the folder
// of the file itself, which the sandbox shows where the install's folder is too broad.
func programRoots(bin, pathEnv string) []string {
	var out []string
	for _, name := range []string{bin, "node"} {
		p, err := lookPath(name, pathEnv)
		if err != nil {
			continue
		}
		for _, q := range []string{p, realPath(p)} {
			out = append(out, installRoot(q), filepath.Dir(q))
		}
	}
	return out
}

// installRoot is the folder holding p's install: the folder above its node_modules, or the
// prefix above bin/.
func installRoot(p string) string {
	if i := strings.Index(p, string(filepath.Separator)+"node_modules"+string(filepath.Separator)); i > 0 {
		return p[:i]
	}
	dir := filepath.Dir(p)
	if filepath.Base(dir) == "bin" {
		return filepath.Dir(dir)
	}
	return dir
}

func lookPath(name, pathEnv string) (string, error) {
	if strings.ContainsRune(name, filepath.Separator) {
		return name, nil
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		p := filepath.Join(dir, name)
		if _, err := exec.LookPath(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("not found")
}

func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

func slicesWithout(env []string, name string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}
