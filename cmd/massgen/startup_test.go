package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"massgen/internal/childproc/reexec"
)

// What every start of massgen costs, against a bare Go hello-world built the same way:
//
//	go test -run '^$' -bench Startup -benchtime 20x ./cmd/massgen/
//
// It reports, per start, the median time of hello, `massgen --version`, massgen re-executed as
// a sandboxed command's init (reexec's probe: the runtime and the initialisers that run before
// reexec's, which each of a sandboxed command's massgen stages pays), and the time from starting a
// session to its first provider request, plus the ratios to hello. The four run interleaved,
// so that a loaded machine slows them alike. TestStartupMeasures runs each once and checks
// that it measures what it says.
func BenchmarkStartup(b *testing.B) {
	hello := buildHello(b)
	first := newFirstRequest(b)
	probes := []struct {
		name string
		run  func() (time.Duration, error)
	}{
		{"hello", func() (time.Duration, error) { return timed(exec.Command(hello, "--version")) }},
		{"version", func() (time.Duration, error) { return timed(exec.Command(binary, "--version")) }},
		{"reexec", func() (time.Duration, error) { return timed(probeCommand()) }},
		{"first-request", func() (time.Duration, error) { _, d, err := first.measure(); return d, err }},
	}
	times := make([][]time.Duration, len(probes))
	for b.Loop() {
		for i, p := range probes {
			d, err := p.run()
			if err != nil {
				b.Fatalf("%s: %v", p.name, err)
			}
			times[i] = append(times[i], d)
		}
	}
	medians := make([]float64, len(probes))
	for i, p := range probes {
		medians[i] = float64(median(times[i]).Microseconds()) / 1000
		b.ReportMetric(medians[i], p.name+"-ms")
	}
	for i, p := range probes[1:] {
		b.ReportMetric(medians[i+1]/medians[0], p.name+"/hello")
	}
	b.ReportMetric(0, "ns/op") // the loop's own time is the four together: not a figure of any
}

// TestStartupMeasures runs what BenchmarkStartup measures once, and checks each step does what
// the benchmark says it does (no timing: the machine's load decides that).
func TestStartupMeasures(t *testing.T) {
	hello := buildHello(t)
	if out, err := exec.Command(hello, "--version").Output(); err != nil || string(out) != "hello 0\n" {
		t.Errorf("hello: %q, %v", out, err)
	}
	if out, err := exec.Command(binary, "--version").Output(); err != nil || !strings.HasPrefix(string(out), "massgen ") {
		t.Errorf("massgen --version: %q, %v", out, err)
	}
	// The probe exits in reexec's initialiser, with nothing of massgen's own run.
	var out bytes.Buffer
	probe := probeCommand()
	probe.Stdout, probe.Stderr = &out, &out
	if err := probe.Run(); err != nil || out.Len() != 0 {
		t.Errorf("re-executed as the probe: %v, output %q", err, out.String())
	}
	// And before the initialisers of the packages a sandboxed command's stages do not need:
	// every one that uses reflect (the SDKs, grpc, protobuf, templates) runs after reflect's.
	out.Reset()
	probe = probeCommand()
	probe.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	probe.Stdout, probe.Stderr = &out, &out
	if err := probe.Run(); err != nil {
		t.Errorf("the probe with inittrace: %v, %s", err, out.String())
	}
	var inits []string
	for line := range strings.Lines(out.String()) {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "init" {
			inits = append(inits, f[1])
		}
	}
	if len(inits) == 0 || slices.Contains(inits, "reflect") || !slices.Contains(inits, "os") {
		t.Errorf("the probe ran %d initialisers, reflect's among them (or without os's): %v", len(inits), inits)
	}
	first := newFirstRequest(t)
	got, _, err := first.measure()
	if err != nil {
		t.Fatal(err)
	}
	if got.path != "/v1/chat/completions" || !strings.Contains(got.body, `"model":"startup-model"`) {
		t.Errorf("first request: %s %s", got.path, got.body)
	}
}

func probeCommand() *exec.Cmd {
	c := exec.Command(binary)
	c.Args[0] = reexec.ProbeName // massgen exits 0 from reexec's initialiser
	return c
}

// timed runs c to its end and returns how long it took.
func timed(c *exec.Cmd) (time.Duration, error) {
	start := time.Now()
	out, err := c.CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("%v: %s", err, out)
	}
	return time.Since(start), nil
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

var helloOnce = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "massgen-hello")
	if err != nil {
		return "", err
	}
	src := "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc main() {\n\tif len(os.Args) > 1 && os.Args[1] == \"--version\" {\n\t\tfmt.Println(\"hello 0\")\n\t}\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module hello\n\ngo 1.26\n"), 0o644); err != nil {
		return "", err
	}
	// Built as TestMain builds massgen (its tag changes nothing in a program without grpc).
	c := exec.Command("go", "build", "-tags", "grpcnotrace", "-o", "hello", ".")
	c.Dir = dir
	if out, err := c.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build hello: %v: %s", err, out)
	}
	return filepath.Join(dir, "hello"), nil
})

func buildHello(tb testing.TB) string {
	tb.Helper()
	p, err := helloOnce()
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// firstRequest starts sessions of a one-agent team whose OpenAI-compatible server is a local
// one, and times each from the start of massgen to its first request there.
type firstRequest struct {
	cfg, work string
	got       chan request
}

type request struct{ path, body string }

func newFirstRequest(tb testing.TB) *firstRequest {
	tb.Helper()
	f := &firstRequest{work: tb.TempDir(), got: make(chan request, 1)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		_, _ = b.ReadFrom(r.Body)
		select {
		case f.got <- request{r.URL.Path, b.String()}:
		default:
		}
		http.Error(w, "the benchmark stops here", http.StatusServiceUnavailable)
	}))
	tb.Cleanup(srv.Close)
	f.cfg = filepath.Join(f.work, "team.yaml")
	team := fmt.Sprintf("agents:\n  - id: a\n    backend: {type: chatcompletion, base_url: %q, model: startup-model, api_key: k}\n", srv.URL+"/v1")
	if err := os.WriteFile(f.cfg, []byte(team), 0o600); err != nil {
		tb.Fatal(err)
	}
	return f
}

// measure starts a session, waits for its first request, stops it, and returns the request
// and the time from the start to it.
func (f *firstRequest) measure() (request, time.Duration, error) {
	c := exec.Command(binary, "--config", f.cfg, "--no-display", "--no-logs", "startup question")
	c.Dir = f.work
	c.Env = append(os.Environ(), "HOME="+f.work)
	// A retry of the last session's request may still be waiting: it is not this one's.
	select {
	case <-f.got:
	default:
	}
	start := time.Now()
	if err := c.Start(); err != nil {
		return request{}, 0, err
	}
	defer func() { _ = c.Process.Kill(); _ = c.Wait() }()
	select {
	case r := <-f.got:
		return r, time.Since(start), nil
	case <-time.After(30 * time.Second):
		return request{}, 0, fmt.Errorf("no request from massgen within 30 s")
	}
}
