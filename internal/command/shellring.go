package command

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// lineRing keeps the last lines written to it: at most shellBufferLines lines and
// shellBufferBytes bytes (as set when it was made), each cut to shellLineBytes.
type lineRing struct {
	maxLines, maxBytes, lineCap int

	mu      sync.Mutex
	lines   []string // lines[head:] are kept, oldest first
	head    int
	bytes   int    // of the kept lines
	total   int    // complete lines ever written
	partial []byte // the line being written, not ended yet
	cut     int    // bytes of the current line beyond lineCap
}

func newLineRing() *lineRing {
	return &lineRing{maxLines: max(shellBufferLines, 1), maxBytes: shellBufferBytes, lineCap: shellLineBytes}
}

func (r *lineRing) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		seg := p
		if i >= 0 {
			seg = p[:i]
		}
		keep := max(0, min(r.lineCap-len(r.partial), len(seg)))
		r.partial = append(r.partial, seg[:keep]...)
		r.cut += len(seg) - keep
		if i < 0 {
			break
		}
		r.push(r.current())
		r.partial, r.cut = r.partial[:0], 0
		p = p[i+1:]
	}
	return n, nil
}

// current is the line being written, with a note when it was cut.
func (r *lineRing) current() string {
	line := strings.ToValidUTF8(string(r.partial), "\uFFFD")
	if r.cut > 0 {
		line += fmt.Sprintf(" [line cut: %d more bytes]", r.cut)
	}
	return line
}

func (r *lineRing) push(line string) {
	r.lines = append(r.lines, line)
	r.bytes += len(line) + 1
	r.total++
	for kept := len(r.lines) - r.head; kept > r.maxLines || (kept > 1 && r.bytes > r.maxBytes); kept-- {
		r.bytes -= len(r.lines[r.head]) + 1
		r.lines[r.head] = ""
		r.head++
	}
	if r.head > 1024 && r.head*2 > len(r.lines) {
		n := copy(r.lines, r.lines[r.head:])
		clear(r.lines[n:])
		r.lines, r.head = r.lines[:n], 0
	}
}

// tail returns the last n lines kept (the unfinished one included) and how many lines were
// written in all.
func (r *lineRing) tail(n int) ([]string, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	kept := r.lines[r.head:]
	total := r.total
	var out []string
	if len(r.partial) > 0 || r.cut > 0 {
		total++
		if n > 0 {
			out = append(out, r.current())
			n--
		}
	}
	n = min(n, len(kept))
	out = append(slices.Clone(kept[len(kept)-n:]), out...)
	return out, total
}
