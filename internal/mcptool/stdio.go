package mcptool

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"massgen/internal/childproc"
)

const maxStderrLine = 1000 // bytes kept of one stderr line

// process is a running stdio server, with everything it starts (childproc.Tree): when it exits,
// when it is stopped, or when massgen dies, even by SIGKILL, the whole tree ends. Its three
// standard streams are plain pipes owned here, so no copying goroutines run and Wait never
// blocks on a grandchild holding a pipe open.
type process struct {
	cmd    *childproc.Cmd
	pid    int
	stdin  *os.File // write end
	stdout *os.File // read end
	stderr *os.File // read end

	exited chan struct{}    // closed once the process and its whole tree have ended
	status childproc.Status // valid after exited is closed

	stderrDone chan struct{}
	tail       *childproc.Tail // last stderr lines
}

// startProcess starts s (expanded) with environment env. Each stderr line goes to onLine (may
// be nil) and into a tail of the last tailLines lines.
func startProcess(s Server, env []string, tailLines int, onLine func(string)) (*process, error) {
	cmd := childproc.Command(nil, childproc.Tree, s.Command, s.Args...)
	cmd.Env = env
	cmd.Dir = s.Cwd
	pp, err := cmd.StartPiped(true)
	if err != nil {
		return nil, err
	}
	p := &process{
		cmd: cmd, pid: cmd.Pid(), stdin: pp.Stdin, stdout: pp.Stdout, stderr: pp.Stderr,
		exited: make(chan struct{}), stderrDone: make(chan struct{}), tail: childproc.NewTail(tailLines),
	}
	go func() {
		p.status = cmd.Wait()
		close(p.exited)
	}()
	go p.readStderr(onLine)
	return p, nil
}

// transport speaks MCP over the process's stdin and stdout. Closing the connection closes both.
func (p *process) transport() mcp.Transport {
	return &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin}
}

func (p *process) readStderr(onLine func(string)) {
	defer close(p.stderrDone)
	childproc.ReadLines(p.stderr, maxStderrLine, func(s string) {
		if strings.TrimSpace(s) == "" {
			return
		}
		p.tail.Add(s)
		if onLine != nil {
			onLine(s)
		}
	})
}

// stderrTail returns the last stderr lines, waiting briefly for output still in the pipe when
// the process has exited.
func (p *process) stderrTail() string {
	select {
	case <-p.exited:
		select {
		case <-p.stderrDone:
		case <-time.After(200 * time.Millisecond):
		}
	default:
	}
	return p.tail.String()
}

// describe says how the process ended (if it did) and what it last wrote to stderr.
func (p *process) describe() string {
	var parts []string
	select {
	case <-p.exited:
		if p.status.Success() {
			parts = append(parts, "exited with status 0")
		} else {
			parts = append(parts, p.status.String())
		}
	default:
	}
	if t := p.stderrTail(); t != "" {
		parts = append(parts, "stderr:\n"+indent(t))
	} else {
		parts = append(parts, "no stderr output")
	}
	return strings.Join(parts, "; ")
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}

// waitExit waits up to d for the process to be reaped.
func (p *process) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// stop ends the process and its whole tree: stdin closed, then SIGTERM to its process group
// after grace, then, after another grace, the whole tree is killed, processes that left the
// group included. It returns once all of it has ended and the stderr reader is done. Safe to
// call more than once.
func (p *process) stop(grace time.Duration) error {
	_ = p.stdin.Close() // the MCP way to ask a stdio server to exit
	var err error
	if !p.waitExit(grace) {
		if e := p.cmd.Signal(syscall.SIGTERM); e != nil && !errors.Is(e, syscall.ESRCH) && !errors.Is(e, os.ErrProcessDone) {
			err = e
		}
		if !p.waitExit(grace) {
			p.cmd.Kill()
			if !p.waitExit(5 * time.Second) {
				err = errors.Join(err, fmt.Errorf("process %d did not exit after SIGKILL", p.pid))
			}
		}
	}
	_ = p.stdout.Close()
	select {
	case <-p.stderrDone:
	case <-time.After(grace):
		_ = p.stderr.Close() // a process outside the tree still holds the pipe: stop reading
		<-p.stderrDone
	}
	_ = p.stderr.Close()
	return err
}
