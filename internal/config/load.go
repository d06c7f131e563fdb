package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// v1Keys mark a MassGen v1 config, which this version cannot read.
var v1Keys = []string{"models", "model_configs", "num_agents", "max_rounds", "consensus_threshold",
	"voting_enabled", "enable_voting"}

// MaxFileSize bounds a config file. MassGen configs are a few kilobytes; a file over this is
// refused before it is read, so a huge or endless file (a FIFO, /dev/zero) costs nothing.
const MaxFileSize = 1 << 20

// Load reads and validates the config file at path (.yaml, .yml or .json). The Config is nil
// when the Report has errors.
func Load(path string) (*Config, Report) {
	data, err := readFile(path)
	if err != nil {
		msg := fmt.Sprintf("cannot read config file %s: %v", path, err)
		sugg := ""
		var big *tooBigError
		switch {
		case errors.Is(err, fs.ErrNotExist):
			msg = "config file not found: " + path
			sugg = "check the path, or pass a file that exists"
		case errors.As(err, &big):
			msg = big.Error()
			sugg = "a config holds agents and settings, a few kilobytes; pass the right file"
		}
		return nil, Report{Errors: []Issue{{Severity: SeverityError, File: path, Message: msg, Suggestion: sugg}}}
	}
	return Parse(path, data)
}

// tooBigError is a config file over MaxFileSize; size is -1 when unknown (not a regular file).
type tooBigError struct{ size int64 }

func (e *tooBigError) Error() string {
	if e.size < 0 {
		return fmt.Sprintf("config file is over the %s limit", sizeText(MaxFileSize))
	}
	return fmt.Sprintf("config file is %s, over the %s limit", sizeText(e.size), sizeText(MaxFileSize))
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// readFile reads at most MaxFileSize bytes of path: a regular file's size is checked first,
// anything else (/dev/stdin, a FIFO) is read through a limit.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if info.IsDir() {
		return nil, errors.New("it is a directory, not a file")
	}
	if info.Mode().IsRegular() && info.Size() > MaxFileSize {
		return nil, &tooBigError{info.Size()}
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, &tooBigError{-1}
	}
	return data, nil
}

// Parse validates config data read from path; path names the file in issues and its suffix
// must be .yaml, .yml or .json ("" skips the suffix check). JSON is read by the YAML parser.
// Every issue carries the line and column of the offending key or value. The Config has all
// defaults applied and is nil when the Report has errors. Parse never panics.
func Parse(path string, data []byte) (*Config, Report) {
	return parseWith(&walker{file: path}, data)
}

// ParseReceived is Parse for a config another machine resolved and sent (a session on a
// Temporal worker): its local upload_files paths must be absolute, and are checked where they
// are read instead (the receiver decides which of its files a session may send).
func ParseReceived(path string, data []byte) (*Config, Report) {
	return parseWith(&walker{file: path, received: true}, data)
}

func parseWith(w *walker, data []byte) (*Config, Report) {
	w.aliases, w.budget, w.refused = map[*ast.AliasNode]ast.Node{}, maxExpansion, map[string]bool{}
	path := w.file
	cfg := w.parse(path, data)
	w.rep.Errors = sortIssues(dedupe(w.rep.Errors))
	w.rep.Warnings = sortIssues(dedupe(w.rep.Warnings))
	if !w.rep.OK() {
		return nil, w.rep
	}
	cfg.Warnings = w.rep.Warnings
	return cfg, w.rep
}

