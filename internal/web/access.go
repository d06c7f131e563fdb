package web

import (
	"fmt"
	"net/http"
	"strings"
)

// The token rule of massgen serve, for the other servers of the same binary (massgen mcp
// --http): they listen and check requests exactly as serve's API does.

// CheckListenAddr returns an error wrapping ErrTokenRequired when addr is not a loopback
// address and token is empty.
func CheckListenAddr(addr, token string) error {
	if token == "" && !loopbackAddr(addr) {
		return fmt.Errorf("%w: %s is not loopback (serve it with a token, or listen on 127.0.0.1)", ErrTokenRequired, addr)
	}
	return nil
}

// GuardAPI wraps h with serve's checks for its API routes: without a token only loopback Host
// names are answered (DNS rebinding), a cross-origin POST is refused (CSRF), and with a token
// every request must send "Authorization: Bearer <token>" (401 otherwise). Refusals are JSON
// errors, as the chat API's.
func GuardAPI(token string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-store")
		if token == "" && !loopbackHost(hostOnly(r.Host)) {
			writeError(w, http.StatusForbidden, "invalid_request_error", "host_not_allowed", "",
				"this server answers only to localhost, 127.0.0.1 or [::1]; start it with a token (without --no-token) to serve other host names")
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r.Host) {
				writeError(w, http.StatusForbidden, "invalid_request_error", "cross_origin", "", "cross-origin requests are not allowed")
				return
			}
		}
		if token != "" && !bearerOK(r, token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="massgen"`)
			writeError(w, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key", "",
				"missing or wrong token: send Authorization: Bearer <token>")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// bearerOK reports whether r sends "Authorization: Bearer <token>"; the scheme is
// case-insensitive (RFC 7235).
func bearerOK(r *http.Request, token string) bool {
	scheme, t, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	return ok && strings.EqualFold(scheme, "Bearer") && equalSecret(strings.TrimSpace(t), token)
}
