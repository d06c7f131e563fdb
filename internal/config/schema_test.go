package config

import (
	"bufio"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The schema table itself: every row complete and consistent.
func TestSchema_Table(t *testing.T) {
	rows := 0
	for _, s := range sections() {
		rows += len(s.keys)
	}
	if rows != len(schema()) {
		t.Errorf("%d rows but %d distinct keys: a key is listed twice in a section", len(schema()), rows)
	}
	statuses := []Status{Implemented, Ignored, OffOnly, EmptyOnly, Refused}
	for _, k := range schema() {
		id := sectionTitle(k.Section) + "." + k.Name
		switch {
		case k.Doc == "" || k.Since == "":
			t.Errorf("%s: no doc or no MassGen version", id)
		case !slices.Contains(statuses, k.Status):
			t.Errorf("%s: status %q", id, k.Status)
		case k.Status == Implemented && k.set == nil && k.raw == nil && !k.Param && len(k.Accept) != 1:
			t.Errorf("%s: implemented, but nothing reads it", id)
		case k.Status != Implemented && k.set != nil:
			t.Errorf("%s: %s, but it has a setter", id, k.Status)
		case k.Type == TypeEnum && len(k.Enum) == 0:
			t.Errorf("%s: an enum without values", id)
		}
		for _, a := range k.Accept {
			if k.Type == TypeEnum && !slices.Contains(k.Enum, a) {
				t.Errorf("%s: accepts %q, which is not one of its values", id, a)
			}
		}
		for _, typ := range k.Types {
			if _, ok := BackendTypes[typ]; !ok {
				t.Errorf("%s: backend type %q does not exist", id, typ)
			}
		}
		if k.Needs != "" && needed(k) == nil {
			t.Errorf("%s: tunes %q, which is not in the schema", id, k.Needs)
		}
	}
	for path, s := range sections() {
		if s.what == "" {
			t.Errorf("section %q has no rules", path)
		}
	}
}

// needed finds the row of the feature k tunes.
func needed(k *Key) *Key {
	path := k.Needs
	if !strings.Contains(path, ".") {
		return sections()[k.Section].keys[path]
	}
	i := strings.LastIndexByte(path, '.')
	if s := sections()[path[:i]]; s != nil {
		return s.keys[path[i+1:]]
	}
	return nil
}

// The keys copied from MassGen's own sources (testdata/massgen_keys.txt) are all in the
// schema, so that a key missing from the table fails here rather than "unknown" for a user.
func TestSchema_MassGenKeys(t *testing.T) {
	for _, k := range massgenKeys(t) {
		s := sections()[k[0]]
		if s == nil || s.lookup(k[1]) == nil {
			t.Errorf("MassGen key %s.%s is not in the schema", sectionTitle(k[0]), k[1])
			continue
		}
		if k[0] != secRoot || (k[1] != "agents" && k[1] != "agent") {
			checkKeyParses(t, s.lookup(k[1]), sample(s.lookup(k[1])))
		}
	}
}

func massgenKeys(t *testing.T) [][2]string {
	t.Helper()
	f, err := os.Open("testdata/massgen_keys.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][2]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		sec, key, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("bad line %q", line)
		}
		out = append(out, [2]string{sec, key})
	}
	if len(out) < 250 {
		t.Fatalf("only %d keys read", len(out))
	}
	return out
}

// Every key of the schema, set to a value, is valid or refused by name, never unknown; the
// keys refused when on are valid when off.
func TestSchema_EveryKey(t *testing.T) {
	for _, k := range schema() {
		if k.Section == secRoot && (k.Name == "agents" || k.Name == "agent") {
			continue // the sample configs are made of them
		}
		v := sample(k)
		rep := checkKeyParses(t, k, v)
		refusing := k.Status == Refused || k.Status == EmptyOnly || k.Status == OffOnly
		wantRefused := (refusing && v != offSample(k) && k.Accept == nil) ||
			(k.Accept != nil && !slices.Contains(k.Accept, v)) ||
			(len(k.Types) > 0 && k.Section == secBackend && v != offSample(k))
		if got := !rep.OK(); got != wantRefused {
			t.Errorf("%s.%s: %s: refused = %v, want %v:\n%s", sectionTitle(k.Section), k.Name, v, got, wantRefused, rep.Text())
		}
		if off := offSample(k); off != "" {
			cfg, rep := Parse("c.yaml", []byte(sampleConfig(k, off)))
			if !rep.OK() || cfg == nil {
				t.Errorf("%s.%s: %s is refused:\n%s", sectionTitle(k.Section), k.Name, off, rep.Text())
			}
		}
	}
}

