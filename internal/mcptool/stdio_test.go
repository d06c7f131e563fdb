package mcptool

import (
	"context"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"massgen/internal/childproc/proctest"
	"massgen/internal/tool"
)

func TestStdio_StartCallAndShare(t *testing.T) {
	var log statusLog
	m := NewManager(Options{OnStatus: log.add})
	srv := selfServer(t, "local", "serve")

	// Two agents declare the same server concurrently: one process serves both.
	var wg sync.WaitGroup
	sets := make([]tool.Set, 2)
	for i := range sets {
		wg.Go(func() {
			set, errs := m.Tools(t.Context(), []Server{srv}, nil, nil)
			if len(errs) > 0 {
				t.Errorf("agent %d: %v", i, errs)
			}
			sets[i] = set
		})
	}
	wg.Wait()
	want := []string{"mcp__local__add", "mcp__local__die", "mcp__local__echo", "mcp__local__env",
		"mcp__local__hang", "mcp__local__pid", "mcp__local__spawn"} // listed over four pages
	for i, set := range sets {
		got := toolNames(set)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("agent %d tools = %v, want %v", i, got, want)
		}
	}
	if n := log.count("local starting"); n != 1 {
		t.Errorf("started %d times, want once:\n%s", n, &log)
	}
	if n := log.count("local ready 7 tools"); n != 1 {
		t.Errorf("statuses:\n%s", &log)
	}

	if r := run(t, sets[0], "mcp__local__echo", `{"text":"hi"}`); r.IsError || r.Content != "echo: hi" {
		t.Errorf("echo = %+v", r)
	}
	if r := run(t, sets[1], "mcp__local__add", `{"A":2,"B":3}`); r.IsError || r.Content != `{"sum":5}` {
		t.Errorf("add = %+v", r)
	}
	pid0, pid1 := run(t, sets[0], "mcp__local__pid", ""), run(t, sets[1], "mcp__local__pid", "{}")
	if pid0 != pid1 {
		t.Errorf("pids differ: %v vs %v", pid0, pid1)
	}
	if procs := findProcs(t); len(procs) != 1 {
		t.Errorf("server processes = %v, want one", procs)
	}
	pid, _ := strconv.Atoi(pid0.Content)

	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	requireGone(t, pid)
	if n := log.count("local stopped"); n != 1 {
		t.Errorf("statuses:\n%s", &log)
	}
	if r := run(t, sets[0], "mcp__local__echo", `{"text":"hi"}`); !r.IsError || !strings.Contains(r.Content, "not running") {
		t.Errorf("call after Close = %+v", r)
	}
	if _, errs := m.Tools(t.Context(), []Server{srv}, nil, nil); len(errs) != 1 || !errors.Is(errs[0], ErrClosed) {
		t.Errorf("Tools after Close: %v", errs)
	}
	if err := m.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestStdio_EnvironmentWithoutSecrets(t *testing.T) {
	parent := []string{"PATH=" + os.Getenv("PATH"), "HOME=/home/test", "OPENAI_API_KEY=sk-parent",
		"GITHUB_TOKEN=ghp-parent", "AWS_SECRET_ACCESS_KEY=aws", "DB_PASSWORD=pw", "GITHUB_PERSONAL_ACCESS_TOKEN=pat"}
	var log statusLog
	m := NewManager(Options{
		OnStatus: log.add,
		Environ:  func() []string { return parent },
		Getenv:   func(k string) string { return map[string]string{"GH": "from-config"}[k] },
	})
	closeManager(t, m)
	srv := selfServer(t, "envy", "serve", "GITHUB_PERSONAL_ACCESS_TOKEN", "${GH}")
	srv.Args = []string{"--token=${GH}"} // ignored by the server; must not be shown expanded
	set, errs := m.Tools(t.Context(), []Server{srv}, []string{"env"}, nil)
	if len(errs) > 0 || len(set) != 1 {
		t.Fatalf("tools %v, errors %v", toolNames(set), errs)
	}
	for name, want := range map[string]string{
		"HOME": "/home/test", "OPENAI_API_KEY": "<unset>", "GITHUB_TOKEN": "<unset>", "AWS_SECRET_ACCESS_KEY": "<unset>",
		"DB_PASSWORD": "<unset>", "GITHUB_PERSONAL_ACCESS_TOKEN": "from-config",
	} {
		if r := run(t, set, "mcp__envy__env", `{"name":"`+name+`"}`); r.Content != want {
			t.Errorf("%s = %q, want %q", name, r.Content, want)
		}
	}
	if log.count("envy starting "+srv.Command+" --token=${GH}") != 1 || strings.Contains(log.String(), "from-config") {
		t.Errorf("statuses:\n%s", &log)
	}
}

