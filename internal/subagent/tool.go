package subagent

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"massgen/internal/provider"
	"massgen/internal/tool"
)

// ToolName is MassGen's name for the tool.
const ToolName = "spawn_subagents"

// Resolver turns a context path the model named into an absolute path its agent may read,
// or says why not (in words for the model).
type Resolver func(path string) (string, error)

// task is one entry of the call's tasks.
type task struct {
	Task         string   `json:"task"`
	ID           string   `json:"subagent_id"`
	Kind         string   `json:"subagent_type"`
	ContextPaths []string `json:"context_paths"`
	ContextFiles []string `json:"context_files"`
}

type args struct {
	Tasks      []task `json:"tasks"`
	Context    string `json:"context"`
	Background bool   `json:"background"`
	Refine     *bool  `json:"refine"`
}

const example = `{"tasks": [{"task": "Research X and report the three main findings", "subagent_id": "x_research", "context_paths": []}], "context": "what the work is for"}`

// Tool is agent's spawn_subagents; resolve checks its context_paths (nil: the agent has no
// workspace, so only [] is accepted). A session at MaxDepth gets a tool that refuses.
func (m *Manager) Tool(agent string, resolve Resolver) tool.Tool {
	props := map[string]any{
		"tasks": map[string]any{"type": "array", "minItems": 1, "maxItems": m.set.MaxConcurrent,
			"description": fmt.Sprintf("Independent tasks, at most %d; they all start at once, so none may need another's result.", m.set.MaxConcurrent),
			"items":       map[string]any{"type": "object", "required": []string{"task"}, "properties": m.taskProps()}},
		"context": map[string]any{"type": "string", "description": "What the work is for: the subagents know nothing of your conversation."},
		"refine":  map[string]any{"type": "boolean", "description": "false: each subagent's team answers once, without rounds of improvement and voting (faster, cheaper). Default true."},
	}
	desc := "Hand independent subtasks to subagents: each is a fresh team of agents with its own workspace that knows only what you write. " +
		"You get each one's answer, status and log folder as this call's result. Use it for parallel, self-contained work, not for steps that depend on each other."
	if m.set.Background {
		props["background"] = map[string]any{"type": "boolean", "description": "true: return at once and keep working; each result reaches you as a message when it is done. Default false."}
	}
	return tool.Tool{
		Spec:    tool.Spec(ToolName, desc, props, "tasks"),
		Timeout: m.set.HardTimeout() + hardGrace,
		Run:     func(ctx context.Context, raw string) tool.Result { return m.spawn(ctx, agent, resolve, raw) },
	}
}

func (m *Manager) taskProps() map[string]any {
	p := map[string]any{
		"task":          map[string]any{"type": "string", "description": "What to do and what to report back, fully self-contained."},
		"subagent_id":   map[string]any{"type": "string", "description": "A short name (letters, digits, - and _); it names its log folder."},
		"context_paths": map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "Paths the subagent may read (read-only): [] for none, [\"./\"] for your workspace."},
	}
	if len(m.set.Types) > 0 {
		p["subagent_type"] = map[string]any{"type": "string", "enum": m.set.Types, "description": "A specialised profile; omit for a generic subagent."}
	}
	return p
}

// spawn runs one call.
func (m *Manager) spawn(ctx context.Context, agent string, resolve Resolver, raw string) tool.Result {
	var a args
	if res, ok := tool.Decode(raw, &a, example); !ok {
		return res
	}
	reqs, bad := m.check(agent, resolve, a)
	if bad != "" {
		return tool.Errorf(bad)
	}
	if a.Background {
		return m.background(agent, reqs)
	}
	results := make([]result, len(reqs))
	var wg sync.WaitGroup
	for k, r := range reqs {
		// Close waits for these too: a call the engine gave up on still ends with the session.
		m.wg.Add(1)
		wg.Go(func() {
			defer m.wg.Done()
			results[k] = m.launch(ctx, r, false)
		})
	}
	wg.Wait()
	return report(results)
}