// checkKeyParses parses k set to v: every issue must be about k (a refusal naming it), and
// none may call it unknown.
func checkKeyParses(t *testing.T, k *Key, v string) Report {
	t.Helper()
	id := sectionTitle(k.Section) + "." + k.Name
	data := sampleConfig(k, v)
	_, rep := Parse("c.yaml", []byte(data))
	for _, is := range append(append([]Issue{}, rep.Errors...), rep.Warnings...) {
		if strings.Contains(is.Message, "unknown") {
			t.Errorf("%s: %s is called unknown: %s\n%s", id, v, is, data)
		}
	}
	for _, is := range rep.Errors {
		named := strings.Contains(is.Message, "`"+k.Name)
		refused := strings.Contains(is.Message, "not supported") || strings.Contains(is.Message, "not allowed")
		if !named || !refused {
			t.Errorf("%s: %s gives an error that is not a refusal by name: %s\n%s", id, v, is, data)
		}
	}
	return rep
}

// sample is a value for k: its example, else one of its type.
func sample(k *Key) string {
	if k.ex != "" {
		return k.ex
	}
	switch k.Type {
	case TypeBool:
		return "true"
	case TypeInt:
		return "1"
	case TypeNumber:
		return "0.5"
	case TypeEnum:
		return k.Enum[len(k.Enum)-1]
	case TypeSeconds:
		return "60"
	case TypeDuration:
		return "1s"
	case TypeStrings:
		return "[x]"
	case TypeStringMap:
		return "{K: v}"
	case TypeMapping:
		return "{k: 1}"
	case TypeList:
		return "[1]"
	case TypeSwitch:
		return "{enabled: true}"
	}
	return "x"
}

// offSample is the value that asks for nothing, for keys refused otherwise ("" for others).
func offSample(k *Key) string {
	switch {
	case k.Status == Refused:
		return "null"
	case k.Status == EmptyOnly && k.Type == TypeList:
		return "[]"
	case k.Status == EmptyOnly:
		return "{}"
	case k.Status != OffOnly && k.Accept == nil:
		return ""
	case k.Accept != nil:
		return k.Accept[0]
	}
	switch k.Type {
	case TypeBool, TypeAny:
		return "false"
	case TypeInt:
		return "0"
	case TypeSwitch:
		return "{enabled: false}"
	}
	return ""
}

// sampleConfig is a valid one-agent config with k set to v.
func sampleConfig(k *Key, v string) string {
	kv := k.Name + ": " + v
	const agent = "agents:\n  - id: a\n    backend: {type: scripted, answers: [hi]}\n"
	switch k.Section {
	case secRoot:
		return agent + kv + "\n"
	case secAgent:
		lines := map[string]string{"id": "id: a", "backend": "backend: {type: scripted, answers: [hi]}"}
		lines[k.Name] = kv
		return "agents:\n  - " + lines["id"] + "\n    " + lines["backend"] + "\n" + extra(k.Name, kv, "id", "backend", "    ")
	case secBackend:
		lines := map[string]string{"type": "type: openai"}
		lines[k.Name] = kv
		return "agents:\n  - id: a\n    backend:\n      " + lines["type"] + "\n" + extra(k.Name, kv, "type", "", "      ")
	case secScripted:
		lines := map[string]string{"type": "type: scripted", "answers": "answers: [hi]"}
		lines[k.Name] = kv
		return "agents:\n  - id: a\n    backend:\n      " + lines["type"] + "\n      " + lines["answers"] + "\n" +
			extra(k.Name, kv, "type", "answers", "      ")
	case secFault:
		return "agents:\n  - id: a\n    backend: {type: scripted, answers: [hi], faults: [{" + flow(k, kv, "kind", "kind: fail") + "}]}\n"
	case secToolCall:
		return "agents:\n  - id: a\n    backend: {type: scripted, answers: [hi], tool_calls: [{" + flow(k, kv, "name", "name: t") + "}]}\n"
	case secMCP:
		return "agents:\n  - id: a\n    backend: {type: openai, mcp_servers: [{" + flow(k, kv, "name", "name: s", "command", "command: x") + "}]}\n"
	case secCustomTool:
		return "agents:\n  - id: a\n    backend: {type: openai, custom_tools: [{" + flow(k, kv, "function", "function: f") + "}]}\n"
	case secContextPath:
		return agent + "orchestrator:\n  context_paths: [{" + flow(k, kv, "path", "path: .") + "}]\n"
	case secUpload:
		return "agents:\n  - id: a\n    backend: {type: gemini, upload_files: [{" + kv + "}]}\n"
	case secCriterion:
		return agent + "orchestrator:\n  coordination:\n    checklist_criteria_inline: [{" + flow(k, kv, "text", "text: t") + "}]\n"
	case secCoord:
		// Keys checked against the settings they need get those settings.
		switch k.Name {
		case "criteria_mode":
			return agent + "orchestrator:\n  voting_sensitivity: checklist_gated\n  coordination:\n    " + kv + "\n"
		case "round_evaluator_before_checklist":
			return agent + "orchestrator:\n  voting_sensitivity: checklist_gated\n  coordination:\n    enable_subagents: true\n" +
				"    subagent_types: [round_evaluator]\n    orchestrator_managed_round_evaluator: true\n    " + kv + "\n"
		}
	}
	var b strings.Builder
	b.WriteString(agent)
	indent := ""
	for _, part := range strings.Split(k.Section, ".") {
		b.WriteString(indent + part + ":\n")
		indent += "  "
	}
	b.WriteString(indent + kv + "\n")
	return b.String()
}

