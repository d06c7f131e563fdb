package redact

import (
	"strings"
	"testing"
)

// BenchmarkString is a long conversation (a model call's messages) against a session's keys.
func BenchmarkString(b *testing.B) {
	r := New(key, "sk-ant-api03-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJ", "AIzaSyD-0123456789abcdefghijklmnopq", "gsk_0123456789abcdefghijklmnopqrstuvwxyzAB", "xai-0123456789abcdefghijklmnopqrstuvwxyz")
	text := strings.Repeat("The quick brown fox jumps over the lazy dog; func main() { fmt.Println(42) } ", 13000) // ~1 MB
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		r.String(text)
	}
}