// check validates the call and builds its requests; bad says what to fix.
func (m *Manager) check(agent string, resolve Resolver, a args) ([]Request, string) {
	if m.set.Depth >= MaxDepth {
		return nil, fmt.Sprintf("subagents cannot spawn subagents (at most %d level of nesting): do the work yourself", MaxDepth)
	}
	switch n := len(a.Tasks); {
	case n == 0:
		return nil, "tasks is empty: give at least one task, as in " + example
	case n > m.set.MaxConcurrent:
		return nil, fmt.Sprintf("too many tasks: %d, at most %d per call (subagent_max_concurrent); merge or drop some", n, m.set.MaxConcurrent)
	}
	if a.Background && !m.set.Background {
		return nil, "background subagents are turned off (background_subagents.enabled: false): call again without background"
	}
	if len(a.Context) > maxTaskChars {
		return nil, fmt.Sprintf("context is %d characters, over the %d limit: shorten it", len(a.Context), maxTaskChars)
	}
	st := m.agent(agent)
	m.mu.Lock()
	spawned := st.spawned
	m.mu.Unlock()
	if spawned+len(a.Tasks) > MaxSpawnsPerAgent {
		return nil, fmt.Sprintf("this agent has started %d subagents; at most %d per session: finish the work yourself", spawned, MaxSpawnsPerAgent)
	}
	if left, ok := m.remaining(); ok && left <= 0 {
		return nil, "the session's max_cost_usd is spent: no subagent can start; finish with what you have"
	}
	refine := a.Refine == nil || *a.Refine
	reqs := make([]Request, 0, len(a.Tasks))
	for k, t := range a.Tasks {
		at := fmt.Sprintf("tasks[%d]", k)
		switch {
		case strings.TrimSpace(t.Task) == "":
			return nil, at + ": task is missing or empty; each task needs a \"task\" text"
		case len(t.Task) > maxTaskChars:
			return nil, fmt.Sprintf("%s: task is %d characters, over the %d limit", at, len(t.Task), maxTaskChars)
		case len(t.ContextFiles) > 0:
			return nil, at + ": context_files is not supported; name the files or folders in context_paths (read-only) instead"
		case len(t.ContextPaths) > maxContextPaths:
			return nil, fmt.Sprintf("%s: %d context_paths, at most %d", at, len(t.ContextPaths), maxContextPaths)
		case t.Kind != "" && !slices.Contains(m.set.Types, t.Kind):
			offered := "none are offered (subagent_types is empty); omit subagent_type"
			if len(m.set.Types) > 0 {
				offered = "use one of " + strings.Join(m.set.Types, ", ") + ", or omit it"
			}
			return nil, fmt.Sprintf("%s: subagent_type %s is not offered: %s", at, tool.Quote(t.Kind), offered)
		}
		var paths []string
		for _, p := range t.ContextPaths {
			if resolve == nil {
				return nil, at + ": context_paths: you have no workspace or files to share; use []"
			}
			abs, err := resolve(p)
			if err != nil {
				return nil, fmt.Sprintf("%s: context path %s: %v", at, tool.Quote(p), err)
			}
			paths = append(paths, abs)
		}
		reqs = append(reqs, Request{Agent: agent, Kind: t.Kind, Question: question(a.Context, t.Task), System: system(t.Kind),
			ContextPaths: paths, Refine: refine, Timeout: m.set.Timeout, Presentation: m.set.Timeout / presentationPart,
			LogRoot: m.set.LogRoot, ID: t.ID})
	}
	m.mu.Lock()
	st.spawned += len(reqs)
	m.mu.Unlock()
	for k := range reqs {
		reqs[k].ID = m.reserve(agent, reqs[k].ID)
	}
	return reqs, ""
}

// background starts reqs on the session's context and returns at once; each result goes to
// the agent's inbox.
func (m *Manager) background(agent string, reqs []Request) tool.Result {
	st := m.agent(agent)
	type started struct {
		ID     string `json:"subagent_id"`
		Status string `json:"status"`
		LogDir string `json:"log_dir,omitempty"`
	}
	out := struct {
		Success   bool      `json:"success"`
		Mode      string    `json:"mode"`
		Subagents []started `json:"subagents"`
		Note      string    `json:"note"`
	}{Success: true, Mode: "background",
		Note: "they run while you work; each result reaches you as a message when it is done (if you are still working then)"}
	for _, r := range reqs {
		dir := ""
		if r.LogRoot != "" {
			dir = m.set.shown(filepath.Join(r.LogRoot, r.ID, "turn_1"))
		}
		out.Subagents = append(out.Subagents, started{ID: r.ID, Status: "running", LogDir: dir})
		m.wg.Add(1)
		st.bg.Add(1)
		go func() {
			defer m.wg.Done()
			defer st.bg.Done()
			res := m.launch(m.ctx, r, true)
			b, _ := json.MarshalIndent(res, "", "  ")
			m.mu.Lock()
			st.inbox = append(st.inbox, fmt.Sprintf("[Background subagent %s finished]\n%s", res.ID, b))
			st.unbilled = st.unbilled.Add(res.spent)
			m.live += res.spent.CostUSD // billed to the agent when it reads its inbox, or at Finish
			m.mu.Unlock()
		}()
	}
	b, _ := json.Marshal(out)
	return tool.Result{Content: string(b)}
}

// report is the result of a foreground call: MassGen's shape, and what the subagents spent.
func report(results []result) tool.Result {
	out := struct {
		Success bool           `json:"success"`
		Results []result       `json:"results"`
		Summary map[string]int `json:"summary"`
	}{Success: true, Results: results, Summary: map[string]int{"total": len(results)}}
	var spent provider.Usage
	for _, r := range results {
		out.Success = out.Success && r.Success
		switch r.Status {
		case "completed", "completed_but_timeout":
			out.Summary["completed"]++
		case "timeout":
			out.Summary["timeout"]++
		default:
			out.Summary["failed"]++
		}
		spent = spent.Add(r.spent)
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	// A call whose every subagent failed is an error for the model, so that it does not take
	// an empty result for an answer.
	return tool.Result{Content: string(b), IsError: out.Summary["completed"] == 0, Spent: spent}
}
