package httpserve

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestCheckAddr(t *testing.T) {
	for _, tc := range []struct {
		addr, token string
		refused     bool
	}{
		{"127.0.0.1:8080", "", false}, {"127.0.0.2:1", "", false}, {"localhost:8080", "", false},
		{"[::1]:8080", "", false}, {"app.localhost:1", "", false},
		{":8080", "", true}, {"0.0.0.0:8080", "", true}, {"[::]:8080", "", true}, {"192.168.1.20:8080", "", true},
		{"example.com:80", "", true}, {"0.0.0.0:8080", "s3cret", false},
	} {
		err := CheckAddr(tc.addr, tc.token)
		if got := errors.Is(err, ErrTokenRequired); got != tc.refused || (err != nil) != tc.refused {
			t.Errorf("CheckAddr(%q, %q) = %v, want refused %v", tc.addr, tc.token, err, tc.refused)
		}
	}
}

func TestGuard(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	for _, tc := range []struct {
		name, token, method, host, origin, auth string
		want                                    int
	}{
		{"loopback without a token", "", http.MethodPost, "127.0.0.1:1", "", "", http.StatusNoContent},
		{"a foreign host without a token", "", http.MethodGet, "evil.example:1", "", "", http.StatusForbidden},
		{"a cross-origin POST", "", http.MethodPost, "localhost:1", "http://evil.example", "", http.StatusForbidden},
		{"a same-origin POST", "", http.MethodPost, "localhost:1", "http://localhost:1", "", http.StatusNoContent},
		{"a cross-origin GET", "", http.MethodGet, "localhost:1", "http://evil.example", "", http.StatusNoContent},
		{"no token sent", "t", http.MethodGet, "evil.example:1", "", "", http.StatusUnauthorized},
		{"the wrong token", "t", http.MethodGet, "localhost:1", "", "Bearer x", http.StatusUnauthorized},
		{"the token, any host", "t", http.MethodGet, "evil.example:1", "", "bearer t", http.StatusNoContent},
	} {
		r := httptest.NewRequest(tc.method, "/mcp", nil)
		r.Host = tc.host
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		if tc.auth != "" {
			r.Header.Set("Authorization", tc.auth)
		}
		w := httptest.NewRecorder()
		Guard(tc.token, ok).ServeHTTP(w, r)
		if w.Code != tc.want {
			t.Errorf("%s: status %d, want %d (%s)", tc.name, w.Code, tc.want, w.Body)
		}
		if w.Code == http.StatusUnauthorized && w.Header().Get("WWW-Authenticate") == "" {
			t.Errorf("%s: a 401 without WWW-Authenticate", tc.name)
		}
		// The refusal says what to send as written, not as \u003ctoken\u003e.
		if w.Code == http.StatusUnauthorized && !strings.Contains(w.Body.String(), "Bearer <token>") {
			t.Errorf("%s: the 401 body does not say Bearer <token>: %s", tc.name, w.Body)
		}
	}
}
