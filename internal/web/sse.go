package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"massgen/internal/event"
)

// keepaliveEvery is how long a stream may stay silent before a comment line keeps proxies
// and clients from timing it out.
const keepaliveEvery = 15 * time.Second

// sseWriter writes server-sent events. After the first write error, a client that stopped
// reading included, it writes nothing more.
type sseWriter struct {
	w   *stallWriter
	err error
}

func newSSE(w http.ResponseWriter) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return &sseWriter{w: newStallWriter(w)}
}

func (s *sseWriter) write(b []byte) {
	if s.err == nil {
		_, s.err = s.w.Write(b)
	}
}

// message writes one event; id and name are left out when zero.
func (s *sseWriter) message(id int64, name string, data []byte) {
	b := make([]byte, 0, len(data)+48)
	if id > 0 {
		b = append(b, "id: "...)
		b = strconv.AppendInt(b, id, 10)
		b = append(b, '\n')
	}
	if name != "" {
		b = append(b, "event: "...)
		b = append(b, name...)
		b = append(b, '\n')
	}
	b = append(b, "data: "...)
	b = append(b, data...)
	s.write(append(b, '\n', '\n'))
}

// data writes v as JSON in an unnamed event.
func (s *sseWriter) data(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		s.err = err
		return
	}
	s.message(0, "", b)
}

func (s *sseWriter) keepalive() {
	s.write([]byte(": keepalive\n\n"))
	s.flush()
}

func (s *sseWriter) flush() {
	if s.err == nil {
		s.err = s.w.Flush()
	}
}

// waitEvents is session.next with a keepalive comment every keepaliveEvery of silence.
func waitEvents(ctx context.Context, ss *session, n int, sse *sseWriter) ([]event.Event, bool, error) {
	for {
		wctx, cancel := context.WithTimeout(ctx, keepaliveEvery)
		evs, ended, err := ss.next(wctx, n)
		cancel()
		if err != nil && ctx.Err() == nil {
			sse.keepalive()
			if sse.err != nil {
				return nil, false, sse.err
			}
			continue
		}
		return evs, ended, err
	}
}
