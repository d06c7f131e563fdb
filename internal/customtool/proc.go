package customtool

import (
	"bufio"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"massgen/internal/childproc"
)

// Bounds of what a tool's process may send.
const (
	maxLine       = 16 << 20 // one protocol line on stdout
	maxStderrLine = 1000     // bytes kept of one stderr line
	stderrLines   = 20       // stderr lines kept for error messages
	// endMark starts the line the Python worker writes to stderr after each request: the
	// request's stderr output is all before it.
	endMark = "\x1emassgen-end "
)

// line is one line of the process's stdout; tooLong marks one over maxLine, whose text is
// dropped.
type line struct {
	data    []byte
	tooLong bool
}

// proc is one running tool process and everything it started (childproc.Confined): it ends
// with Kill, when its main process exits, and when massgen dies, even by SIGKILL. Its three
// standard streams are plain pipes owned here, so Wait never blocks on a grandchild holding
// one open.
type proc struct {
	cmd    *childproc.Cmd
	stdin  *os.File // write end
	stdout *os.File // read end
	stderr *os.File // read end
	lines  chan line
	ends   chan int64 // the ids of endMark lines

	exited chan struct{}    // closed once the process tree has ended
	status childproc.Status // valid after exited is closed

	done     chan struct{} // closed by kill: the readers stop sending
	killOnce sync.Once
	readers  sync.WaitGroup

	tail *childproc.Tail // the last stderr lines
}

// startProc starts argv in dir with environment env. Each stderr line goes to onLine too.
func startProc(argv []string, dir string, env []string, onLine func(string)) (*proc, error) {
	cmd := childproc.Command(nil, childproc.Confined, argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = env, dir
	pp, err := cmd.StartPiped(true)
	if err != nil {
		return nil, err
	}
	p := &proc{cmd: cmd, stdin: pp.Stdin, stdout: pp.Stdout, stderr: pp.Stderr, lines: make(chan line), ends: make(chan int64, 16), tail: childproc.NewTail(stderrLines),
		exited: make(chan struct{}), done: make(chan struct{})}
	go func() {
		p.status = cmd.Wait()
		close(p.exited)
	}()
	p.readers.Add(2)
	go p.readStdout()
	go p.readStderr(onLine)
	return p, nil
}

// readStdout sends the protocol lines until EOF, then closes lines.
func (p *proc) readStdout() {
	defer p.readers.Done()
	defer close(p.lines)
	r := bufio.NewReaderSize(p.stdout, 64<<10)
	for {
		var buf []byte
		tooLong := false
		for {
			chunk, err := r.ReadSlice('\n')
			if len(buf)+len(chunk) > maxLine {
				tooLong, buf = true, nil
			} else if !tooLong {
				buf = append(buf, chunk...)
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if err != nil {
				if len(buf) > 0 || tooLong {
					p.send(line{data: buf, tooLong: tooLong})
				}
				return
			}
			break
		}
		if !p.send(line{data: buf, tooLong: tooLong}) {
			return
		}
	}
}

func (p *proc) send(l line) bool {
	select {
	case p.lines <- l:
		return true
	case <-p.done:
		return false
	}
}

// readStderr keeps the last stderr lines, each cut to maxStderrLine, and hands each to onLine.
func (p *proc) readStderr(onLine func(string)) {
	defer p.readers.Done()
	childproc.ReadLines(p.stderr, maxStderrLine, func(s string) {
		if id, ok := strings.CutPrefix(s, endMark); ok {
			if n, err := strconv.ParseInt(id, 10, 64); err == nil {
				select {
				case p.ends <- n:
				default: // nobody waits for it
				}
			}
		} else if strings.TrimSpace(s) != "" {
			p.tail.Add(s)
			if onLine != nil {
				onLine(s + "\n")
			}
		}
	})
}

// stderrTail is the last stderr lines, after waiting briefly for what an ended process left
// in the pipe.
func (p *proc) stderrTail() string {
	select {
	case <-p.exited:
		p.waitReaders(200 * time.Millisecond)
	default:
	}
	return p.tail.String()
}

func (p *proc) waitReaders(d time.Duration) {
	ch := make(chan struct{})
	go func() {
		p.readers.Wait()
		close(ch)
	}()
	select {
	case <-ch:
	case <-time.After(d):
	}
}

// hasExited reports whether the process tree has ended, waiting up to d for it.
func (p *proc) hasExited(d time.Duration) bool {
	select {
	case <-p.exited:
		return true
	case <-time.After(d):
		return false
	}
}

// kill ends the process tree and waits for it and for the readers. It may be called more
// than once.
func (p *proc) kill() {
	p.killOnce.Do(func() {
		close(p.done)
		p.cmd.Kill()
		_ = p.stdin.Close()
	})
	<-p.exited
	// The tree is gone, so the pipes reach EOF; closing them also ends a read that is stuck.
	_, _ = p.stdout.Close(), p.stderr.Close()
	p.readers.Wait()
}

// write sends one request line, giving up at deadline.
func (p *proc) write(data []byte, deadline time.Time) error {
	_ = p.stdin.SetWriteDeadline(deadline)
	_, err := p.stdin.Write(data)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		return errors.New("it did not read its input")
	}
	if err != nil && (errors.Is(err, io.ErrClosedPipe) || errors.Is(err, os.ErrClosed) || strings.Contains(err.Error(), "broken pipe")) {
		return errors.New("it closed its input")
	}
	return err
}

// ended says how the process ended, with its last stderr lines.
func (p *proc) ended() string {
	msg := "its process ended"
	if p.hasExited(time.Second) {
		msg = "its process ended with " + p.status.String()
		if p.status.Success() {
			msg = "its process exited with status 0"
		}
	}
	return msg + p.stderrNote()
}

// stderrNote is the stderr tail as a clause for messages, "" when there is none.
func (p *proc) stderrNote() string {
	if t := p.stderrTail(); t != "" {
		return "; its last stderr lines:\n" + t
	}
	return ""
}

// awaitEnd waits up to d for the endMark of request id, so that what the request wrote to
// stderr has been read before its answer is returned.
func (p *proc) awaitEnd(id int64, d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case n := <-p.ends:
			if n >= id {
				return
			}
		case <-timer.C:
			return
		case <-p.exited:
			return
		}
	}
}
