// Package simulated plays agents with known statistics, for measuring how a team selects its
// answer (massgen eval --simulate). Each agent has an accuracy (the probability its own
// answer is right), a bias towards long answers when it votes, herding (copying the leader),
// a confidence it states (calibrated or overconfident) and an answer length. It answers the
// questions of an item set with a known gold answer, so grading is exact, and every draw is a
// hash of the seed, the item and the agent: a run is reproducible whatever the timing.
//
// A Provider serves one agent on one item through the ordinary provider interface, so the
// real coordination (answers, votes, rounds, presentation) runs unchanged. Its token counts
// are simulated: a quarter of the characters it reads and writes, as the scripted backend
// counts them. It is a test backend: massgen refuses `type: simulated` in a config, and only
// massgen eval builds these agents, from a population file.
package simulated

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"massgen/internal/config"
	"massgen/internal/lazy"
)

// Type is the backend type of simulated agents in the configs massgen eval builds.
const Type = "simulated"

// Caps on a population file.
const (
	maxFileBytes = 256 << 10
	maxAgents    = 32
)

// Confidence styles: what an agent says about its own answer.
const (
	// Calibrated: the stated confidence is the probability that the answer is right
	// (the agent is sure on some items and unsure on others, and says which).
	Calibrated = "calibrated"
	// Overconfident: the agent always says OverconfidentValue, whatever it knows.
	Overconfident = "overconfident"
	// NoConfidence: the agent states none.
	NoConfidence = "none"
)

// OverconfidentValue is what an overconfident agent always states.
const OverconfidentValue = 0.95

// Answer lengths.
const (
	Short = "short"
	Long  = "long"
)

// Profile is one simulated agent.
type Profile struct {
	ID string `yaml:"id"`
	// Accuracy is the probability that the agent's own answer to an item is right.
	Accuracy *float64 `yaml:"accuracy"`
	// LongBias is the probability that a vote goes to the longest answer shown.
	LongBias float64 `yaml:"long_bias"`
	// Herding is the probability that the agent copies the leader: its answer is the leading
	// answer of the agents before it in the list, and its vote goes to the leading answer shown.
	Herding float64 `yaml:"herding"`
	// Confidence is Calibrated (default), Overconfident or NoConfidence.
	Confidence string `yaml:"confidence"`
	// Length is the length of its answers, Short (default) or Long; WrongLength that of its
	// wrong answers (default: Length), so that wrong answers can be the long ones.
	Length      string `yaml:"length"`
	WrongLength string `yaml:"wrong_length"`
}

// Population is a team of simulated agents, read from a population file.
type Population struct {
	// Path is the file it was read from.
	Path string `yaml:"-"`
	// Seed makes every draw; massgen eval --seed overrides the file's (default 1).
	Seed int64 `yaml:"seed"`
	// Distractor is the share of wrong answers that pick the item's main distractor (default
	// 1: wrong agents agree, the hardest case for a vote); the others are spread over the
	// remaining wrong options.
	Distractor *float64  `yaml:"distractor"`
	Agents     []Profile `yaml:"agents"`
	// Orchestrator is the file's orchestrator: mapping, checked by the config loader.
	Orchestrator any `yaml:"orchestrator"`
	// InstructionEffects say how an agent's instructions change its accuracy, for massgen
	// eval --optimize to search (see WithInstructions).
	InstructionEffects []InstructionEffect `yaml:"instruction_effects"`

	orchLines [2]int // the orchestrator block's first line and the line after it (1-based)
	startN    int    // how many agents start at once (lazy start), 0 for all
	data      []byte
}

// Load reads and checks a population file.
func Load(path string) (*Population, error) {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("no population file at %s (examples/eval/sim_*.yaml are examples)", path)
		}
		return nil, fmt.Errorf("read the population file: %w", err)
	}
	if st.Size() > maxFileBytes {
		return nil, fmt.Errorf("%s is %d bytes, over the %d-byte limit of a population file", path, st.Size(), maxFileBytes)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the population file: %w", err)
	}
	return Parse(path, data)
}

