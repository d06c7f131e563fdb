package mcptool

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"massgen/internal/childproc/proctest"
)

// everythingBin finds the reference server installed by CI with
//
//	npm install --prefix .ci/npm @modelcontextprotocol/server-everything@2026.8.31
//
// from the repository root. Without it the test is skipped locally and fails in CI.
func everythingBin(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, ".ci", "npm", "node_modules", ".bin", "mcp-server-everything")
	if _, err := os.Stat(bin); err != nil {
		msg := "mcp-server-everything not installed (" + err.Error() + "); run: npm install --prefix .ci/npm @modelcontextprotocol/server-everything@2026.8.31"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

// TestEverything runs @modelcontextprotocol/server-everything 2026.8.31 over stdio. That
// version offers echo, get-sum, get-tiny-image, get-env, get-structured-content and more
// (there is no "add": it was renamed get-sum).
func TestEverything(t *testing.T) {
	bin := everythingBin(t)
	parent := append(os.Environ(), "OPENAI_API_KEY=sk-must-not-leak")
	var log statusLog
	m := NewManager(Options{OnStatus: log.add, Environ: func() []string { return parent }})
	srv := Server{Name: "everything", Command: bin, Args: []string{"stdio"}, Env: map[string]string{markerEnv: marker(t)}}
	set, errs := m.Tools(t.Context(), []Server{srv}, nil, []string{"trigger-long-running-operation"})
	if len(errs) > 0 {
		t.Fatalf("errors %v; statuses:\n%s", errs, &log)
	}
	names := toolNames(set)
	for _, want := range []string{"mcp__everything__echo", "mcp__everything__get-sum", "mcp__everything__get-tiny-image", "mcp__everything__get-env"} {
		if !slices.Contains(names, want) {
			t.Errorf("missing %s in %v", want, names)
		}
	}
	if slices.Contains(names, "mcp__everything__trigger-long-running-operation") {
		t.Errorf("excluded tool offered: %v", names)
	}
	echo, _ := set.Find("mcp__everything__echo")
	if echo.Spec.Parameters["type"] != "object" || echo.Spec.Description == "" {
		t.Errorf("echo spec = %+v", echo.Spec)
	}

	if r := run(t, set, "mcp__everything__echo", `{"message":"hello"}`); r.IsError || r.Content != "Echo: hello" {
		t.Errorf("echo = %+v", r)
	}
	if r := run(t, set, "mcp__everything__get-sum", `{"a":2,"b":3}`); r.IsError || !strings.Contains(r.Content, "is 5") {
		t.Errorf("get-sum = %+v", r)
	}
	if r := run(t, set, "mcp__everything__get-sum", `{"a":"two"}`); !r.IsError {
		t.Errorf("get-sum with bad arguments = %+v", r)
	}
	if r := run(t, set, "mcp__everything__get-tiny-image", `{}`); r.IsError || !strings.Contains(r.Content, "[image: image/png, ") {
		t.Errorf("get-tiny-image = %+v", r)
	}
	if r := run(t, set, "mcp__everything__get-env", `{}`); r.IsError || strings.Contains(r.Content, "sk-must-not-leak") || !strings.Contains(r.Content, markerEnv) {
		t.Errorf("get-env leaks the API key or lacks the config's env: %.300s", r.Content)
	}

	procs := findProcs(t)
	if len(procs) != 1 {
		t.Fatalf("node processes = %v, want one", procs)
	}
	pgrp := proctest.PGID(t, procs[0])
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	requireGone(t, pgrp)
}
