// Package command runs an agent's shell commands in its workspace: execute_command, the
// background shells, and, under command_line_execution_mode: srt, the bubblewrap sandbox built
// from what the agent holds (workspace.Agent.Sight). It is the one package that decides about
// the sandbox: whether a mode runs in it (Sandboxed), whether it can run here
// (SandboxOptions.Ready), what a command or a coding-agent CLI sees in it (CLISandbox).
package command

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"massgen/internal/childproc"
	"massgen/internal/tool"
	"massgen/internal/workspace"
)

// Options configure execute_command (backend keys enable_mcp_command_line and
// command_line_*). The zero value gives MassGen's defaults.
type Options struct {
	// DefaultTimeout applies when a call sets no timeout_seconds; 0 means 60 s.
	DefaultTimeout time.Duration
	// MaxTimeout caps timeout_seconds; 0 means 10 minutes.
	MaxTimeout time.Duration
	// OutputLimit caps what is kept of stdout and of stderr, each, in bytes; 0 means 64 KiB.
	OutputLimit int
	// Allowed (command_line_allowed_commands): when non-empty, a command must match one of
	// these regular expressions from its start (like Python's re.match).
	Allowed []string
	// Blocked (command_line_blocked_commands): a command matching any of these anywhere in it
	// is refused.
	Blocked []string
	// PassEnv (command_line_env_passthrough) names the variables of Env that commands get
	// besides commandEnvNames; a name ending in * stands for every name with that prefix.
	PassEnv []string
	// Env is the environment the variables commands get are taken from; nil means os.Environ().
	Env []string
	// Sandbox (command_line_execution_mode: srt) runs every command in a bubblewrap sandbox
	// (see SandboxOptions); nil runs them on this machine, confined by childproc only.
	Sandbox *SandboxOptions
	// Tools (enable_code_based_tools), when set, lets the commands call the agent's tools
	// back through massgen (ToolChannel).
	Tools *ToolChannel
}

// ToolChannel is how an agent's commands reach the tool server massgen runs for it
// (code-based tools): the unix socket it listens on and the token every call must carry.
// Commands get both as MASSGEN_TOOLS_ADDR (unix:PATH, or tcp:childproc.ToolsAddr inside the
// sandbox, which relays to the socket) and MASSGEN_TOOLS_TOKEN, and PythonPath first on
// PYTHONPATH, so that the generated `servers` package imports from anywhere.
type ToolChannel struct {
	Socket, Token, PythonPath string
}

// Validate reports invalid Allowed and Blocked patterns, naming the config key and index, and
// a Sandbox that cannot run here (SandboxOptions.Ready).
func (o Options) Validate() error {
	if err := newCommandFilter(o.Allowed, o.Blocked).err; err != nil {
		return err
	}
	if o.Sandbox != nil {
		return o.Sandbox.Ready()
	}
	return nil
}

// ConfinementNote says what of the commands' confinement does not hold here, for the user to
// see at startup, or "" (SandboxNote with a sandbox, CommandConfinement without).
func (o Options) ConfinementNote() string {
	if o.Sandbox != nil {
		return SandboxNote()
	}
	return CommandConfinement()
}

func (o Options) withDefaults() Options {
	if o.DefaultTimeout <= 0 {
		o.DefaultTimeout = 60 * time.Second
	}
	if o.MaxTimeout <= 0 {
		o.MaxTimeout = 10 * time.Minute
	}
	o.DefaultTimeout = min(o.DefaultTimeout, o.MaxTimeout)
	if o.OutputLimit <= 0 {
		o.OutputLimit = 64 << 10
	}
	if o.Env == nil {
		o.Env = os.Environ()
	}
	return o
}

