package event

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"massgen/internal/private"
)

// MaxLine is the longest line Writer writes to events.jsonl: an event that would be longer has
// its longest strings clipped until it fits (see clipLine). Readers take lines up to
// ReadLimit, which is larger, so that every log massgen writes can be read back.
const MaxLine = 16 << 20

// ReadLimit is the longest line Read accepts: MaxLine with room to spare for logs that older
// builds, which did not clip, wrote.
const ReadLimit = 4 * MaxLine

// Writer appends events to events.jsonl, one JSON object per line. Deltas are buffered;
// every other event flushes, so a crash loses at most the text streamed since the last
// state change. A writer that handles events in batches sets Batched and calls Flush after
// each batch instead.
type Writer struct {
	Batched bool

	f   *os.File
	buf *bufio.Writer
	err error
}

// Create opens path for a new event log.
func Create(path string) (*Writer, error) {
	f, err := private.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC)
	if err != nil {
		return nil, fmt.Errorf("create event log: %w", err)
	}
	buf := bufio.NewWriterSize(f, 64<<10)
	return &Writer{f: f, buf: buf}, nil
}

// Append opens path to go on with an event log that a resumed session takes up: its first
// keep bytes are kept, anything after them (a line cut off mid-event) is cut away, and a
// newline is added when the kept part does not end with one.
func Append(path string, keep int64) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("open event log: %w", err)
	}
	if err := f.Truncate(keep); err != nil {
		f.Close()
		return nil, fmt.Errorf("open event log: %w", err)
	}
	w := &Writer{f: f, buf: bufio.NewWriterSize(f, 64<<10)}
	if _, err := f.Seek(keep, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("open event log: %w", err)
	}
	if keep > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, keep-1); err == nil && last[0] != '\n' {
			w.buf.WriteByte('\n')
		}
	}
	return w, nil
}

// Handle implements Sink. The first write error is kept and reported by Close.
func (w *Writer) Handle(e Event) {
	if w.err != nil {
		return
	}
	line, err := encodeLine(e)
	if err != nil {
		w.err = err
		return
	}
	if _, err := w.buf.Write(line); err != nil {
		w.err = err
		return
	}
	if w.Batched {
		return
	}
	switch e.Payload.(type) {
	case TextDelta, ReasoningDelta, ToolCallStreaming:
	default:
		w.Flush()
	}
}

// EncodeLine is e as one events.jsonl line, newline included (long strings clipped as the
// log clips them): what `massgen --stream-events` prints.
func EncodeLine(e Event) ([]byte, error) { return encodeLine(e) }

// Flush writes buffered events to the file.
func (w *Writer) Flush() {
	if w.err == nil {
		w.err = w.buf.Flush()
	}
}

// Close flushes and closes the file.
func (w *Writer) Close() error {
	ferr := w.buf.Flush()
	cerr := w.f.Close()
	return errors.Join(w.err, ferr, cerr)
}

// Read decodes every event of an events.jsonl stream. A truncated last line (a run that was
// killed mid-write) is ignored; any other bad line is an error naming its line number.
func Read(r io.Reader) ([]Event, error) {
	var events []Event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), ReadLimit)
	line := 0
	var pending error
	for sc.Scan() {
		line++
		if pending != nil {
			return nil, pending
		}
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		var e Event
		if err := json.Unmarshal(b, &e); err != nil {
			pending = fmt.Errorf("line %d: %w", line, err)
			continue
		}
		events = append(events, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	return events, nil
}

// ReadFile reads an events.jsonl file.
func ReadFile(path string) ([]Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	evs, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return evs, nil
}