func (w *walker) parse(path string, data []byte) *Config {
	if path != "" {
		switch strings.ToLower(filepath.Ext(path)) {
		case ".yaml", ".yml", ".json":
		default:
			w.errAt("", fmt.Sprintf("unsupported config file type `%s`", clip(filepath.Ext(path))),
				"use a .yaml, .yml or .json file", nil)
			return nil
		}
	}
	if len(data) > MaxFileSize {
		w.errAt("", (&tooBigError{int64(len(data))}).Error(), "a config holds agents and settings, a few kilobytes", nil)
		return nil
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a UTF-8 byte order mark
	// The YAML parser would quietly turn bytes that are not UTF-8 into U+FFFD, in ids and
	// system messages alike: say where the first one is instead.
	if !utf8.Valid(data) {
		line, col, b := firstInvalid(data)
		w.rep.Errors = append(w.rep.Errors, Issue{Severity: SeverityError, File: path, Line: line, Column: col,
			Message:    fmt.Sprintf("the file is not valid UTF-8 (byte 0x%02x)", b),
			Suggestion: "save it as UTF-8"})
		return nil
	}
	if len(bytes.TrimSpace(data)) == 0 {
		w.errAt("", "config file is empty", "add an agents: list", nil)
		return nil
	}
	if ok, line, col := flowDepthOK(data); !ok {
		w.rep.Errors = append(w.rep.Errors, Issue{Severity: SeverityError, File: path, Line: line, Column: col,
			Message:    fmt.Sprintf("brackets are nested more than %d levels deep", maxFlowDepth),
			Suggestion: "flatten the structure"})
		return nil
	}
	file, err := parseYAML(data)
	if err != nil {
		syntax := "invalid YAML: "
		if strings.EqualFold(filepath.Ext(path), ".json") {
			// The YAML parser reads JSON (and YAML in a .json file, which MassGen's loader
			// refuses but this one has always read), but its messages speak of YAML: say
			// where the JSON itself is broken.
			syntax = "invalid JSON: "
			if line, col, msg := jsonSyntax(data); msg != "" {
				w.rep.Errors = append(w.rep.Errors, Issue{Severity: SeverityError, File: path, Line: line, Column: col,
					Message: syntax + msg, Suggestion: "fix the syntax at this position"})
				return nil
			}
		}
		var yerr yaml.Error
		if errors.As(err, &yerr) {
			w.errAt("", syntax+yerr.GetMessage(), "fix the syntax at this position", tokenPos(yerr.GetToken()))
		} else {
			w.errAt("", syntax+err.Error(), "fix the syntax", nil)
		}
		return nil
	}
	var docs []*ast.DocumentNode
	for _, d := range file.Docs {
		if !isNil(d) && !isNil(d.Body) {
			docs = append(docs, d)
		}
	}
	if len(docs) == 0 {
		w.errAt("", "config file is empty", "add an agents: list", nil)
		return nil
	}
	if len(docs) > 1 {
		w.errAt("", "config file holds more than one YAML document", "keep one document; remove the extra ---",
			tokenPos(docs[1].Start), docs[1])
		return nil
	}
	w.collectAliases(docs[0], map[string]ast.Node{}, 0)
	cfg := defaults()
	cfg.Path = path
	w.root(docs[0].Body, cfg)
	return cfg
}

// jsonSyntax reports where data is not valid JSON: the line, the column (in characters) and
// what is wrong; msg is "" for valid JSON.
func jsonSyntax(data []byte) (line, col int, msg string) {
	var v any
	err := json.Unmarshal(data, &v)
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return 0, 0, ""
	}
	off := min(max(se.Offset-1, 0), int64(len(data)))
	before := data[:off]
	line = 1 + bytes.Count(before, []byte("\n"))
	col = 1 + utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:])
	return line, col, se.Error()
}

// firstInvalid finds the first byte of data that is not UTF-8: its line, its column (in
// characters) and its value.
func firstInvalid(data []byte) (line, col int, b byte) {
	line, col = 1, 1
	for len(data) > 0 {
		r, size := utf8.DecodeRune(data)
		if r == utf8.RuneError && size == 1 {
			return line, col, data[0]
		}
		if r == '\n' {
			line, col = line+1, 0
		}
		col++
		data = data[size:]
	}
	return 0, 0, 0
}

// parseYAML runs go-yaml's parser, turning a panic inside it into an error.
func parseYAML(data []byte) (f *ast.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("the YAML parser failed on this file: %v", r)
		}
	}()
	return parser.ParseBytes(data, 0)
}

