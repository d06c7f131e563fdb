package cli

import (
	"massgen/internal/httpserve"

	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"massgen/internal/private"
)

// tokenEnv may hold the token of massgen's HTTP servers (serve, --web, mcp --http).
const tokenEnv = "MASSGEN_SERVE_TOKEN"

// serverDir is where each running server leaves its URL and token for the user's own tools,
// under the home directory. Sandboxed commands and CLI agents never see the home directory.
var serverDir = filepath.Join(".massgen", "servers")

// tokenFlags are how a server gets its token. Any local process can reach a loopback port (a
// coding-agent CLI's own shell included), so every request must prove it knows the token;
// --no-token is the explicit way out, on loopback only.
type tokenFlags struct {
	legacy string // --token VALUE: refused, since /proc/PID/cmdline shows it to every local user
	file   string
	none   bool
	flags  *pflag.FlagSet // where --token would be, when the command had it
}

// add defines --token-file and --no-token, their help starting with with ("with --web: "), and
// the refused --token (hidden) when legacy.
func (tf *tokenFlags) add(f *pflag.FlagSet, with string, legacy bool) {
	f.StringVar(&tf.file, "token-file", "", with+"read the token every request must send from `FILE` (default $"+tokenEnv+
		", else a fresh one; either is written to ~/"+filepath.ToSlash(serverDir)+")")
	f.BoolVar(&tf.none, "no-token", false, with+"serve without a token, on loopback only: any local process may then use the server")
	if legacy {
		f.StringVar(&tf.legacy, "token", "", "refused: set $"+tokenEnv+" or use --token-file")
		_ = f.MarkHidden("token")
		tf.flags = f
	}
}

// resolve returns the token to require ("" with --no-token): $MASSGEN_SERVE_TOKEN, else the
// contents of --token-file, else a fresh random one. addr is where the server will listen.
func (tf *tokenFlags) resolve(addr string, stderr io.Writer) (string, error) {
	if tf.flags != nil && tf.flags.Changed("token") {
		return "", exitf(ExitConfig, "--token is no longer accepted: any local user can read a command line (ps, /proc/PID/cmdline). "+
			"Put the token in $%s or in a file only you can read, given as --token-file FILE; or drop it, and massgen makes one "+
			"and writes it to ~/%s", tokenEnv, filepath.ToSlash(serverDir))
	}
	env := os.Getenv(tokenEnv)
	if tf.none {
		if tf.file != "" || env != "" {
			given := "$" + tokenEnv
			if tf.file != "" {
				given = "--token-file"
			}
			return "", exitf(ExitConfig, "--no-token contradicts %s: drop --no-token, or the token", given)
		}
		if err := httpserve.CheckAddr(addr, ""); err != nil {
			return "", exitf(ExitConfig, "--no-token serves loopback only, and %s is not loopback: drop --no-token (massgen then requires a token) or listen on 127.0.0.1", addr)
		}
		return "", nil
	}
	if env != "" {
		if tf.file != "" {
			fmt.Fprintf(stderr, "warning: $%s is set, so --token-file %s is not read\n", tokenEnv, tf.file)
		}
		return env, nil
	}
	if tf.file != "" {
		return readTokenFile(tf.file, stderr)
	}
	return newToken()
}

// readTokenFile reads a token from path: its first line, without surrounding spaces.
func readTokenFile(path string, stderr io.Writer) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", exitf(ExitConfig, "--token-file: %v", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return "", exitf(ExitConfig, "--token-file %s: %v", path, err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	line = strings.TrimSpace(line)
	if line == "" {
		return "", exitf(ExitConfig, "--token-file %s is empty: write a secret into it (head -c 32 /dev/urandom | base64 > %s; chmod 600 %s)", path, path, path)
	}
	if info, err := f.Stat(); err == nil && info.Mode().Perm()&0o077 != 0 {
		fmt.Fprintf(stderr, "warning: --token-file %s can be read by other users (mode %#o): chmod 600 %s\n", path, info.Mode().Perm(), path)
	}
	return line, nil
}

// newToken makes a 256-bit secret, URL-safe so it can ride in ?token=.
func newToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", exitf(ExitExecution, "cannot make a token: %v", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// withToken returns base (ending in "/") with ?token= for the guard to turn into a cookie,
// and fragment after it; no token, no query.
func withToken(base, token, fragment string) string {
	if token != "" {
		base += "?token=" + url.QueryEscape(token)
	}
	return base + fragment
}

// serverInfo is the file a running server leaves under ~/.massgen/servers.
type serverInfo struct {
	Kind  string `json:"kind"`
	URL   string `json:"url"`
	Token string `json:"token,omitempty"`
	PID   int    `json:"pid"`
}

// publishServer writes kind-PORT.json (0600, in a 0700 folder) under ~/.massgen/servers with
// the server's URL and token, replacing a file a dead server left on that port. The returned
// func removes it, unless another server has taken it over since. A failure is only a warning:
// the URL printed at start still carries the token.
func publishServer(kind string, addr net.Addr, serverURL, token string, stderr io.Writer) (path string, remove func()) {
	remove = func() {}
	home, err := os.UserHomeDir()
	if err != nil {
		fmt.Fprintf(stderr, "warning: no home folder (%v): the token is not written to ~/%s\n", err, filepath.ToSlash(serverDir))
		return "", remove
	}
	port := "0"
	if ta, ok := addr.(*net.TCPAddr); ok {
		port = strconv.Itoa(ta.Port)
	}
	dir := filepath.Join(home, serverDir)
	path = filepath.Join(dir, kind+"-"+port+".json")
	info := serverInfo{Kind: kind, URL: serverURL, Token: token, PID: os.Getpid()}
	if err := writePrivate(dir, path, info); err != nil {
		fmt.Fprintf(stderr, "warning: cannot write %s: %v\n", path, err)
		return "", remove
	}
	return path, func() {
		var now serverInfo
		if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &now) == nil && now.PID == info.PID {
			_ = os.Remove(path)
		}
	}
}

// writePrivate writes v as JSON to path atomically, readable by the user alone.
func writePrivate(dir, path string, v any) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o700); err != nil { // an older, wider folder
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return private.WriteFileAtomic(path, append(b, '\n'))
}

// printTokenHint tells API clients how to authenticate, and where the token is.
func printTokenHint(w io.Writer, token, file string) {
	switch {
	case token == "":
		fmt.Fprintln(w, "  no token (--no-token): any local process may use this server")
	case file != "":
		fmt.Fprintf(w, "  clients send Authorization: Bearer <token>; the token is in %s\n", file)
	default:
		fmt.Fprintf(w, "  clients send Authorization: Bearer <token>; the token is $%s, or your --token-file\n", tokenEnv)
	}
}

// listenURL is the http URL of path on the server listening at a. A server listening on every
// interface (0.0.0.0, which Go reports as [::]) is named by 127.0.0.1, which reaches it from
// this machine: "[::]" is not an address a browser opens.
func listenURL(a net.Addr, path string) string {
	host := a.String()
	if tcp, ok := a.(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		host = net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port))
	}
	return "http://" + host + path
}
