package childproc

import (
	"errors"
	"fmt"
	"os"
)

// Pipes are the parent's ends of a started child's standard streams. Stdin is nil when the
// child reads /dev/null.
type Pipes struct {
	Stdin          *os.File
	Stdout, Stderr *os.File
}

// StartPiped starts c with its standard output and error on pipes, and its input on a pipe
// too when stdin is true (else /dev/null), returning the parent's ends. The child's ends are
// closed once it has its copies; on any failure every end is closed.
func (c *Cmd) StartPiped(stdin bool) (Pipes, error) {
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			_ = f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	var p Pipes
	var childIn, outW, errW *os.File
	var err1, err2, err3 error
	if stdin {
		childIn, p.Stdin, err1 = pipe()
	} else if childIn, err1 = os.Open(os.DevNull); err1 == nil {
		files = append(files, childIn)
	}
	p.Stdout, outW, err2 = pipe()
	p.Stderr, errW, err3 = pipe()
	if err := errors.Join(err1, err2, err3); err != nil {
		closeAll()
		return Pipes{}, fmt.Errorf("pipes: %w", err)
	}
	c.Stdin, c.Stdout, c.Stderr = childIn, outW, errW
	if err := c.Start(); err != nil {
		closeAll()
		return Pipes{}, err
	}
	_, _, _ = childIn.Close(), outW.Close(), errW.Close() // the child has its copies
	return p, nil
}
