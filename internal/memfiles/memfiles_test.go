package memfiles

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"massgen/internal/tool"
)

// team is three agents with workspaces of their own and a clock that moves a second a call.
type team struct {
	owners []Owner
	clock  time.Time
}

func newTeam(t *testing.T, n int) *team {
	tm := &team{clock: time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)}
	for i := range n {
		tm.owners = append(tm.owners, Owner{Label: "agent" + string(rune('1'+i)), Dir: t.TempDir()})
	}
	return tm
}

func (tm *team) tools(i int) tool.Set {
	return Tools(tm.owners[i], func() []Owner { return tm.owners }, func() time.Time { tm.clock = tm.clock.Add(time.Second); return tm.clock })
}

func call(t *testing.T, s tool.Set, name, args string) tool.Result {
	t.Helper()
	tl, ok := s.Find(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	return tl.Run(t.Context(), args)
}

func mustOK(t *testing.T, r tool.Result) map[string]any {
	t.Helper()
	if r.IsError {
		t.Fatalf("tool error: %s", r.Content)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(r.Content), &out); err != nil || out["success"] != true {
		t.Fatalf("reply %s (%v)", r.Content, err)
	}
	return out
}

func TestTools_CreateUpdateLoadRemove(t *testing.T) {
	tm := newTeam(t, 2)
	a1, a2 := tm.tools(0), tm.tools(1)
	mustOK(t, call(t, a1, ToolCreate, `{"name": "prefs", "description": "What the user likes", "content": "- short answers"}`))
	mustOK(t, call(t, a1, ToolCreate, `{"name": "history", "description": "Project history", "content": "Started in 2024.", "tier": "long_term"}`))
	data, err := os.ReadFile(filepath.Join(tm.owners[0].Dir, "memory", "short_term", "prefs.md"))
	if err != nil || !strings.Contains(string(data), "agent_id: agent1") || !strings.Contains(string(data), "- short answers") {
		t.Fatalf("the file: %q (%v)", data, err)
	}
	// The other agent reads it, but changes only its own.
	got := mustOK(t, call(t, a2, ToolLoad, `{"name": "history"}`))
	if got["content"] != "Started in 2024." {
		t.Errorf("load by another agent: %v", got)
	}
	for _, tc := range []struct{ tool, args, want string }{
		{ToolUpdate, `{"name": "prefs", "content": "x"}`, "agent1's"},
		{ToolRemove, `{"name": "prefs"}`, "agent1's"},
		{ToolLoad, `{"name": "nothing"}`, "no agent has a memory"},
	} {
		if r := call(t, a2, tc.tool, tc.args); !r.IsError || !strings.Contains(r.Content, tc.want) {
			t.Errorf("%s %s by agent2: %+v", tc.tool, tc.args, r)
		}
	}
	mustOK(t, call(t, a1, ToolUpdate, `{"name": "prefs", "content": "- short answers, in French"}`))
	if got := mustOK(t, call(t, a1, ToolLoad, `{"name": "prefs"}`)); got["content"] != "- short answers, in French" {
		t.Errorf("after update: %v", got)
	}
	mustOK(t, call(t, a1, ToolRemove, `{"name": "prefs"}`))
	if ms, _ := Read(tm.owners[0]); len(ms) != 1 || ms[0].Name != "history" {
		t.Errorf("after remove: %+v", ms)
	}
}

func TestTools_BadArguments(t *testing.T) {
	tm := newTeam(t, 1)
	a := tm.tools(0)
	mustOK(t, call(t, a, ToolCreate, `{"name": "one", "description": "d", "content": "c"}`))
	for _, tc := range []struct{ args, want string }{
		{`{"name": "../../etc/passwd", "description": "d", "content": "c"}`, "letters, digits"},
		{`{"name": "", "description": "d", "content": "c"}`, "use 1 to 64"},
		{`{"name": "x", "description": "d", "content": "c", "tier": "forever"}`, "short_term or long_term"},
		{`{"name": "x", "description": "", "content": "c"}`, "description"},
		{`{"name": "x", "description": "d", "content": "  "}`, "empty"},
		{`{"name": "x", "description": "d", "content": "` + strings.Repeat("y", MaxContent+1) + `"}`, "more than"},
		{`{"name": "one", "description": "d", "content": "c"}`, "already have"},
		{`not json`, "name"},
	} {
		if r := call(t, a, ToolCreate, tc.args); !r.IsError || !strings.Contains(r.Content, tc.want) {
			t.Errorf("create %.60s: %+v, want an error about %q", tc.args, r, tc.want)
		}
	}
	// No more than MaxPerAgent memories.
	for i := 1; i < MaxPerAgent; i++ {
		mustOK(t, call(t, a, ToolCreate, `{"name": "m`+string(rune('A'+i%26))+strings.Repeat("x", i/26)+`", "description": "d", "content": "c", "tier": "long_term"}`))
	}
	if r := call(t, a, ToolCreate, `{"name": "last", "description": "d", "content": "c"}`); !r.IsError || !strings.Contains(r.Content, "the most") {
		t.Errorf("memory %d: %+v", MaxPerAgent+1, r)
	}
}

// TestRead_HostileFiles: an agent's own commands can put anything under memory/: a link to a
// file outside, a named pipe (which must not block the reader), a huge file, garbage. Each is
// skipped and reported; the good memory is read.
func TestRead_HostileFiles(t *testing.T) {
	tm := newTeam(t, 1)
	mustOK(t, call(t, tm.tools(0), ToolCreate, `{"name": "good", "description": "d", "content": "kept"}`))
	dir := filepath.Join(tm.owners[0].Dir, "memory", "short_term")
	secret := filepath.Join(t.TempDir(), "secret.md")
	if err := os.WriteFile(secret, []byte("---\nname: leak\ntier: short_term\nagent_id: agent1\n---\nsecret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "leak.md")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.md"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "huge.md"), []byte("---\nname: huge\ntier: short_term\nagent_id: agent1\n---\n"+strings.Repeat("x", maxFile)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "junk.md"), []byte("no front matter"), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var ms []Memory
	var errs []error
	go func() { ms, errs = Read(tm.owners[0]); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("reading the memories blocked on a named pipe")
	}
	if len(ms) != 1 || ms[0].Content != "kept" {
		t.Errorf("memories read: %+v", ms)
	}
	if len(errs) != 2 { // huge and junk; the link and the pipe are not regular entries
		t.Errorf("errors: %v", errs)
	}
	if s := Section(tm.owners); strings.Contains(s, "secret") || !strings.Contains(s, "kept") {
		t.Errorf("section: %s", s)
	}
}

func TestSection(t *testing.T) {
	tm := newTeam(t, 2)
	if s := Section(tm.owners); s != "" {
		t.Errorf("no memories: %q", s)
	}
	mustOK(t, call(t, tm.tools(0), ToolCreate, `{"name": "prefs", "description": "Likes", "content": "- tabs"}`))
	mustOK(t, call(t, tm.tools(1), ToolCreate, `{"name": "notes", "description": "Pipe | in it", "content": "long text", "tier": "long_term"}`))
	s := Section(tm.owners)
	for _, want := range []string{"## Short-term Memory", "### prefs [Agent: agent1]", "*Likes*", "- tabs", "## Long-term Memory", "| agent2 | notes | Pipe \\| in it |", "load_memory"} {
		if !strings.Contains(s, want) {
			t.Errorf("section lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "long text") {
		t.Errorf("a long-term memory's content is in the section:\n%s", s)
	}
	// Short-term memories past the cap are named as left out, not silently dropped.
	big := strings.Repeat("z", MaxContent-100)
	for _, n := range []string{"b1", "b2"} {
		mustOK(t, call(t, tm.tools(1), ToolCreate, `{"name": "`+n+`", "description": "d", "content": "`+big+`"}`))
	}
	if s := Section(tm.owners); !strings.Contains(s, "more short-term memories are left out") || len(s) > maxShortTerm+4<<10 {
		t.Errorf("over the cap: %d bytes, %q", len(s), s[len(s)-200:])
	}
}

// TestGather: at the end of a turn every agent's memories go into the winner's workspace,
// each in a file of its own when two agents chose one name; a memory an agent removed since
// the last turn does not come back from the winner's carried-over copy.
func TestGather(t *testing.T) {
	tm := newTeam(t, 2)
	a1, a2 := tm.tools(0), tm.tools(1)
	mustOK(t, call(t, a1, ToolCreate, `{"name": "prefs", "description": "d", "content": "one's"}`))
	mustOK(t, call(t, a2, ToolCreate, `{"name": "prefs", "description": "d", "content": "two's"}`))
	mustOK(t, call(t, a2, ToolCreate, `{"name": "gone", "description": "d", "content": "soon removed"}`))
	winner := tm.owners[0].Dir
	if err := Gather(winner, tm.owners); err != nil {
		t.Fatal(err)
	}
	// The next turn: agent2 starts from a copy of the winner's workspace.
	next := []Owner{tm.owners[0], {Label: "agent2", Dir: t.TempDir()}}
	if err := os.CopyFS(next[1].Dir, os.DirFS(winner)); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"one's", "two's"} {
		ms, errs := Read(next[i])
		if len(errs) > 0 || len(ms) == 0 || ms[len(ms)-1].Content != want && ms[0].Content != want {
			t.Errorf("%s after the turn: %+v %v", next[i].Label, ms, errs)
		}
	}
	tm.owners = next
	a2 = tm.tools(1)
	mustOK(t, call(t, a2, ToolUpdate, `{"name": "prefs", "content": "two's, changed"}`))
	mustOK(t, call(t, a2, ToolRemove, `{"name": "gone"}`))
	if got := mustOK(t, call(t, tm.tools(0), ToolLoad, `{"name": "prefs"}`)); got["content"] != "one's" {
		t.Errorf("agent1's own prefs: %v", got)
	}
	if err := Gather(winner, tm.owners); err != nil {
		t.Fatal(err)
	}
	all, _ := readAll(mustRoot(t, winner))
	var contents []string
	for _, m := range all {
		contents = append(contents, m.Agent+":"+m.Content)
	}
	if len(all) != 2 || !strings.Contains(strings.Join(contents, "|"), "agent2:two's, changed") {
		t.Errorf("the winner's workspace after the second turn: %q", contents)
	}
}

func mustRoot(t *testing.T, dir string) *os.Root {
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("---\nname: a\ntier: short_term\nagent_id: agent1\n---\nbody"))
	f.Add([]byte("---\nname: [\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data, "x")
		if err == nil && (checkName(m.Name) != nil || m.Tier != ShortTerm && m.Tier != LongTerm) {
			t.Errorf("accepted %+v", m)
		}
	})
}
