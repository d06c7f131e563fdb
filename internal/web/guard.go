package web

import (
	"massgen/internal/httpserve"

	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/http"
	"strings"
	"unicode/utf8"
)

// cookieName holds the dashboard's proof of the token, so a browser (and its EventSource, which
// cannot send headers) stays signed in after opening /?token=.... Browsers share cookies
// between the ports of a host: each port gets its own name, or a second server (massgen serve
// and --web side by side) would sign the browser out of the first.
const cookieName = "massgen_token"

// cookieFor is the cookie name for requests to host (host:port).
func cookieFor(host string) string {
	if _, port, err := net.SplitHostPort(host); err == nil && port != "" && strings.Trim(port, "0123456789") == "" {
		return cookieName + "_" + port
	}
	return cookieName
}

// guard wraps every route: security headers, path sanity, the host and origin checks, and the
// token. It never sets CORS headers: browsers get the same-origin policy.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-store")
		if badPath(r.URL.Path) {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_path", "", "the request path is not valid")
			return
		}
		// Without a token, a page on another site could reach this server through DNS
		// rebinding (its own name resolving to 127.0.0.1): only loopback names are answered.
		if s.token == "" && !httpserve.Loopback(r.Host) {
			httpserve.RefuseHost(w)
			return
		}
		// Refused token or not (CSRF).
		if httpserve.CrossOrigin(r) {
			httpserve.RefuseCrossOrigin(w)
			return
		}
		if !s.authorize(w, r) {
			return
		}
		next.ServeHTTP(w, r)
	})
}

// maxPath bounds a request path: the longest route is under 100 bytes.
const maxPath = 1024

// badPath reports paths with "." or ".." segments (also when percent-encoded), empty segments,
// backslashes, control characters, bytes that are not UTF-8 (%ff) or over maxPath bytes: none
// is ever needed, so none is routed.
func badPath(p string) bool {
	if len(p) > maxPath || !strings.HasPrefix(p, "/") || strings.Contains(p, "//") || strings.ContainsAny(p, "\\") ||
		!utf8.ValidString(p) || strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return true
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

// authorize reports whether r may go on; when not, it has written the answer: a 401, or the
// redirect that turns a valid ?token= into the dashboard cookie.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) bool {
	if s.token == "" {
		return true
	}
	if r.Header.Get("Authorization") != "" {
		if httpserve.Bearer(r, s.token) {
			return true
		}
	} else if !strings.HasPrefix(r.URL.Path, "/v1/") {
		if c, err := r.Cookie(cookieFor(r.Host)); err == nil && httpserve.EqualSecret(c.Value, s.cookieValue()) {
			return true
		}
		if t := r.URL.Query().Get("token"); t != "" && r.Method == http.MethodGet && r.URL.Path == "/" && httpserve.EqualSecret(t, s.token) {
			http.SetCookie(w, &http.Cookie{
				Name: cookieFor(r.Host), Value: s.cookieValue(), Path: "/",
				HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
			})
			http.Redirect(w, r, "/", http.StatusSeeOther) // drop the token from the address bar
			return false
		}
	}
	if strings.HasPrefix(r.URL.Path, "/v1/") || strings.HasPrefix(r.URL.Path, "/api/") {
		httpserve.RefuseToken(w)
		return false
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="massgen"`)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write([]byte("This massgen server needs its token: open /?token=<token> once, or send Authorization: Bearer <token>.\n"))
	return false
}

// cookieValue is derived from the token, so the cookie is not the token itself.
func (s *Server) cookieValue() string {
	sum := sha256.Sum256([]byte("massgen dashboard cookie\x00" + s.token))
	return hex.EncodeToString(sum[:])
}
