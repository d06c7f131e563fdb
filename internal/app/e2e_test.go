package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/usage"
	"massgen/internal/view"
)

// keys are the fake secrets of the four agents; none may ever reach the log directory.
var keys = map[string]string{
	"OPENAI_API_KEY":    "sk-e2e-openai-SECRET-1111",
	"ANTHROPIC_API_KEY": "sk-ant-e2e-SECRET-2222",
	"GEMINI_API_KEY":    "AIza-e2e-SECRET-3333",
	"GROQ_API_KEY":      "gsk_e2e_SECRET_4444",
	// copilot's key for a custom endpoint (the CLI team tests).
	"COPILOT_PROVIDER_API_KEY": "sk-e2e-copilot-SECRET-5555",
}

type team struct {
	servers map[string]*fakeServer // by agent id
	models  map[string]string
	cfg     *config.Config
}

// fourAgents starts one fake server per protocol, faulting the agent named in faults. The team
// waits for every vote: a call that an early end cuts off is billed by estimate, and these
// tests hold the cost to what the servers billed.
func fourAgents(t *testing.T, faults map[string]fault) team {
	t.Helper()
	tm := team{servers: map[string]*fakeServer{}, models: map[string]string{
		"gpt": "gpt-5-mini", "claude": "claude-sonnet-4-5", "gem": "gemini-2.5-flash", "fast": "llama-3.3-70b-versatile"}}
	tm.servers["gpt"] = newFake(t, faults["gpt"], openaiResponses("Paris is the capital of France."))
	tm.servers["claude"] = newFake(t, faults["claude"], anthropicMessages("The capital is Paris."))
	tm.servers["gem"] = newFake(t, faults["gem"], geminiStream("Paris, on the Seine."))
	tm.servers["fast"] = newFake(t, faults["fast"], chatCompletions("It is Paris."))
	yaml := fmt.Sprintf(`
agents:
  - id: gpt
    backend: {type: openai, model: gpt-5-mini, base_url: "%s/v1"}
  - id: claude
    backend: {type: claude, model: claude-sonnet-4-5, base_url: "%s"}
  - id: gem
    backend: {type: gemini, model: gemini-2.5-flash, base_url: "%s"}
  - id: fast
    backend: {type: groq, model: llama-3.3-70b-versatile, base_url: "%s/openai/v1"}
orchestrator: {failure_budget: 2, end_when_decided: false}
timeout_settings: {agent_timeout_seconds: 4, orchestrator_timeout_seconds: 120}
`, tm.servers["gpt"].URL, tm.servers["claude"].URL, tm.servers["gem"].URL, tm.servers["fast"].URL)
	cfg, rep := config.Parse("team.yaml", []byte(yaml))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	tm.cfg = cfg
	return tm
}

func runTeam(t *testing.T, tm team, root string) (Result, string) {
	t.Helper()
	var out bytes.Buffer
	res, err := Run(t.Context(), tm.cfg, Options{
		Question: "What is the capital of France?", Logging: true, LogRoot: root,
		Getenv: func(k string) string { return keys[k] },
		Sinks:  []event.Sink{view.NewPlain(&out)},
	})
	if err != nil {
		t.Fatal(err)
	}
	return res, out.String()
}

