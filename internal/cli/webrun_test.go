package cli

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// freePort returns a loopback port nothing listens on.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// With --automation, --web runs the question in the dashboard and ends with it: the
// automation lines, the answer file and the exit code are the run's.
func TestWeb_AutomationEndsWithTheRun(t *testing.T) {
	t.Chdir(t.TempDir())
	cfg := writeConfig(t, fastTeam)
	code, out, stderr := execute(t, t.Context(), "--config", cfg, "--web", "--web-port", "0", "--no-browser", "--automation",
		"--output-file", "answer.md", "capital?")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	lines := automationLines(out)
	answer, err := os.ReadFile("answer.md")
	if err != nil || len(answer) == 0 || lines["WINNER"] == "" || !filepath.IsAbs(lines["LOG_DIR"]) {
		t.Fatalf("answer %q (%v)\nstdout: %s", answer, err, out)
	}
	if !regexp.MustCompile(`dashboard at http://127\.0\.0\.1:\d+/\?token=[\w-]{43} .*\n.*\n  the question runs at http://127\.0\.0\.1:\d+/\?token=[\w-]{43}#/session/log_\d+_\d+_\d+/turn_1\n`).MatchString(stderr) {
		t.Errorf("stderr:\n%s", stderr)
	}
	// A run that cannot start says why, with its exit code.
	keyless := writeConfig(t, "agents:\n  - id: a\n    backend: {type: openai, model: gpt-5-mini}\n")
	code, _, stderr = execute(t, t.Context(), "--config", keyless, "--web", "--web-port", "0", "--no-browser", "--automation", "capital?")
	if code != ExitConfig || !strings.Contains(stderr, "no API key for backend openai") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
}

// --web on every interface announces an address a browser opens, not http://[::]:PORT/.
func TestWeb_EveryInterfaceIsAnnouncedAtLoopback(t *testing.T) {
	t.Chdir(t.TempDir())
	cfg := writeConfig(t, fastTeam)
	code, out, stderr := execute(t, t.Context(), "--config", cfg, "--web", "--web-host", "0.0.0.0", "--web-port", "0", "--no-browser", "--automation", "capital?")
	if code != 0 || !regexp.MustCompile(`dashboard at http://127\.0\.0\.1:\d+/\?token=`).MatchString(stderr) || strings.Contains(stderr, "[::]") {
		t.Errorf("exit %d\n%s\n%s", code, out, stderr)
	}
}

// Without --automation, --web serves until interrupted; the question's run is on the
// dashboard. The browser opener gets the session's page, and none of massgen's keys.
func TestWeb_ServesAndOpensTheBrowser(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	cfg := writeConfig(t, fastTeam)
	opener := filepath.Join(dir, "opener.sh")
	script := "#!/bin/sh\nenv > " + filepath.Join(dir, "env.txt") + "\necho \"$1\" > " + filepath.Join(dir, "url.tmp") +
		"\nmv " + filepath.Join(dir, "url.tmp") + " " + filepath.Join(dir, "url.txt") + "\n"
	if err := os.WriteFile(opener, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BROWSER", opener)
	t.Setenv("OPENAI_API_KEY", "sk-must-not-reach-the-browser")
	port := freePort(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan int)
	var out, stderr string
	go func() {
		code, o, e := execute(t, ctx, "--config", cfg, "--web", "--web-port", port, "capital?")
		out, stderr = o, e
		done <- code
	}()
	base := "http://127.0.0.1:" + port
	var id string
	var info serverInfo
	deadline := time.Now().Add(20 * time.Second)
	for ok := false; !ok && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		info, ok = readServerFile(t, "web", "127.0.0.1:"+port)
	}
	for id == "" && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		resp, err := bearerGet(t, base+"/api/sessions", info.Token)
		if err != nil {
			continue
		}
		var list struct {
			Sessions []struct{ ID, Status, Question string }
		}
		_ = json.NewDecoder(resp.Body).Decode(&list)
		resp.Body.Close()
		if len(list.Sessions) == 1 && list.Sessions[0].Status == "completed" && list.Sessions[0].Question == "capital?" {
			id = list.Sessions[0].ID
		}
	}
	if id == "" {
		cancel()
		<-done
		t.Fatalf("the question's run never completed on the dashboard\n%s\n%s", out, stderr)
	}
	var url []byte
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(filepath.Join(dir, "url.txt")); err == nil {
			url = b
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d after Ctrl-C\n%s\n%s", code, out, stderr)
	}
	if want := base + "/?token=" + info.Token + "#/session/" + id + "\n"; info.Token == "" || string(url) != want {
		t.Errorf("the browser opened %q, want %q", url, want)
	}
	env, _ := os.ReadFile(filepath.Join(dir, "env.txt"))
	if strings.Contains(string(env), "sk-must-not-reach-the-browser") || !strings.Contains(string(env), "PATH=") {
		t.Errorf("the browser's environment:\n%s", env)
	}
	if !strings.Contains(out, "dashboard at "+base+"/?token="+info.Token) || !strings.Contains(out, "massgen --web: stopped") {
		t.Errorf("stdout:\n%s", out)
	}
}

// A browser that cannot be opened is no error: the URL is printed instead.
func TestOpenBrowser_Failure(t *testing.T) {
	t.Setenv("BROWSER", filepath.Join(t.TempDir(), "no-such-browser"))
	if err := openBrowser("http://127.0.0.1:1/"); err == nil {
		t.Fatal("opening with a missing browser did not fail")
	}
	t.Chdir(t.TempDir())
	cfg := writeConfig(t, fastTeam)
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	code, out, stderr := execute(t, ctx, "--config", cfg, "--web", "--web-port", "0")
	if code != 0 || !regexp.MustCompile(`could not open a browser \(.*\): open http://127\.0\.0\.1:\d+/\?token=[\w-]+ yourself`).MatchString(out) {
		t.Errorf("exit %d\nstdout: %s\nstderr: %s", code, out, stderr)
	}
}
