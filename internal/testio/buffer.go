// Package testio holds the I/O helpers tests share.
package testio

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer that goroutines of the code under test may write while the test
// reads it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is what was written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