func TestE2E_FourProviders(t *testing.T) {
	root := t.TempDir()
	tm := fourAgents(t, nil)
	res, out := runTeam(t, tm, root)
	if res.ExitCode != 0 || res.Winner != "gpt" || res.FinalAnswer != "FINAL: Paris is the capital of France." {
		t.Fatalf("result %+v\n%s", res.Result, out)
	}

	// Usage and cost equal what the servers billed, priced by the table.
	var want provider.Usage
	var wantCost float64
	perAgent := map[string]float64{}
	for id, s := range tm.servers {
		n := int64(s.billed.Load())
		u := provider.Usage{InputTokens: n * usageIn, OutputTokens: n * usageOut}
		want = want.Add(u)
		backend := tm.cfg.Agents[indexOf(tm.cfg, id)].Backend.Type
		perAgent[id] = usage.Cost(backend, tm.models[id], u)
		wantCost += perAgent[id]
		if p, ok := usage.Lookup(backend, tm.models[id]); !ok || p.Input == 0 {
			t.Fatalf("%s/%s is not priced", backend, tm.models[id])
		}
	}
	var status struct {
		Usage struct {
			Input  int64   `json:"input_tokens"`
			Output int64   `json:"output_tokens"`
			Cost   float64 `json:"cost_usd"`
		} `json:"usage"`
		Agents map[string]struct {
			Usage struct {
				Cost float64 `json:"cost_usd"`
			} `json:"usage"`
		} `json:"agents"`
	}
	readJSON(t, filepath.Join(res.Dir, "status.json"), &status)
	if status.Usage.Input != want.InputTokens || status.Usage.Output != want.OutputTokens || !near(status.Usage.Cost, wantCost) {
		t.Errorf("status.json usage %+v, servers billed %+v costing %v", status.Usage, want, wantCost)
	}
	for id, c := range perAgent {
		if got := status.Agents[id].Usage.Cost; !near(got, c) {
			t.Errorf("%s cost %v, want %v", id, got, c)
		}
	}
	var meta struct {
		Totals struct {
			Cost float64 `json:"cost_usd"`
		} `json:"totals"`
	}
	readJSON(t, filepath.Join(res.Dir, "metadata.json"), &meta)
	if !near(meta.Totals.Cost, wantCost) {
		t.Errorf("metadata.json cost %v, want %v", meta.Totals.Cost, wantCost)
	}
	if line := view.UsageLine(want, wantCost); !strings.Contains(out, line) {
		t.Errorf("summary lacks %q:\n%s", line, out)
	}
	assertNoKeys(t, root)
}

func TestE2E_FaultsStillFinish(t *testing.T) {
	tests := []struct {
		name, agent string
		fault       fault
		dead        bool
	}{
		{"429 with Retry-After", "gpt", statusOnce(429, "Retry-After", "1", `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`), false},
		{"500", "claude", statusOnce(500, "", "", `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`), false},
		{"dropped connection", "gem", dropOnce, false},
		{"malformed stream", "fast", malformedOnce, false},
		{"hung call", "claude", hangOnce, false},
		{"rejected key", "gem", echoKeyAlways, true},
		{"rejected key quoted back", "gpt", echoKeyAlways, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			tm := fourAgents(t, map[string]fault{tc.agent: tc.fault})
			res, out := runTeam(t, tm, root)
			t.Logf("session took %s", res.Duration)
			if res.ExitCode != 0 || res.FinalAnswer == "" {
				t.Fatalf("result %+v\n%s", res.Result, out)
			}
			evs, err := event.ReadFile(filepath.Join(res.Dir, "events.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			dead := false
			for _, e := range evs {
				if d, ok := e.Payload.(event.AgentDead); ok && d.Agent == tc.agent {
					dead = true
				}
			}
			if dead != tc.dead {
				t.Errorf("agent %s dead = %v, want %v\n%s", tc.agent, dead, tc.dead, out)
			}
			if tc.dead && !strings.Contains(out, "_API_KEY") {
				t.Errorf("the error does not name the key variable:\n%s", out)
			}
			assertNoKeys(t, root)
		})
	}
}

// assertNoKeys searches every file under root for any of the keys.
func assertNoKeys(t *testing.T, root string) {
	t.Helper()
	eachFile(t, root, func(path string, b []byte) {
		for env, k := range keys {
			if bytes.Contains(b, []byte(k)) || bytes.Contains(b, []byte(k[len(k)-8:])) {
				t.Errorf("%s holds %s's key (or its tail)", path, env)
			}
		}
	})
}

// eachFile calls check with every file under root and its content; a log folder with no file
// at all fails the test, since nothing would have been checked.
func eachFile(t *testing.T, root string, check func(path string, b []byte)) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		check(path, b)
		return nil
	})
	if err != nil || n == 0 {
		t.Fatalf("walk %s: %v (%d files)", root, err, n)
	}
}

func indexOf(cfg *config.Config, id string) int {
	for i, a := range cfg.Agents {
		if a.ID == id {
			return i
		}
	}
	return -1
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