// dedupe drops repeated issues (the same anchored value merged in twice reports once).
func dedupe(in []Issue) []Issue {
	seen := map[Issue]bool{}
	out := in[:0]
	for _, is := range in {
		if !seen[is] {
			seen[is] = true
			out = append(out, is)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// sortIssues puts issues in file order (issues without a position first).
func sortIssues(in []Issue) []Issue {
	sort.SliceStable(in, func(i, j int) bool {
		if in[i].Line != in[j].Line {
			return in[i].Line < in[j].Line
		}
		return in[i].Column < in[j].Column
	})
	return in
}

func defaults() *Config {
	return &Config{
		Orchestrator: Orchestrator{
			VotingSensitivity:   "lenient",
			AnswerNovelty:       "lenient",
			FinalAnswerStrategy: StrategyWinnerPresent,
			FailureBudget:       3,
			EndWhenDecided:      true,
			LazyStartAgreement:  2,
			Fairness:            Fairness{Enabled: true, LeadCapAnswers: 2, MaxMidstreamInjectionsPerRound: 2},
			PersonaGenerator:    PersonaGenerator{DiversityMode: "perspective"},
			DSPy:                DefaultDSPy(),
			Checklist:           Checklist{RequireGapReport: true, GapReportMode: "changedoc", MaxCallsPerRound: 1},
			Broadcast:           Broadcast{Sensitivity: "medium", ResponseDepth: "medium", Timeout: 300 * time.Second, WaitByDefault: true, MaxPerAgent: 10},
			Changedoc:           true,
		},
		UI: UI{DisplayType: "rich_terminal", LoggingEnabled: true},
		Timeouts: Timeouts{
			Orchestrator: 1800 * time.Second,
			Agent:        300 * time.Second,
			Presentation: 600 * time.Second,
			RoundGrace:   120 * time.Second,
		},
	}
}

func (w *walker) root(body ast.Node, cfg *Config) {
	rootN := w.resolve(body)
	m, ok := rootN.(*ast.MappingNode)
	if !ok {
		w.errAt("", "the config must be a mapping of keys (agents:, orchestrator:, ...), not "+kind(rootN),
			"start the file with agents:", body)
		return
	}
	fields := w.entries(m, "", 0)
	var v1 []string
	var first field
	for _, f := range fields {
		if slices.Contains(v1Keys, f.key) {
			if v1 == nil {
				first = f
			}
			v1 = append(v1, f.key)
		}
	}
	if len(v1) > 0 {
		w.errKey(child("", first), "rewrite it with an agents: list, each agent with an id and a backend",
			"this is a MassGen v1 config (%s); the v1 format is not supported", strings.Join(v1, ", "))
		return
	}
	t := &target{cfg: cfg, final: &finalSetting{}}
	w.walkFields(secRoot, field{raw: body, val: rootN}, fields, t)
	var agentDefs []agentDef
	switch agentF, agentsF := t.agentF, t.agentsF; {
	case agentF != nil && agentsF != nil:
		w.errKey(*agentsF, "keep one of them: agent: for a single agent or agents: for a list",
			"both `agent` and `agents` are set")
	case agentF == nil && agentsF == nil:
		w.errAt("", "missing `agents`", "add an agents: list, each agent with an id and a backend", body)
	case agentF != nil:
		if agentF.val == nil {
			w.errKey(*agentF, "give the agent an id and a backend", "agent must be a mapping, not empty")
		} else if _, ok := agentF.val.(*ast.MappingNode); !ok {
			w.errf(*agentF, "use agents: for a list of agents", "agent must be a mapping, not %s", kind(agentF.val))
		} else {
			single := *t
			single.single = true
			agentDefs = append(agentDefs, w.agent(*agentF, &single))
		}
	default:
		agentDefs = w.agentList(*agentsF, t)
	}
	w.checkAgents(agentDefs)
	w.checkPresenter(t, agentDefs)
	w.checkVerifiers(t, agentDefs)
	w.checkLazy(t, len(agentDefs))
	w.checkWeights(t, agentDefs)
	w.checkDecomposition(t, agentDefs)
	w.checkBootstrap(t, len(agentDefs))
	w.checkCodePlanning(t, agentDefs)
	w.checkTuning()
	for _, d := range agentDefs {
		cfg.Agents = append(cfg.Agents, d.agent)
	}
}

// checkCodePlanning refuses code-based tools under planning mode, which holds back MCP tools
// the model calls: calls from code could not be held back.
func (w *walker) checkCodePlanning(t *target, defs []agentDef) {
	if !t.cfg.Orchestrator.PlanningMode {
		return
	}
	for _, d := range defs {
		if d.agent.Backend.Tools.CodeTools {
			w.errAt(d.loc, fmt.Sprintf("agent %s: `enable_code_based_tools` cannot be used with `enable_planning_mode`: planning mode holds back MCP tools until the final presentation, which calls from code would get past", d.agent.ID),
				"remove one of them", d.idN)
		}
	}
}

// agentDef is a parsed agent with the positions later checks need.
type agentDef struct {
	agent Agent
	loc   string
	idN   ast.Node // nil when the id is missing or invalid
	voteF *field   // the scripted vote key, when it names a label
	// subtaskF is the agent's subtask key, checked against the coordination mode.
	subtaskF *field
	// appendAgent and appendBackend are the agent's and the backend's append_system_prompt,
	// joined to SystemMessage once the agent is read, in that order.
	appendAgent, appendBackend string
}

func (w *walker) agentList(f field, t *target) []agentDef {
	const sugg = "list agents as `- id: ...` entries, each with a backend"
	seq, ok := f.val.(*ast.SequenceNode)
	switch {
	case f.val == nil:
		w.errf(f, sugg, "agents must be a non-empty list of agents, not empty")
		return nil
	case !ok:
		w.errf(f, sugg, "agents must be a non-empty list of agents, not %s", kind(f.val))
		return nil
	case len(seq.Values) == 0:
		w.errf(f, sugg, "agents must not be empty")
		return nil
	}
	items, _ := w.list(f)
	var out []agentDef
	for _, it := range items {
		if _, ok := it.val.(*ast.MappingNode); !ok {
			w.errf(it, "give each agent an id and a backend", "%s must be a mapping, not %s", it.key, kind(it.val))
			continue
		}
		out = append(out, w.agent(it, t))
	}
	return out
}

func (w *walker) agent(f field, t *target) agentDef {
	d := agentDef{loc: f.loc}
	sub := *t
	sub.agent = &d
	w.walk(secAgent, f, &sub)
	return d
}

// agentAfter checks an agent's required keys. A single `agent:` without an id is agent1, as
// MassGen's loader has it.
func agentAfter(w *walker, t *target, f field, present map[string]field) {
	d := t.agent
	d.agent.SystemMessage = joinInstructions(d.agent.SystemMessage, d.appendAgent, d.appendBackend)
	if _, ok := present["id"]; !ok {
		if t.single {
			d.agent.ID, d.idN = "agent1", f.keyN
		} else {
			w.errAt(f.loc, "missing required key `id`", "add id: with a unique name for this agent", f.raw)
		}
	}
	if _, ok := present["backend"]; !ok {
		w.errAt(f.loc, "missing required key `backend`", "add backend: with type: scripted, openai, claude, ...", f.raw)
	}
}

// joinInstructions joins the non-empty parts of an agent's instructions with a blank line.
func joinInstructions(parts ...string) string {
	var keep []string
	for _, p := range parts {
		if strings.TrimSpace(p) != "" {
			keep = append(keep, strings.TrimRight(p, "\n"))
		}
	}
	return strings.Join(keep, "\n\n")
}

func (w *walker) agentID(f field) (string, ast.Node) {
	if f.val == nil {
		w.errf(f, "give the agent a unique name", "id must be a string, not empty")
		return "", nil
	}
	id, ok := w.str(f)
	if !ok {
		return "", nil
	}
	switch {
	case strings.TrimSpace(id) == "":
		w.errf(f, "give the agent a unique name", "id must not be empty")
		return "", nil
	case !utf8.ValidString(id):
		w.errf(f, "save the file as UTF-8, or use letters, digits, '-' and '_'", "id is not valid UTF-8")
		return "", nil
	case len(id) > maxIDBytes:
		w.errf(f, "use a short name", "id is %d bytes long, over the %d-byte limit", len(id), maxIDBytes)
		return "", nil
	case id == "." || id == "..":
		w.errf(f, "use letters, digits, '-' and '_'", "id `%s` cannot be used as a directory name", id)
		return "", nil
	case strings.ContainsAny(id, `/\`):
		w.errf(f, "use letters, digits, '-' and '_'", "id `%s` cannot be used as a directory name: it holds a path separator", clip(id))
		return "", nil
	case strings.ContainsFunc(id, unsafeRune):
		// Ids name folders and are printed in terminals: an escape or a bidi override in one
		// would disguise what is shown.
		w.errf(f, "use letters, digits, '-' and '_'", "id `%s` holds a control or invisible formatting character", echo(id, 60))
		return "", nil
	}
	return id, f.raw
}

// maxIDBytes bounds an agent id: it names folders (with prefixes and suffixes added) whose
// names most file systems cap at 255 bytes.
const maxIDBytes = 128

// checkAgents reports duplicate ids and scripted votes for labels that do not exist.
func (w *walker) checkAgents(defs []agentDef) {
	first := map[string]agentDef{}
	for _, d := range defs {
		if d.idN == nil {
			continue
		}
		if p, dup := first[d.agent.ID]; dup {
			l, c := position(p.idN)
			w.errAt(d.loc+".id", fmt.Sprintf("duplicate agent id `%s`: %s at line %d:%d has it too",
				clip(d.agent.ID), p.loc, l, c), "give every agent a unique id", d.idN)
			continue
		}
		first[d.agent.ID] = d
	}
	for _, d := range defs {
		if d.voteF == nil || d.agent.Backend.Script == nil {
			continue
		}
		var n int
		if _, err := fmt.Sscanf(d.agent.Backend.Script.Vote, "agent%d", &n); err == nil && n > len(defs) {
			w.warnAt(d.voteF.loc, fmt.Sprintf("vote label `%s` does not exist with %d agents",
				d.agent.Backend.Script.Vote, len(defs)), "the agent will vote for the longest answer instead", d.voteF.raw)
		}
	}
}