// Tools returns execute_command followed by the background shell tools
// (start_background_shell, get_background_shell_output, get_background_shell_status,
// kill_background_shell and list_background_shells, see shells.go), which share its rules.
//
// execute_command runs `sh -c <command>` in the workspace ws (or a work_dir inside it)
// with a timeout, stdout and stderr captured separately, capped, and streamed through
// tool.Output as they arrive. A non-zero exit is an error result carrying the output. Invalid
// patterns in opts make every call fail with the reason (see Validate).
//
// What confines commands:
//   - Keys: the environment is built from an allow-list (commandEnvNames, opts.PassEnv, the
//     workspace's .venv, which is put first on PATH), never from massgen's whole environment.
//   - massgen itself and process lifetime: each command runs under childproc.Confined. On Linux
//     with user namespaces it sees only its own processes and cannot read massgen's environment
//     or memory; everywhere on Linux, when `sh -c` returns (or times out), every process it
//     started is killed, however it detached, and so is everything when massgen dies.
//   - The filter refuses MassGen's dangerous patterns (recursive deletion of / or ~, dd, writes
//     to disk devices, fork bombs, mv to /dev/null, mkfs, sudo, su, chmod, chown), the
//     configured allow and block lists, and redirections or rm/mv/cp/touch/tee/mkdir whose
//     literal target lies outside what the agent may write; it is a speed bump that a
//     determined command gets past (variables, scripts, cd, interpreters).
//
// Without opts.Sandbox this is not a file-system sandbox: a command can read and write whatever
// files the user running massgen can, and use the network. With it (MassGen's srt mode), each
// command runs in a bubblewrap sandbox built from the agent's grants (see SandboxOptions).
func Tools(ws *workspace.Agent, opts Options) tool.Set {
	a := attachTo(ws)
	opts = opts.withDefaults()
	filter := newCommandFilter(opts.Allowed, opts.Blocked)
	desc := fmt.Sprintf("Run a shell command (sh -c) in your workspace %s and return its exit code, stdout and stderr (each capped at %d KiB). "+
		"Default timeout %d s, at most %d s; on timeout the command and its children are killed. "+
		"When the command returns, every process it started is killed too, even with nohup, setsid or &: "+
		"for servers, watchers and other commands that keep running, use start_background_shell. "+
		"Output of other agents is readable under %s. "+
		"sudo, su, chmod, chown, dd, rm -rf / and similar commands are refused; writes belong in your workspace. %s",
		a.ws.Dir(), opts.OutputLimit>>10, int(opts.DefaultTimeout.Seconds()), int(opts.MaxTimeout.Seconds()), a.ws.SnapshotsDir(), envNote(opts))
	execute := tool.Tool{
		Spec: tool.Spec("execute_command", desc, map[string]any{
			"command":         map[string]any{"type": "string", "description": "Shell command line."},
			"timeout_seconds": map[string]any{"type": "integer", "description": "Timeout in seconds."},
			"work_dir":        map[string]any{"type": "string", "description": "Directory to run in, relative to your workspace (default: the workspace)."},
		}, "command"),
		Run: func(ctx context.Context, args string) tool.Result { return a.execute(ctx, args, opts, filter) },
	}
	return append(tool.Set{execute}, a.shellTools(opts, filter)...)
}

func (a *agent) execute(ctx context.Context, args string, opts Options, filter commandFilter) tool.Result {
	var in struct {
		Command        string `json:"command"`
		TimeoutSeconds int    `json:"timeout_seconds"`
		WorkDir        string `json:"work_dir"`
	}
	if r, ok := tool.Decode(args, &in, `{"command": "ls -la"}`); !ok {
		return r
	}
	dir, msg := a.checkCommand(in.Command, in.WorkDir, filter)
	if msg != "" {
		return tool.Errorf(msg)
	}
	timeout, note := opts.DefaultTimeout, ""
	if in.TimeoutSeconds > 0 {
		timeout = time.Duration(in.TimeoutSeconds) * time.Second
		if timeout > opts.MaxTimeout {
			timeout = opts.MaxTimeout
			note = fmt.Sprintf("(timeout_seconds lowered to the maximum, %d)\n", int(timeout.Seconds()))
		}
	}
	return a.runCommand(ctx, in.Command, dir, timeout, opts, note)
}

