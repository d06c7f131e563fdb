package web

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"massgen/internal/config"
)

// The end-to-end tests drive a real server with real clients: the official openai npm package
// and Debian's chromium through playwright-core, both installed by .ci/run into .ci/npm. When
// they are missing the tests skip, unless CI is set, where they fail.

// nodeEnv returns the node binary and an environment whose NODE_PATH finds the packages.
func nodeEnv(t *testing.T, packages []string, chromium bool) (string, []string) {
	t.Helper()
	modules := repoFile(t, ".ci/npm/node_modules")
	var missing []string
	node, err := exec.LookPath("node")
	if err != nil {
		missing = append(missing, "node")
	}
	for _, p := range packages {
		if _, err := os.Stat(filepath.Join(modules, p, "package.json")); err != nil {
			missing = append(missing, "npm package "+p)
		}
	}
	if chromium {
		if _, err := os.Stat("/usr/bin/chromium"); err != nil {
			missing = append(missing, "/usr/bin/chromium")
		}
	}
	if len(missing) > 0 {
		msg := "missing " + strings.Join(missing, ", ") + " (install: npm install --prefix .ci/npm openai playwright-core; apt-get install chromium)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return node, append(os.Environ(), "NODE_PATH="+modules)
}

// serveDemo serves examples/demo.yaml, as is, on a free loopback port with token and returns
// the base URL and the log root.
func serveDemo(t *testing.T, token string) (string, string) {
	t.Helper()
	cfg, rep := config.Load(repoFile(t, "examples/demo.yaml"))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	root := filepath.Join(t.TempDir(), "logs")
	_, addr := serveListener(t, Options{Teams: map[string]*config.Config{"demo": cfg}, LogRoot: root, Token: token, Version: "e2e"})
	return "http://" + addr, root
}

func runNode(t *testing.T, node string, env []string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = repoFile(t, ".")
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.Bytes()
}

func TestE2E_OpenAIClient(t *testing.T) {
	node, env := nodeEnv(t, []string{"openai"}, false)
	const token = "e2e-token"
	base, root := serveDemo(t, token)
	out := runNode(t, node, append(env, "MASSGEN_TOKEN="+token), "internal/web/e2e/openai_client.mjs", base)
	var res struct {
		Answer  string       `json:"answer"`
		MassGen *massgenInfo `json:"massgen"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(out), &res); err != nil || res.MassGen == nil {
		t.Fatalf("client output %q: %v", out, err)
	}
	file, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(res.MassGen.LogDir), "final", res.MassGen.Winner, "answer.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Answer != string(file) {
		t.Errorf("the client got %q, the answer file holds %q", res.Answer, file)
	}
}

func TestE2E_Browser(t *testing.T) {
	node, env := nodeEnv(t, []string{"playwright-core"}, true)
	const token = "e2e-browser-token"
	base, _ := serveDemo(t, token)
	// A server with no team yet, whose wizard would save the first (massgen serve --setup-dir).
	_, empty := serveListener(t, Options{LogRoot: t.TempDir(), SetupDir: t.TempDir(), Token: token})
	shot := filepath.Join(t.TempDir(), "dashboard.png")
	runNode(t, node, env, "internal/web/e2e/browser.mjs", base+"/?token="+token, shot, "http://"+empty+"/?token="+token)
	png, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) || len(png) < 10_000 {
		t.Fatalf("screenshot: %d bytes, not a PNG of the page", len(png))
	}
	if dir := os.Getenv("MASSGEN_E2E_ARTIFACTS"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "dashboard.png"), png, 0o644); err != nil {
			t.Error(err)
		}
	}
}

// The official npm client retries a 500 twice by default: one call to a failing team ran it
// three times. Each call must start exactly one session.
func TestE2E_OpenAIClientRunsAFailingTeamOnce(t *testing.T) {
	node, env := nodeEnv(t, []string{"openai"}, false)
	var runs atomic.Int64
	opts := Options{Teams: map[string]*config.Config{
		"demo":     loadTeam(t, "demo", fastDemo(t)),
		"fail":     loadTeam(t, "fail", failTeam),
		"slowfail": loadTeam(t, "slowfail", strings.Replace(hangTeam, "%TIMEOUT%", "1", 1)),
	}, LogRoot: t.TempDir()}
	countRuns(&opts, &runs)
	_, addr := serveListener(t, opts)
	out := runNode(t, node, env, "internal/web/e2e/retry_client.mjs", "http://"+addr)
	if got, want := strings.TrimSpace(string(out)), `{"fail":500,"slowfail":504}`; got != want {
		t.Errorf("client saw %s, want %s", got, want)
	}
	if n := runs.Load(); n != 2 {
		t.Errorf("two client calls started %d sessions, want 2", n)
	}
}
