package eval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/goccy/go-yaml"

	"massgen/internal/config"
	"massgen/internal/private"
	"massgen/internal/provider/simulated"
)

// maxConfigBytes bounds the config file rewritten with the winner's instructions.
const maxConfigBytes = 1 << 20

// WriteBest writes the winner as a config file at path: the team's own config file (from) with
// each agent's system_message set to the winner's (and its append_system_prompt, which the
// winner replaces, removed), or, for a simulated team (pop set), the population's team with
// placeholder scripted backends to replace. Every candidate's evidence heads it as comments;
// the same is in the report and in the JSON sidecar (WriteOptimizeJSON).
func WriteBest(path string, rep OptimizeReport, cfg *config.Config, from string, pop *simulated.Population, dataset string) error {
	win, err := rep.bestOf()
	if err != nil {
		return err
	}
	instr := win.Instructions(cfg)
	var doc []byte
	if pop != nil {
		doc, err = simulatedDoc(cfg, pop, instr)
	} else {
		doc, err = rewrittenDoc(from, cfg, instr)
	}
	if err != nil {
		return err
	}
	var b bytes.Buffer
	writeEvidence(&b, rep, dataset, "# ")
	if pop != nil {
		b.WriteString("# The team was simulated (" + pop.Path + "): replace each scripted backend with the model it stands for.\n")
	}
	b.Write(doc)
	return private.WriteFile(path, b.Bytes())
}

// rewrittenDoc is the config file at from with the agents' system messages replaced.
func rewrittenDoc(from string, cfg *config.Config, instr []string) ([]byte, error) {
	f, err := os.Open(from)
	if err != nil {
		return nil, fmt.Errorf("read the team's config to write the winner into: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read the team's config: %w", err)
	}
	if len(data) > maxConfigBytes {
		return nil, fmt.Errorf("%s is over %d bytes", from, maxConfigBytes)
	}
	var top yaml.MapSlice
	if err := yaml.UnmarshalWithOptions(data, &top, yaml.UseOrderedMap()); err != nil {
		return nil, fmt.Errorf("read %s: %w", from, err)
	}
	set := func(agent yaml.MapSlice, k int) yaml.MapSlice {
		agent = without(agent, "append_system_prompt")
		for j := range agent {
			if agent[j].Key == "backend" {
				if be, ok := agent[j].Value.(yaml.MapSlice); ok {
					agent[j].Value = without(be, "append_system_prompt")
				}
			}
		}
		if instr[k] == "" {
			return without(agent, "system_message")
		}
		for j := range agent {
			if agent[j].Key == "system_message" {
				agent[j].Value = instr[k]
				return agent
			}
		}
		return append(agent, yaml.MapItem{Key: "system_message", Value: instr[k]})
	}
	found := false
	for i := range top {
		switch top[i].Key {
		case "agents":
			list, _ := top[i].Value.([]any)
			if len(list) != len(cfg.Agents) {
				return nil, fmt.Errorf("%s lists %d agents where the team has %d", from, len(list), len(cfg.Agents))
			}
			for k := range list {
				a, ok := list[k].(yaml.MapSlice)
				if !ok {
					return nil, fmt.Errorf("%s: agents[%d] is not a mapping", from, k)
				}
				list[k] = set(a, k)
			}
			found = true
		case "agent":
			if a, ok := top[i].Value.(yaml.MapSlice); ok && len(cfg.Agents) == 1 {
				top[i].Value = set(a, 0)
				found = true
			}
		}
	}
	if !found {
		return nil, errors.New(from + " has no agents: list to write the instructions into")
	}
	return yaml.MarshalWithOptions(top, yaml.UseLiteralStyleIfMultiline(true))
}

func without(m yaml.MapSlice, key string) yaml.MapSlice {
	out := m[:0:0]
	for _, it := range m {
		if it.Key != key {
			out = append(out, it)
		}
	}
	return out
}

// simulatedDoc is the simulated team as a config file: its orchestrator settings and one
// agent per profile with its instructions and a placeholder backend.
func simulatedDoc(cfg *config.Config, pop *simulated.Population, instr []string) ([]byte, error) {
	var top yaml.MapSlice
	var agents []any
	for k, a := range cfg.Agents {
		agent := yaml.MapSlice{{Key: "id", Value: a.ID}}
		if instr[k] != "" {
			agent = append(agent, yaml.MapItem{Key: "system_message", Value: instr[k]})
		}
		agent = append(agent, yaml.MapItem{Key: "backend", Value: yaml.MapSlice{{Key: "type", Value: "scripted"},
			{Key: "answers", Value: []string{"replace this backend with the model simulated agent " + a.ID + " stands for"}}}})
		agents = append(agents, agent)
	}
	top = append(top, yaml.MapItem{Key: "agents", Value: agents})
	if pop.Orchestrator != nil {
		top = append(top, yaml.MapItem{Key: "orchestrator", Value: pop.Orchestrator})
	}
	return yaml.MarshalWithOptions(top, yaml.UseLiteralStyleIfMultiline(true))
}

// writeEvidence writes each candidate's accuracy and cost, the winner marked, each line
// starting with prefix.
func writeEvidence(w io.Writer, rep OptimizeReport, dataset, prefix string) {
	fmt.Fprintf(w, "%smassgen eval --optimize on %s: %d items (seed %d), %d candidates, $%.4f spent\n",
		prefix, dataset, len(rep.Items), rep.Seed, len(rep.Results), rep.CostUSD)
	fmt.Fprintf(w, "%s  %-24s %-16s %-10s %-8s %-10s %s\n", prefix, "candidate", "accuracy", "cost", "calls", "tokens", "from")
	for k, r := range rep.Results {
		mark := " "
		if k == rep.Best {
			mark = "*"
		}
		acc := fmt.Sprintf("%d/%d %.1f%%", r.Correct, r.Graded, 100*r.Accuracy)
		cost := fmt.Sprintf("$%.4f", r.CostUSD)
		if !r.CostKnown {
			cost += "+?"
		}
		from := r.From
		if !r.Complete {
			from += " (incomplete: " + strings.TrimSpace(r.Stopped+" ran "+fmt.Sprint(r.Graded)+" of "+fmt.Sprint(r.Items)) + ")"
		}
		fmt.Fprintf(w, "%s%s %-24s %-16s %-10s %-8d %-10d %s\n", prefix, mark, clipName(r.Name), acc, cost, r.Calls, r.Tokens.Input+r.Tokens.Output, from)
	}
	if rep.Stopped != "" {
		fmt.Fprintf(w, "%sstopped: %s\n", prefix, rep.Stopped)
	}
}

func clipName(s string) string {
	if len(s) > 24 {
		return s[:23] + "…"
	}
	return s
}

// WriteOptimizeText is the search's report for people.
func WriteOptimizeText(w io.Writer, rep OptimizeReport, dataset, bestPath string) error {
	writeEvidence(w, rep, dataset, "")
	win, err := rep.bestOf()
	if err != nil {
		_, err = fmt.Fprintf(w, "no winner: %v\n", err)
		return err
	}
	_, err = fmt.Fprintf(w, "best: %s (%d/%d right, $%.4f); its config: %s\n", win.Name, win.Correct, win.Graded, win.CostUSD, bestPath)
	return err
}

// WriteOptimizeJSON writes the report as the sidecar JSON at path.
func WriteOptimizeJSON(path string, rep OptimizeReport) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return private.WriteFile(path, append(b, '\n'))
}
