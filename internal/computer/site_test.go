package computer

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// site is a local page with a red button over the top half of the window and a text field
// below it; its server records what the page's script reports (the click, the text sent
// with Return) and every page loaded.
type site struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func newSite(t *testing.T) *site {
	t.Helper()
	s := &site{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<!doctype html><title>Home</title><body style="margin:0"><button style="position:absolute;left:0;top:0;width:100%;height:50%;background:#c00;border:0"
				onclick="fetch('/clicked')">go</button><input id=t autofocus style="position:absolute;top:60%;width:100%;height:20%"
				onkeyup="if (event.key === 'Enter') fetch('/typed?v=' + encodeURIComponent(this.value))"></body>`)
		case "/second":
			fmt.Fprint(w, `<!doctype html><title>Second</title><body style="margin:0;background:#0c0;height:3000px"></body>`)
		case "/favicon.ico":
			return
		}
		s.mu.Lock()
		s.seen = append(s.seen, r.URL.RequestURI())
		s.mu.Unlock()
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *site) requests() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprint(s.seen)
}

// waitFor waits until the server has seen every one of wants (the page's fetches are
// asynchronous).
func (s *site) waitFor(t *testing.T, wants ...string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		got, all := s.requests(), true
		for _, w := range wants {
			all = all && strings.Contains(got, w)
		}
		if all {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page's server saw %s, want %v", got, wants)
		}
	}
}

// redAt reports whether the PNG (base64) is red at (x, y): the site's button.
func redAt(b64 string, x, y int) bool {
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return false
	}
	pic, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return false
	}
	r, g, b, _ := pic.At(x, y).RGBA()
	return r>>8 > 0xb0 && g>>8 < 0x20 && b>>8 < 0x20
}