func TestStdio_ExitsImmediately(t *testing.T) {
	var log statusLog
	m := NewManager(Options{OnStatus: log.add})
	closeManager(t, m)
	good := selfServer(t, "good", "serve")
	set, errs := m.Tools(t.Context(), []Server{selfServer(t, "broken", "exit"), good}, nil, nil)
	if len(errs) != 1 {
		t.Fatalf("errors = %v", errs)
	}
	msg := errs[0].Error()
	var se *StartError
	if !errors.As(errs[0], &se) || !strings.HasPrefix(se.Hint(), "run `") {
		t.Errorf("error %#v is not a *StartError with a hint to run the command", errs[0])
	}
	for _, want := range []string{`mcp server "broken"`, "exit status 3", "fatal: cannot open /nonexistent/db.sqlite", "loading configuration"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if log.count("broken failed ") != 1 {
		t.Errorf("statuses:\n%s", &log)
	}
	if r := run(t, set, "mcp__good__echo", `{"text":"x"}`); r.IsError {
		t.Errorf("the good server suffered: %+v", r)
	}
}

func TestStdio_MissingCommand(t *testing.T) {
	m := NewManager(Options{})
	closeManager(t, m)
	_, errs := m.Tools(t.Context(), []Server{{Name: "nope", Command: "massgen-no-such-mcp-server", Args: []string{"--flag"}}}, nil, nil)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `mcp server "nope": start massgen-no-such-mcp-server`) {
		t.Fatalf("errors = %v", errs)
	}
	// The caller can tell a server it cannot use, and tell the user what to do about it.
	var se *StartError
	if !errors.As(errs[0], &se) || se.Server != "nope" || se.Target != "massgen-no-such-mcp-server --flag" {
		t.Fatalf("error %#v is not a *StartError for nope", errs[0])
	}
	if h := se.Hint(); !strings.Contains(h, "check that `massgen-no-such-mcp-server` is installed and on PATH") {
		t.Errorf("hint %q", h)
	}
}

