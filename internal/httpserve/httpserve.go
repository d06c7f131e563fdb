// Package httpserve is what massgen's HTTP servers share (massgen serve's dashboard and API,
// massgen mcp --http): the rule that only loopback is served without a token, the guard of
// their API routes, and the OpenAI-shaped error body they refuse requests with.
package httpserve

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// ErrTokenRequired is returned when asked to listen on an address other than loopback without
// a token.
var ErrTokenRequired = errors.New("a token is required to listen on an address other than loopback")

// CheckAddr returns an error wrapping ErrTokenRequired when addr is not a loopback address and
// token is empty. Servers call it before they listen and again on the listener they serve.
func CheckAddr(addr, token string) error {
	if token == "" && !Loopback(addr) {
		return fmt.Errorf("%w: %s is not loopback (serve it with a token, or listen on 127.0.0.1)", ErrTokenRequired, addr)
	}
	return nil
}

// Loopback reports whether hostport (host:port, or a bare host) names only the loopback
// interface: localhost, a *.localhost name or a loopback IP. An empty host means every
// interface, which is not loopback.
func Loopback(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Guard wraps h with the checks of an API route: without a token only loopback Host names
// are answered (DNS rebinding), a cross-origin POST is refused (CSRF), and with a token every
// request must send "Authorization: Bearer <token>" (401 otherwise). Refusals are WriteError
// bodies.
func Guard(token string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-store")
		if token == "" && !Loopback(r.Host) {
			RefuseHost(w)
			return
		}
		if CrossOrigin(r) {
			RefuseCrossOrigin(w)
			return
		}
		if token != "" && !Bearer(r, token) {
			RefuseToken(w)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// CrossOrigin reports a request that changes state (not GET or HEAD) from a page of another
// origin: browsers send Origin with every cross-site POST.
func CrossOrigin(r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return false
	}
	u, err := url.Parse(o)
	return err != nil || u.Host == "" || !strings.EqualFold(u.Host, r.Host)
}

// RefuseHost answers a request to a host name other than loopback on a server without a token.
func RefuseHost(w http.ResponseWriter) {
	WriteError(w, http.StatusForbidden, "invalid_request_error", "host_not_allowed", "",
		"this server answers only to localhost, 127.0.0.1 or [::1]; start it with a token (without --no-token) to serve other host names")
}

// RefuseCrossOrigin answers a CrossOrigin request.
func RefuseCrossOrigin(w http.ResponseWriter) {
	WriteError(w, http.StatusForbidden, "invalid_request_error", "cross_origin", "", "cross-origin requests are not allowed")
}

// RefuseToken answers an API request without the right token.
func RefuseToken(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="massgen"`)
	WriteError(w, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key", "",
		"missing or wrong token: send Authorization: Bearer <token>")
}

// Bearer reports whether r sends "Authorization: Bearer <token>"; the scheme is
// case-insensitive (RFC 7235).
func Bearer(r *http.Request, token string) bool {
	scheme, t, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	return ok && strings.EqualFold(scheme, "Bearer") && EqualSecret(strings.TrimSpace(t), token)
}

// EqualSecret compares in constant time, whatever the lengths.
func EqualSecret(got, want string) bool {
	a, b := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// APIError is OpenAI's error object.
type APIError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// NewAPIError is the error object; an empty code or param is null.
func NewAPIError(typ, code, param, msg string) APIError {
	e := APIError{Message: msg, Type: typ}
	if param != "" {
		e.Param = &param
	}
	if code != "" {
		e.Code = &code
	}
	return e
}

// WriteError writes {"error": {...}} with status, as OpenAI's API does.
func WriteError(w http.ResponseWriter, status int, typ, code, param, msg string) {
	WriteJSON(w, status, map[string]APIError{"error": NewAPIError(typ, code, param, msg)})
}

// WriteJSON writes v as the JSON body of a status answer; a v that cannot be encoded becomes
// a 500 with an error body.
// Text is not HTML-escaped: the body is JSON, never HTML, and a message that says to send
// "Bearer <token>" should read so, not "Bearer \u003ctoken\u003e".
func WriteJSON(w http.ResponseWriter, status int, v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
		b.Reset()
		b.WriteString(`{"error":{"message":"cannot encode the response","type":"server_error","param":null,"code":null}}` + "\n")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}