// flow is the entries of a flow mapping: the base entries (key, entry pairs), with k's
// replacing the one of its name or added after them.
func flow(k *Key, kv string, base ...string) string {
	var parts []string
	replaced := false
	for i := 0; i < len(base); i += 2 {
		if base[i] == k.Name {
			parts, replaced = append(parts, kv), true
		} else {
			parts = append(parts, base[i+1])
		}
	}
	if !replaced {
		parts = append(parts, kv)
	}
	return strings.Join(parts, ", ")
}

// extra is the line setting the key under test, unless it replaced one of the base lines.
func extra(name, kv, base1, base2, indent string) string {
	if name == base1 || name == base2 {
		return ""
	}
	return indent + kv + "\n"
}

func TestKeys_Exported(t *testing.T) {
	keys := Keys()
	if len(keys) != len(schema()) {
		t.Fatalf("Keys() = %d, schema %d", len(keys), len(schema()))
	}
	var got []KeyInfo
	if err := json.Unmarshal(SchemaJSON(), &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(keys, got); diff != "" {
		t.Errorf("SchemaJSON does not round-trip (-Keys +JSON):\n%s", diff)
	}
	find := func(section, name string) KeyInfo {
		for _, k := range keys {
			if k.Section == section && k.Name == name {
				return k
			}
		}
		t.Fatalf("%s.%s not exported", section, name)
		return KeyInfo{}
	}
	if k := find(secOrch, "voting_sensitivity"); k.Status != "implemented" || !slices.Equal(k.Supported, sensitivity) || len(k.Enum) <= 3 {
		t.Errorf("voting_sensitivity = %+v", k)
	}
	if k := find(secRoot, "permissions"); k.Status != "implemented" || k.Since != "0.1.97" {
		t.Errorf("permissions = %+v", k)
	}
	if k := find(secCoord, "broadcast_timeout"); k.Needs != "broadcast" || k.Status != "implemented" {
		t.Errorf("broadcast_timeout = %+v", k)
	}
}

// docs/config-keys.md is the rendering of the schema; go test -update rewrites it.
func TestKeysMarkdown(t *testing.T) {
	const path = "../../docs/config-keys.md"
	got := KeysMarkdown()
	if *update {
		if err := os.MkdirAll("../../docs", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/config -run TestKeysMarkdown -update)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("docs/config-keys.md is stale; run go test ./internal/config -run TestKeysMarkdown -update\n(-file +schema):\n%s", diff)
	}
	for _, must := range []string{"## Top level", "## `orchestrator.coordination`", "| `permissions` | mapping |  | implemented | 0.1.97 |",
		"| `final_answer_strategy` |"} {
		if !strings.Contains(got, must) {
			t.Errorf("rendering lacks %q", must)
		}
	}
}
