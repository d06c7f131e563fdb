package lineedit

import (
	"context"
	"errors"
	"io"
)

// Input is a terminal as a Reader uses it. The unix terminal implements it (Open); tests
// feed bytes.
type Input interface {
	// Raw puts the terminal into raw mode and returns what restores it.
	Raw() (restore func() error, err error)
	// Wait blocks until bytes can be read (true) or ctx ends (its error). With short set it
	// gives up after a moment and reports false: the bytes so far are a lone Esc, not the
	// start of a sequence.
	Wait(ctx context.Context, short bool) (bool, error)
	// Read reads what is there; io.EOF means the terminal is gone.
	Read(p []byte) (int, error)
	// Width is the terminal's width in columns (0: unknown).
	Width() int
}

// ErrInterrupted is ReadLine's error after Ctrl-C twice in a row on an empty line.
var ErrInterrupted = errors.New("lineedit: interrupted")

// Hint follows the first Ctrl-C on an empty line.
const Hint = "(Ctrl-C again or Ctrl-D to leave, or type /quit)"

// Reader reads lines from an Input, editing them in raw mode. The terminal is raw only while
// ReadLine runs, so whatever runs between two lines (the live view, a plain turn that Ctrl-C
// interrupts) gets it as it was. A Reader is not safe for concurrent use.
type Reader struct {
	in    Input
	out   io.Writer
	dec   Decoder
	queue []Key // keys read after the last line ended: type-ahead for the next
}

// NewReader returns a Reader drawing on out.
func NewReader(in Input, out io.Writer) *Reader { return &Reader{in: in, out: out} }

// ReadLine shows prompt and edits a line until Enter (the line), Ctrl-D on an empty line
// (io.EOF), a second Ctrl-C in a row on an empty line (ErrInterrupted) or the end of ctx (its
// error). Ctrl-C on a line with text clears it. history (oldest first) is what ↑ and ↓ browse.
func (r *Reader) ReadLine(ctx context.Context, prompt string, history []string) (line string, err error) {
	restore, err := r.in.Raw()
	if err != nil {
		return "", err
	}
	defer func() {
		if rerr := restore(); rerr != nil && err == nil {
			err = rerr
		}
	}()
	// Bracketed paste: a pasted paragraph arrives marked, so its newlines stay text.
	r.write("\x1b[?2004h")
	defer r.write("\x1b[?2004l")
	e := NewEditor(history)
	buf := make([]byte, 4096)
	for {
		for len(r.queue) > 0 {
			k := r.queue[0]
			r.queue = r.queue[1:]
			if line, done, err := r.apply(e, prompt, k); done {
				return line, err
			}
		}
		r.write(e.Render(prompt, r.width()))
		ready, err := r.in.Wait(ctx, r.dec.Pending())
		if err != nil {
			r.write(e.RenderFull(prompt) + "\r\n")
			return "", err
		}
		if !ready {
			r.dec.Flush()
			continue
		}
		n, err := r.in.Read(buf)
		r.dec.Feed(buf[:n], func(k Key) { r.queue = append(r.queue, k) })
		if err != nil && len(r.queue) == 0 {
			r.write("\r\n")
			return "", err
		}
	}
}

// apply handles one key; done reports that ReadLine returns line and err.
func (r *Reader) apply(e *Editor, prompt string, k Key) (line string, done bool, err error) {
	shown := "" // the line as it was, for the row Ctrl-C leaves on the screen
	if k.Kind == KeyInterrupt {
		shown = e.RenderFull(prompt)
	}
	switch e.Handle(k) {
	case Submitted:
		r.write(e.RenderFull(prompt) + "\r\n")
		return e.Line(), true, nil
	case Cleared:
		r.write(shown + "^C\r\n")
	case Hinted:
		r.write(shown + "^C\r\n" + Hint + "\r\n")
	case Interrupted:
		r.write(shown + "^C\r\n")
		return "", true, ErrInterrupted
	case EndOfInput:
		r.write(e.RenderFull(prompt) + "\r\n")
		return "", true, io.EOF
	case ClearScreen:
		r.write("\x1b[H\x1b[2J")
	}
	return "", false, nil
}

func (r *Reader) width() int {
	if w := r.in.Width(); w > 0 {
		return w
	}
	return 80
}

// write draws on the terminal; a terminal that cannot be written to shows nothing either way.
func (r *Reader) write(s string) { _, _ = io.WriteString(r.out, s) }