// Parse reads a population from data; path names it in errors.
func Parse(path string, data []byte) (*Population, error) {
	if len(data) > maxFileBytes {
		return nil, fmt.Errorf("%s is %d bytes, over the %d-byte limit of a population file", path, len(data), maxFileBytes)
	}
	p := &Population{Path: path, Seed: 1, data: data}
	if err := yaml.UnmarshalWithOptions(data, p, yaml.DisallowUnknownField()); err != nil {
		return nil, fmt.Errorf("%s (a population file has seed, distractor, agents, orchestrator and instruction_effects; an agent has id, accuracy, long_bias, herding, confidence, length and wrong_length; an effect has contains and accuracy)",
			yamlError(path, err))
	}
	if err := p.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := p.findOrchestrator(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if _, err := p.Config(); err != nil {
		return nil, err
	}
	return p, nil
}

var (
	yamlPosRe  = lazy.Regexp(`^\[(\d+):(\d+)\] `)
	yamlTypeRe = lazy.Regexp(`cannot unmarshal (\w+) into Go struct field \S+ of type (?:float64|int64)`)
)

// yamlError words a YAML error as the config loader does: "FILE:LINE:COL: message".
func yamlError(path string, err error) error {
	msg := strings.TrimSpace(yaml.FormatError(err, false, false))
	msg = yamlTypeRe().ReplaceAllString(msg, "a number is needed here, not a $1")
	if path != "" {
		msg = yamlPosRe().ReplaceAllString(msg, path+":$1:$2: ")
	}
	return errors.New(msg)
}

var idRe = lazy.Regexp(`^[A-Za-z0-9_-]{1,64}$`)

// check validates the values and fills in the defaults.
func (p *Population) check() error {
	if p.Distractor == nil {
		one := 1.0
		p.Distractor = &one
	}
	if err := share("distractor", *p.Distractor); err != nil {
		return err
	}
	switch n := len(p.Agents); {
	case n == 0:
		return errors.New("no agents: add agents: with at least one {id: a, accuracy: 0.7}")
	case n > maxAgents:
		return fmt.Errorf("%d agents, over the limit of %d", n, maxAgents)
	}
	if err := checkEffects(p.InstructionEffects); err != nil {
		return err
	}
	seen := map[string]bool{}
	for k := range p.Agents {
		a := &p.Agents[k]
		where := fmt.Sprintf("agents[%d]", k)
		switch {
		case !idRe().MatchString(a.ID):
			return fmt.Errorf("%s.id %q: use 1 to 64 letters, digits, '-' and '_'", where, a.ID)
		case seen[a.ID]:
			return fmt.Errorf("%s.id %q is used twice: ids must be unique", where, a.ID)
		case a.Accuracy == nil:
			return fmt.Errorf("%s (%s) has no accuracy: add accuracy: 0.7 (the probability its own answer is right)", where, a.ID)
		}
		seen[a.ID] = true
		for _, f := range []struct {
			name string
			v    float64
		}{{"accuracy", *a.Accuracy}, {"long_bias", a.LongBias}, {"herding", a.Herding}} {
			if err := share(where+"."+f.name, f.v); err != nil {
				return err
			}
		}
		a.Confidence = strings.TrimSpace(a.Confidence)
		if a.Confidence == "" {
			a.Confidence = Calibrated
		}
		if a.Length == "" {
			a.Length = Short
		}
		if a.WrongLength == "" {
			a.WrongLength = a.Length
		}
		if err := oneOf(where+".confidence", a.Confidence, Calibrated, Overconfident, NoConfidence); err != nil {
			return err
		}
		if err := oneOf(where+".length", a.Length, Short, Long); err != nil {
			return err
		}
		if err := oneOf(where+".wrong_length", a.WrongLength, Short, Long); err != nil {
			return err
		}
	}
	return nil
}

func share(name string, v float64) error {
	if !(v >= 0 && v <= 1) { // NaN fails too
		return fmt.Errorf("%s is %v: give a probability from 0 to 1", name, v)
	}
	return nil
}

func oneOf(name, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return fmt.Errorf("%s is %q: use %s", name, v, strings.Join(allowed, ", "))
}

// findOrchestrator records the lines of the top-level orchestrator block, so that the config
// loader reads it where it is written and its errors name the file's own lines.
func (p *Population) findOrchestrator() error {
	f, err := parser.ParseBytes(p.data, 0)
	if err != nil {
		return yamlError("", err)
	}
	if len(f.Docs) != 1 {
		return errors.New("write one YAML document")
	}
	m, ok := f.Docs[0].Body.(*ast.MappingNode)
	if !ok {
		return errors.New("the file must be a mapping with agents: (and seed, distractor, orchestrator)")
	}
	for k, v := range m.Values {
		if v.Key.String() != "orchestrator" {
			continue
		}
		p.orchLines[0] = v.Key.GetToken().Position.Line
		p.orchLines[1] = 1 << 30
		if k+1 < len(m.Values) {
			p.orchLines[1] = m.Values[k+1].Key.GetToken().Position.Line
		}
	}
	return nil
}

// Config is the team massgen eval runs: one agent per profile, of backend type Type and model
// "sim-<id>", with the file's orchestrator settings. The simulated agents do not score
// checklists, so checklist-gated voting is refused.
func (p *Population) Config() (*config.Config, error) {
	var doc bytes.Buffer
	if p.orchLines[0] > 0 {
		// Every line but the orchestrator block's is blanked out, so the loader's line and
		// column numbers are the file's.
		for n, line := range strings.SplitAfter(string(p.data), "\n") {
			if n+1 >= p.orchLines[0] && n+1 < p.orchLines[1] {
				doc.WriteString(line)
			} else if strings.HasSuffix(line, "\n") {
				doc.WriteString("\n")
			}
		}
		doc.WriteString("\n")
	}
	doc.WriteString("agents:\n")
	for _, a := range p.Agents {
		// The model is named already, so that learned vote weights (keyed by model) apply.
		fmt.Fprintf(&doc, "  - id: %s\n    backend: {type: scripted, model: %s, answers: [\"-\"]}\n", strconv.Quote(a.ID), strconv.Quote("sim-"+a.ID))
	}
	cfg, rep := config.Parse(p.Path, doc.Bytes())
	if !rep.OK() {
		return nil, fmt.Errorf("the orchestrator settings of %s:\n%s", p.Path, strings.TrimSpace(rep.Text()))
	}
	if strings.HasPrefix(cfg.Orchestrator.VotingSensitivity, "checklist") {
		return nil, fmt.Errorf("%s: voting_sensitivity %s: simulated agents do not score checklists; use lenient, balanced or strict", p.Path, cfg.Orchestrator.VotingSensitivity)
	}
	if n := cfg.Orchestrator.AnswerNovelty; n != "" && n != "lenient" {
		return nil, fmt.Errorf("%s: answer_novelty_requirement %s: simulated answers share their wording, so a novelty check would refuse them; leave it lenient", p.Path, n)
	}
	if cfg.Orchestrator.DSPy.Enabled {
		return nil, fmt.Errorf("%s: dspy paraphrasing needs a model that writes; simulated agents answer from their statistics: leave it off", p.Path)
	}
	if cfg.Orchestrator.PlanningMode {
		return nil, fmt.Errorf("%s: planning mode needs agents that judge tools; simulated agents have none: leave it off", p.Path)
	}
	if m, _ := p.Orchestrator.(map[string]any); m == nil || m["end_when_decided"] == nil {
		// Which votes an early end counts depends on which agent's call the scheduler finishes
		// first, and a seeded run must repeat: the simulation counts every vote unless the
		// file asks for the early end (and then its figures vary a little from run to run).
		cfg.Orchestrator.EndWhenDecided = false
	}
	if k := cfg.Orchestrator.LazyStartAgents; k > 0 && k < len(p.Agents) {
		p.startN = k // the held agents make no first call to wait for
	}
	for k := range cfg.Agents {
		cfg.Agents[k].Backend = config.Backend{Type: Type, Model: "sim-" + p.Agents[k].ID}
	}
	cfg.Path = p.Path
	return cfg, nil
}

// ID identifies the population and its seed, for the results file: a resumed run warns
// when finished items ran with another.
func (p *Population) ID() string {
	h := sha256.New()
	fmt.Fprintf(h, "%d\x00", p.Seed)
	h.Write(p.data)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Index returns the position of the agent a config built by Config names by model ("sim-<id>"),
// or -1.
func (p *Population) Index(model string) int {
	id, ok := strings.CutPrefix(model, "sim-")
	if !ok {
		return -1
	}
	for k, a := range p.Agents {
		if a.ID == id {
			return k
		}
	}
	return -1
}
