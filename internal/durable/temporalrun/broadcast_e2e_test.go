package temporalrun

import (
	"context"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/durable"
	"massgen/internal/event"
	"massgen/internal/provider"
)

// TestSession_BroadcastToTheAgents: on Temporal the asker's turn asks the others with
// ask_others; their side calls run on the asker's worker on their conversations as the
// workflow holds them, the answers reach the asker as locally, each side call is billed to
// the agent that made it, once, and the answering agents are told at their next turn.
func TestSession_BroadcastToTheAgents(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	// The worker's providers note what each side call sends.
	var mu sync.Mutex
	var sideCalls []provider.Request
	target := durable.Target{Address: devServer(t), Queue: "broadcast-test"}
	c := dialTarget(t, target)
	workerWith(t, c, target, &Activities{NewProvider: func(b config.Backend, key, keyEnv string) (provider.Provider, error) {
		p, err := app.NewProvider(b, key, keyEnv)
		return noting{Provider: p, note: func(r provider.Request) {
			if r.Stage == provider.StageBroadcast {
				mu.Lock()
				sideCalls = append(sideCalls, r)
				mu.Unlock()
			}
		}}, err
	}})
	onTemporal := remoteOn(c, target)
	cfg := loadTeam(t, `
agents:
  - id: asker
    backend:
      type: scripted
      answers: ["Paris, as both agreed."]
      tool_calls: [{name: ask_others, args: {question: "Paris or Lyon?"}}]
  - id: b
    backend: {type: scripted, latency: 300ms, answers: ["Paris."], broadcast_reply: "Paris, the capital."}
  - id: c
    backend: {type: scripted, latency: 300ms, answers: ["Paris!"], broadcast_reply: "Not Lyon."}
orchestrator:
  end_when_decided: false
  coordination: {broadcast: agents, response_depth: high, broadcast_timeout: 30}
`)
	local := runLogged(t, cfg, t.TempDir(), nil)
	remote := runLogged(t, cfg, t.TempDir(), onTemporal)
	if remote.ExitCode != 0 || remote.Winner != local.Winner {
		t.Fatalf("Temporal: %+v; local winner %s", remote.Result, local.Winner)
	}
	answered := func(evs []event.Event) []string {
		var out []string
		for _, e := range evs {
			if a, ok := e.Payload.(event.BroadcastAnswered); ok {
				out = append(out, a.Responder+": "+a.Content)
			}
		}
		slices.Sort(out)
		return out
	}
	rlog := readLog(t, remote.Dir)
	if got, want := answered(rlog), answered(readLog(t, local.Dir)); len(got) != 2 || !cmp.Equal(got, want) {
		t.Errorf("answers on Temporal %v, locally %v", got, want)
	}
	calls, usages := map[string]int{}, map[string]int{}
	var logged provider.Usage
	told := false
	for _, e := range rlog {
		switch p := e.Payload.(type) {
		case event.ModelCalled:
			calls[p.Agent]++
			for _, m := range p.Messages {
				told = told || p.Agent == "b" && p.Stage != provider.StageBroadcast && strings.Contains(m.Content, "Paris, the capital.")
			}
		case event.UsageReported:
			usages[p.Agent]++
			logged = logged.Add(p.Usage)
		}
	}
	for _, id := range []string{"b", "c"} {
		if usages[id] != calls[id]+1 {
			t.Errorf("%s: %d usage reports for %d model calls, want one more (its side call)", id, usages[id], calls[id])
		}
	}
	if logged.InputTokens != remote.Usage.InputTokens || logged.OutputTokens != remote.Usage.OutputTokens {
		t.Errorf("the session counted %+v, its calls reported %+v", remote.Usage, logged)
	}
	if !told {
		t.Error("b was never told what its side call answered")
	}
	// Each side call read its agent's conversation, as the workflow held it.
	mu.Lock()
	defer mu.Unlock()
	if len(sideCalls) != 2 {
		t.Fatalf("%d side calls made on the worker, want 2", len(sideCalls))
	}
	for _, r := range sideCalls {
		if len(r.Messages) < 2 || !strings.Contains(r.Messages[0].Content, "What is the capital of France?") {
			t.Errorf("a side call was made without its agent's conversation: %v", r.Messages)
		}
	}
}

// noting is a provider that tells note every request before it streams.
type noting struct {
	provider.Provider
	note func(provider.Request)
}

func (n noting) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Chunk, error] {
	n.note(req)
	return n.Provider.Stream(ctx, req)
}