func TestStdio_DiesMidSession(t *testing.T) {
	var log statusLog
	m := NewManager(Options{OnStatus: log.add})
	closeManager(t, m)
	set, errs := m.Tools(t.Context(), []Server{selfServer(t, "fragile", "serve")}, nil, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	r := run(t, set, "mcp__fragile__die", "")
	if !r.IsError || !strings.Contains(r.Content, `MCP server "fragile" is not running`) || !strings.Contains(r.Content, "exit status 7") {
		t.Errorf("die = %+v", r)
	}
	r = run(t, set, "mcp__fragile__echo", `{"text":"again"}`)
	if !r.IsError || !strings.Contains(r.Content, "simulated crash") {
		t.Errorf("call after death = %+v", r)
	}
	if log.count("fragile died exit status 7; stderr:") != 1 {
		t.Errorf("statuses:\n%s", &log)
	}
	// Another agent declaring it now learns it is gone instead of getting dead tools.
	set, errs = m.Tools(t.Context(), []Server{selfServer(t, "fragile", "serve")}, nil, nil)
	if len(set) != 0 || len(errs) != 1 || !strings.Contains(errs[0].Error(), `mcp server "fragile": not running (exit status 7`) {
		t.Errorf("tools %v, errors %v", toolNames(set), errs)
	}
	requireGone(t)
	// A conversation's next turn tries it again, and the new one runs.
	m.Retry()
	set, errs = m.Tools(t.Context(), []Server{selfServer(t, "fragile", "serve")}, nil, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if r := run(t, set, "mcp__fragile__echo", `{"text":"back"}`); r.Content != "echo: back" {
		t.Errorf("echo after Retry = %+v", r)
	}
	if log.count("fragile starting ") != 2 {
		t.Errorf("statuses:\n%s", &log)
	}
}

func TestStdio_TimeoutsNeverHang(t *testing.T) {
	m := NewManager(Options{ShutdownGrace: 200 * time.Millisecond}) // the hung call delays the exit
	closeManager(t, m)
	srv := selfServer(t, "stuck", "serve")
	srv.Timeout = 300 * time.Millisecond
	set, errs := m.Tools(t.Context(), []Server{srv}, nil, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	start := time.Now()
	r := run(t, set, "mcp__stuck__hang", "{}")
	if !r.IsError || !strings.Contains(r.Content, "timed out after 300ms") {
		t.Errorf("hang = %+v", r)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("call took %s", d)
	}
	// The engine's own bound wins when shorter.
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	tl, _ := set.Find("mcp__stuck__hang")
	if r := tl.Run(ctx, "{}"); !r.IsError || !strings.Contains(r.Content, "was stopped") {
		t.Errorf("hang with engine deadline = %+v", r)
	}
	if r := run(t, set, "mcp__stuck__echo", `{"text":"still alive"}`); r.Content != "echo: still alive" {
		t.Errorf("echo after timeouts = %+v", r)
	}
}

func TestStdio_CloseKillsStubbornGroup(t *testing.T) {
	m := NewManager(Options{ShutdownGrace: 200 * time.Millisecond})
	set, errs := m.Tools(t.Context(), []Server{selfServer(t, "stubborn", "serve", stubbornEnv, "1")}, nil, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	leader, _ := strconv.Atoi(run(t, set, "mcp__stubborn__pid", "").Content)
	child, _ := strconv.Atoi(run(t, set, "mcp__stubborn__spawn", "").Content)
	pgrp := proctest.PGID(t, leader)
	if members := proctest.GroupMembers(t, pgrp); !slices.Contains(members, child) || !slices.Contains(members, leader) {
		t.Fatalf("group %d = %v, want leader and grandchild %d", pgrp, members, child)
	}
	start := time.Now()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Close took %s", d)
	}
	requireGone(t, pgrp)
}

// When massgen dies, even by SIGKILL, its MCP servers and whatever they started die with it.
func TestStdio_ServersDieWithMassgen(t *testing.T) {
	cmd := proctest.Helper(t, []string{"-test.run=^$"}, modeEnv+"=manager", markerEnv+"="+marker(t))
	proctest.StartHelper(t, cmd)
	if procs := findProcs(t); len(procs) < 3 { // the helper, the server, its grandchild
		t.Fatalf("processes = %v", procs)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if !proctest.Eventually(5*time.Second, func() bool { return len(findProcs(t)) == 0 }) {
		t.Fatalf("processes outlived massgen: %v", findProcs(t))
	}
}

func TestStdio_OrphanedGrandchildKilled(t *testing.T) {
	// The leader exits when stdin closes, but its grandchild ignores SIGTERM.
	m := NewManager(Options{ShutdownGrace: 200 * time.Millisecond})
	set, errs := m.Tools(t.Context(), []Server{selfServer(t, "parent", "serve")}, nil, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	leader, _ := strconv.Atoi(run(t, set, "mcp__parent__pid", "").Content)
	run(t, set, "mcp__parent__spawn", "")
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	requireGone(t, leader)
}

func TestStdio_CancelledWhileStarting(t *testing.T) {
	m := NewManager(Options{ShutdownGrace: 200 * time.Millisecond})
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // Ctrl-C before the server answered
	_, errs := m.Tools(ctx, []Server{selfServer(t, "late", "serve")}, nil, nil)
	if len(errs) != 1 || !errors.Is(errs[0], context.Canceled) {
		t.Fatalf("errors = %v", errs)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	requireGone(t)
}
