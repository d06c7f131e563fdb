package lineedit

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// fakeInput hands out its chunks, one per Read, then reports the terminal gone (io.EOF), or,
// with block set, waits for the context.
type fakeInput struct {
	chunks          [][]byte
	block           bool
	raw, restored   int
	shortWaits      int
	restoreFailures error
}

func (f *fakeInput) Raw() (func() error, error) {
	f.raw++
	return func() error { f.restored++; return f.restoreFailures }, nil
}

func (f *fakeInput) Wait(ctx context.Context, short bool) (bool, error) {
	if len(f.chunks) > 0 {
		return true, nil
	}
	if short {
		f.shortWaits++
		return false, nil
	}
	if f.block {
		<-ctx.Done()
		return false, ctx.Err()
	}
	return true, nil
}

func (f *fakeInput) Read(p []byte) (int, error) {
	if len(f.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, f.chunks[0])
	f.chunks = f.chunks[1:]
	return n, nil
}

func (f *fakeInput) Width() int { return 0 }

func chunks(s ...string) [][]byte {
	var out [][]byte
	for _, c := range s {
		out = append(out, []byte(c))
	}
	return out
}

func TestReader_LinesAndTypeAhead(t *testing.T) {
	in := &fakeInput{chunks: chunks("first\rsec", "ond\r\x04")}
	var out bytes.Buffer
	r := NewReader(in, &out)
	for _, want := range []string{"first", "second"} {
		got, err := r.ReadLine(t.Context(), "User: ", nil)
		if err != nil || got != want {
			t.Fatalf("ReadLine = %q, %v; want %q", got, err, want)
		}
	}
	if _, err := r.ReadLine(t.Context(), "User: ", nil); !errors.Is(err, io.EOF) {
		t.Fatalf("Ctrl-D on an empty line: %v, want io.EOF", err)
	}
	if in.raw != 3 || in.restored != 3 {
		t.Errorf("raw mode entered %d times, left %d (want 3 and 3)", in.raw, in.restored)
	}
	s := out.String()
	if !strings.Contains(s, "\x1b[?2004h") || !strings.Contains(s, "\x1b[?2004l") {
		t.Errorf("bracketed paste not switched on and off: %q", s)
	}
	if !strings.Contains(s, "\rUser: first\x1b[K\r\n") {
		t.Errorf("the submitted line is not left on screen: %q", s)
	}
}

func TestReader_CtrlC(t *testing.T) {
	tests := []struct {
		name, input string
		want        string
		err         error
		output      []string
	}{
		{"clears a line with text", "draft\x03real\r", "real", nil, []string{"draft\x1b[K^C\r\n"}},
		{"on an empty line hints, then Enter goes on", "\x03\r", "", nil, []string{"^C\r\n" + Hint}},
		{"twice on an empty line interrupts", "\x03\x03", "", ErrInterrupted, []string{Hint}},
		{"text, Ctrl-C, Ctrl-C, Ctrl-C interrupts", "abc\x03\x03\x03", "", ErrInterrupted, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			got, err := NewReader(&fakeInput{chunks: chunks(tc.input)}, &out).ReadLine(t.Context(), "User: ", nil)
			if got != tc.want || !errors.Is(err, tc.err) {
				t.Fatalf("ReadLine = %q, %v; want %q, %v", got, err, tc.want, tc.err)
			}
			for _, w := range tc.output {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q: %q", w, out.String())
				}
			}
		})
	}
}

func TestReader_LoneEscIsDropped(t *testing.T) {
	// The moment after the Esc passes before the rest arrives: it was a lone Esc, dropped.
	lone := &lonelyEsc{fakeInput: fakeInput{chunks: chunks("a\x1b", "[Ab\r")}}
	got, err := NewReader(lone, io.Discard).ReadLine(t.Context(), "", nil)
	if err != nil || got != "a[Ab" {
		t.Errorf("lone Esc then text: %q, %v", got, err)
	}
	// The rest arrives in time: one sequence (↑) split across two reads.
	split := &fakeInput{chunks: chunks("a\x1b", "[Ab\r")}
	got, err = NewReader(split, io.Discard).ReadLine(t.Context(), "", []string{"recalled"})
	if err != nil || got != "recalledb" {
		t.Errorf("Esc [ A split across reads: %q, %v", got, err)
	}
}

// lonelyEsc lets the short wait after a pending Esc pass once.
type lonelyEsc struct {
	fakeInput
	passed bool
}

func (l *lonelyEsc) Wait(ctx context.Context, short bool) (bool, error) {
	if short && !l.passed {
		l.passed = true
		return false, nil
	}
	return l.fakeInput.Wait(ctx, short)
}

func TestReader_StopsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	in := &fakeInput{chunks: chunks("half a"), block: true}
	_, err := NewReader(in, io.Discard).ReadLine(ctx, "User: ", nil)
	if !errors.Is(err, context.DeadlineExceeded) || in.restored != 1 {
		t.Errorf("err %v, restored %d", err, in.restored)
	}
}

func TestReader_ReportsRestoreFailure(t *testing.T) {
	in := &fakeInput{chunks: chunks("x\r"), restoreFailures: errors.New("tcsetattr failed")}
	if _, err := NewReader(in, io.Discard).ReadLine(t.Context(), "", nil); err == nil || !strings.Contains(err.Error(), "tcsetattr") {
		t.Errorf("err %v", err)
	}
}
