package provider

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestLimitEvents(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		ok         bool
	}{
		{"events under the limit, LF", "data: 12\n\ndata: 34\n\n", true},
		{"events under the limit, CRLF", "data: 12\r\n\r\ndata: 34\r\n\r\n", true},
		{"events under the limit, CR", "data: 12\r\rdata: 34\r\r", true},
		{"one event of many lines", "data: 1\ndata: 2\ndata: 3\n\n", false},
		{"one long line", "data: 123456789\n\n", false},
		{"a long line with no end", "data: 1234", true},
		{"a longer line with no end", "data: 123456", false},
		{"CRLF is not a blank line", "data: 1\r\ndata: 2\r\n\r\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := LimitEvents(io.NopCloser(iotest.OneByteReader(strings.NewReader(tc.body))), 10)
			got, err := io.ReadAll(r)
			if tc.ok != (err == nil) {
				t.Fatalf("err %v, want ok %v", err, tc.ok)
			}
			if err != nil && (!errors.Is(err, ErrResponseTooLarge) || len(got) > len(tc.body)) {
				t.Fatalf("err %v after %q", err, got)
			}
			if tc.ok && string(got) != tc.body {
				t.Fatalf("read %q, want %q", got, tc.body)
			}
		})
	}
}

func TestBudget(t *testing.T) {
	b := NewBudget(Request{MaxResponseBytes: 10})
	if b.Spend(6) != nil || b.Replace(6, 10) != nil || b.Replace(10, 4) != nil {
		t.Fatal("refused within the limit")
	}
	if err := b.Spend(1); !errors.Is(err, ErrResponseTooLarge) || !strings.Contains(err.Error(), "10 bytes") {
		t.Fatalf("over the limit: %v", err)
	}
	if (Request{}).ResponseLimit() != DefaultMaxResponseBytes {
		t.Fatal("no default")
	}
}