// checkCommand applies the rules every command shares (not empty, the dangerous patterns, the
// allow and block lists, work_dir an existing directory inside the workspace, literal write
// targets the agent may write) and returns the directory to run command in, or why it must not
// run.
func (a *agent) checkCommand(command, workDir string, filter commandFilter) (dir, refusal string) {
	if strings.TrimSpace(command) == "" {
		return "", `command is empty; send {"command": "..."}`
	}
	if strings.IndexByte(command, 0) >= 0 {
		return "", "the command contains a NUL byte"
	}
	if msg := filter.refuse(command); msg != "" {
		return "", msg
	}
	dir = a.ws.Dir()
	if workDir != "" {
		t, err := a.ws.Resolve(workDir, workspace.Read)
		if err != nil || !t.InWorkspace() {
			return "", fmt.Sprintf("work_dir %s must be inside your workspace %s", tool.Quote(workDir), a.ws.Dir())
		}
		if info, err := t.Stat(); err != nil || !info.IsDir() {
			return "", fmt.Sprintf("work_dir %s is not an existing directory in your workspace %s", tool.Quote(workDir), a.ws.Dir())
		}
		dir = t.Abs()
	}
	if msg := a.checkWriteTargets(command, dir); msg != "" {
		return "", msg
	}
	return dir, ""
}

// commandEnv is the environment commands run with in dir: the variables of opts.Env that
// commandEnvNames or opts.PassEnv allow, PWD, and the workspace's .venv activated when there is
// one.
func (a *agent) commandEnv(opts Options, dir string) []string {
	env := append(allowedEnv(opts.Env, opts.PassEnv), "PWD="+dir)
	if venv := filepath.Join(a.ws.Dir(), ".venv"); isDir(filepath.Join(venv, "bin")) {
		env = withVenv(env, venv)
	}
	return env
}

// prepare sets what cmd runs with in dir: the allowed environment and, with opts.Sandbox, the
// sandbox the agent's grants give at this moment.
func (a *agent) prepare(cmd *childproc.Cmd, opts Options, dir string) error {
	cmd.Dir, cmd.Env = dir, a.commandEnv(opts, dir)
	if opts.Sandbox == nil {
		cmd.Env = opts.Tools.env(cmd.Env, "unix:"+opts.Tools.socket())
		return nil
	}
	sb, err := a.sandbox(opts.Sandbox, envValue(cmd.Env, "HOME"))
	if err != nil {
		return fmt.Errorf("the sandbox cannot be set up: %w", err)
	}
	cmd.Sandbox, cmd.Env = sb, sandboxEnv(cmd.Env)
	if sb.Proxy != "" {
		cmd.Env = append(cmd.Env, proxyEnv(childproc.ProxyAddr)...)
	}
	if opts.Tools != nil {
		sb.Tools = opts.Tools.Socket
		cmd.Env = opts.Tools.env(cmd.Env, "tcp:"+childproc.ToolsAddr)
	}
	return nil
}

func (c *ToolChannel) socket() string {
	if c == nil {
		return ""
	}
	return c.Socket
}

// env adds the channel's variables to env, the server reached at addr; a nil channel adds
// nothing.
func (c *ToolChannel) env(env []string, addr string) []string {
	if c == nil {
		return env
	}
	env = append(env, "MASSGEN_TOOLS_ADDR="+addr, "MASSGEN_TOOLS_TOKEN="+c.Token)
	if c.PythonPath == "" {
		return env
	}
	path := c.PythonPath
	if old := envValue(env, "PYTHONPATH"); old != "" {
		path += string(os.PathListSeparator) + old
	}
	return append(slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "PYTHONPATH=") }), "PYTHONPATH="+path)
}

