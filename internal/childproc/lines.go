package childproc

import (
	"bufio"
	"io"
	"strings"
)

// ReadLines calls fn with each line of r (its trailing "\r" removed), each cut to maxLine
// bytes however long it runs, until r ends or fails. A child's stderr is read this way: a
// process that never writes a newline cannot fill memory.
func ReadLines(r io.Reader, maxLine int, fn func(line string)) {
	br := bufio.NewReader(r)
	var line []byte
	for {
		chunk, isPrefix, err := br.ReadLine()
		if len(line) < maxLine {
			line = append(line, chunk[:min(len(chunk), maxLine-len(line))]...)
		}
		if err != nil && len(line) == 0 {
			return
		}
		if isPrefix && err == nil {
			continue
		}
		s := strings.TrimRight(string(line), "\r")
		line = line[:0]
		fn(s)
		if err != nil {
			return
		}
	}
}