// checkWriteTargets refuses a command whose literal write targets the agent may not write.
func (a *agent) checkWriteTargets(command, dir string) string {
	paths, deletes := writeTargets(command)
	for i, p := range paths {
		if harmlessTarget(p) || strings.ContainsAny(p, "$`") {
			continue
		}
		if strings.HasPrefix(p, "~") {
			return fmt.Sprintf("Command refused: it writes to %s, in your home directory; write inside your workspace %s", tool.Quote(p), a.ws.Dir())
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		acc := workspace.Write
		if deletes[i] {
			acc = workspace.Remove
		}
		if _, err := a.ws.Resolve(p, acc); err != nil {
			return "Command refused: " + err.Error()
		}
	}
	return ""
}

func (a *agent) runCommand(ctx context.Context, command, dir string, timeout time.Duration, opts Options, note string) tool.Result {
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := childproc.Command(runCtx, childproc.Confined, "sh", "-c", command)
	if err := a.prepare(cmd, opts, dir); err != nil {
		return tool.Errorf(note + "Command not run: " + err.Error())
	}
	cmd.WaitDelay = 2 * time.Second
	emit := tool.Output(ctx)
	var emitMu sync.Mutex
	stream := func(s string) { emitMu.Lock(); emit(s); emitMu.Unlock() }
	stdout := &capture{limit: opts.OutputLimit, emit: stream}
	stderr := &capture{limit: opts.OutputLimit, emit: stream}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	var st childproc.Status
	err := cmd.Start()
	if err == nil {
		st = cmd.Wait()
	}

	var b strings.Builder
	b.WriteString(note)
	isErr := true
	switch {
	case ctx.Err() != nil:
		b.WriteString("Command cancelled; it and every process it started were killed.\n")
	case errors.Is(runCtx.Err(), context.DeadlineExceeded):
		fmt.Fprintf(&b, "Command timed out after %s; it and every process it started were killed.\n", timeout)
	case err != nil:
		fmt.Fprintf(&b, "Command could not run: %v\n", err)
	case st.Code > 0:
		fmt.Fprintf(&b, "Command failed with exit code %d.\n", st.Code)
	case st.Code < 0:
		fmt.Fprintf(&b, "Command was killed by a signal (%s).\n", st.Signal)
	default:
		isErr = false
		b.WriteString("Exit code: 0\n")
	}
	stdout.write(&b, "stdout")
	stderr.write(&b, "stderr")
	return tool.Result{Content: strings.TrimRight(b.String(), "\n"), IsError: isErr}
}

// capture keeps the first limit bytes written to it and streams them.
type capture struct {
	limit int
	emit  func(string)
	mu    sync.Mutex
	buf   []byte
	total int
}

func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total += len(p)
	if room := c.limit - len(c.buf); room > 0 {
		keep := p[:min(room, len(p))]
		c.buf = append(c.buf, keep...)
		c.emit(string(keep))
	}
	return len(p), nil
}

func (c *capture) write(b *strings.Builder, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.total == 0 {
		return
	}
	fmt.Fprintf(b, "[%s]\n%s", name, c.buf)
	if len(c.buf) > 0 && c.buf[len(c.buf)-1] != '\n' {
		b.WriteByte('\n')
	}
	if c.total > len(c.buf) {
		fmt.Fprintf(b, "[%s truncated: %d bytes in total, the first %d shown]\n", name, c.total, len(c.buf))
	}
}

func isDir(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.IsDir()
}

// withVenv activates the virtual environment venv in env.
func withVenv(env []string, venv string) []string {
	out := make([]string, 0, len(env)+2)
	path := ""
	for _, kv := range env {
		switch {
		case strings.HasPrefix(kv, "PATH="):
			path = kv[len("PATH="):]
		case strings.HasPrefix(kv, "VIRTUAL_ENV="):
		default:
			out = append(out, kv)
		}
	}
	bin := filepath.Join(venv, "bin")
	if path != "" {
		bin += string(os.PathListSeparator) + path
	}
	return append(out, "PATH="+bin, "VIRTUAL_ENV="+venv)
}
