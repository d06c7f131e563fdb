package mcptool

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type greetIn struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

type slowHTTPIn struct {
	Millis int `json:"millis"`
}

// httpServer serves a Go MCP server over streamable HTTP on loopback. It lists one tool per
// page and records the X-Api-Key header of every request.
type httpServer struct {
	URL  string
	mu   sync.Mutex
	keys []string
}

func (h *httpServer) seenKeys() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Compact(slices.Clone(h.keys))
}

func newHTTPServer(t *testing.T) *httpServer {
	t.Helper()
	stop := make(chan struct{})
	s := mcp.NewServer(&mcp.Implementation{Name: "http-test", Version: "1"}, &mcp.ServerOptions{PageSize: 1})
	mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "Greet someone."}, func(_ context.Context, _ *mcp.CallToolRequest, in greetIn) (*mcp.CallToolResult, any, error) {
		return text("hello, " + in.Name), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Answer after millis."}, func(ctx context.Context, _ *mcp.CallToolRequest, in slowHTTPIn) (*mcp.CallToolResult, any, error) {
		select {
		case <-time.After(time.Duration(in.Millis) * time.Millisecond):
			return text("done"), nil, nil
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-stop: // the client's cancellation may not have arrived yet
			return nil, nil, nil
		}
	})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always fails."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		r := text("the database is locked")
		r.IsError = true
		return r, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "-weird.name-"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return text("weird"), nil, nil
	})
	h := &httpServer{}
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.keys = append(h.keys, r.Header.Get("X-Api-Key"))
		h.mu.Unlock()
		mcpHandler.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(stop) })
	h.URL = ts.URL
	return h
}

func httpDecl(name, url string) Server {
	return Server{Name: name, Type: TypeStreamableHTTP, URL: url}
}

func TestHTTP_ListAndCall(t *testing.T) {
	hs := newHTTPServer(t)
	var log statusLog
	m := NewManager(Options{OnStatus: log.add})
	closeManager(t, m)
	set, errs := m.Tools(t.Context(), []Server{httpDecl("web", hs.URL)}, nil, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	got := toolNames(set)
	slices.Sort(got)
	if want := []string{"mcp__web__fail", "mcp__web__greet", "mcp__web__slow", "mcp__web__weird_name"}; !slices.Equal(got, want) {
		t.Fatalf("tools = %v, want %v (all pages)", got, want)
	}
	greet, _ := set.Find("mcp__web__greet")
	want := map[string]any{"type": "object", "additionalProperties": false, "required": []any{"name"},
		"properties": map[string]any{"name": map[string]any{"type": "string", "description": "who to greet"}}}
	if diff := cmp.Diff(want, greet.Spec.Parameters); diff != "" || greet.Spec.Description != "Greet someone." {
		t.Errorf("greet spec %q (-want +got):\n%s", greet.Spec.Description, diff)
	}
	weird, _ := set.Find("mcp__web__weird_name")
	if !strings.Contains(weird.Spec.Description, `Tool "-weird.name-" of MCP server "web"; renamed`) {
		t.Errorf("renamed tool description = %q", weird.Spec.Description)
	}
	if log.count("web ready 4 tools") != 1 {
		t.Errorf("statuses:\n%s", &log)
	}

	for _, c := range []struct {
		tool, args string
		want       string
		isErr      bool
	}{
		{"mcp__web__greet", `{"name":"Ada"}`, "hello, Ada", false},
		{"mcp__web__weird_name", ``, "weird", false},
		{"mcp__web__fail", `{}`, "the database is locked", true},
		{"mcp__web__greet", `{"name":`, "invalid arguments for mcp__web__greet", true},
		{"mcp__web__greet", `["Ada"]`, "send one JSON object", true},
		{"mcp__web__greet", `{"name":42}`, `validating /properties/name: type: 42 has type "integer"`, true}, // the server checks
	} {
		r := run(t, set, c.tool, c.args)
		if r.IsError != c.isErr || !strings.Contains(r.Content, c.want) {
			t.Errorf("%s(%s) = %+v, want %q (error %v)", c.tool, c.args, r, c.want, c.isErr)
		}
	}
}

func TestHTTP_Timeout(t *testing.T) {
	hs := newHTTPServer(t)
	m := NewManager(Options{ShutdownGrace: 200 * time.Millisecond}) // the server's DELETE waits for the call
	closeManager(t, m)
	d := httpDecl("web", hs.URL)
	d.Timeout = 200 * time.Millisecond
	set, errs := m.Tools(t.Context(), []Server{d}, []string{"slow"}, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if r := run(t, set, "mcp__web__slow", `{"millis":10}`); r.IsError || r.Content != "done" {
		t.Errorf("fast call = %+v", r)
	}
	start := time.Now()
	r := run(t, set, "mcp__web__slow", `{"millis":5000}`)
	if !r.IsError || !strings.Contains(r.Content, `timed out after 200ms without an answer from MCP server "web"`) {
		t.Errorf("slow call = %+v", r)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("took %s", el)
	}
}

func TestHTTP_Filtering(t *testing.T) {
	hs := newHTTPServer(t)
	m := NewManager(Options{})
	closeManager(t, m)
	for _, c := range []struct {
		name                   string
		allowed, excluded      []string
		srvAllowed, srvExclude []string
		want                   []string
		wantErr                string
	}{
		{name: "everything", want: []string{"fail", "greet", "slow", "weird_name"}},
		{name: "backend allow", allowed: []string{"greet", "fail"}, want: []string{"fail", "greet"}},
		{name: "backend allow exposed name", allowed: []string{"mcp__web__greet"}, want: []string{"greet"}},
		{name: "backend exclude", excluded: []string{"slow"}, want: []string{"fail", "greet", "weird_name"}},
		{name: "server allow overrides backend", allowed: []string{"greet"}, srvAllowed: []string{"slow", "fail"}, want: []string{"fail", "slow"}},
		{name: "excludes unioned", excluded: []string{"slow"}, srvExclude: []string{"fail"}, want: []string{"greet", "weird_name"}},
		{name: "exclude beats allow", srvAllowed: []string{"greet", "slow"}, excluded: []string{"slow"}, want: []string{"greet"}},
		{name: "raw name with dots", allowed: []string{"-weird.name-"}, want: []string{"weird_name"}},
		{name: "server allow typo", srvAllowed: []string{"greet", "gret"}, want: []string{"greet"},
			wantErr: `mcp server "web": allowed_tools: unknown tool gret (the server has -weird.name-, fail, greet, slow)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := httpDecl("web", hs.URL)
			d.AllowedTools, d.ExcludeTools = c.srvAllowed, c.srvExclude
			set, errs := m.Tools(t.Context(), []Server{d}, c.allowed, c.excluded)
			var got []string
			for _, n := range toolNames(set) {
				got = append(got, strings.TrimPrefix(n, "mcp__web__"))
			}
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Errorf("tools = %v, want %v", got, c.want)
			}
			if c.wantErr == "" && len(errs) > 0 || c.wantErr != "" && (len(errs) != 1 || errs[0].Error() != c.wantErr) {
				t.Errorf("errors = %v, want %q", errs, c.wantErr)
			}
			// The server works: a typo in allowed_tools is a warning, not a server lost.
			var w *ToolWarning
			if c.wantErr != "" && len(errs) == 1 && (!errors.As(errs[0], &w) || w.Server != "web") {
				t.Errorf("error %#v is not a *ToolWarning for web", errs[0])
			}
		})
	}
}

func TestHTTP_HeadersExpanded(t *testing.T) {
	hs := newHTTPServer(t)
	env := map[string]string{"MCPTOOL_TEST_KEY": "k-123"}
	m := NewManager(Options{Getenv: func(k string) string { return env[k] }})
	closeManager(t, m)
	d := httpDecl("keyed", hs.URL)
	d.Headers = map[string]string{"X-Api-Key": "${MCPTOOL_TEST_KEY}"}
	set, errs := m.Tools(t.Context(), []Server{d}, nil, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	run(t, set, "mcp__keyed__greet", `{"name":"x"}`)
	if got := hs.seenKeys(); !slices.Equal(got, []string{"k-123"}) {
		t.Errorf("server saw X-Api-Key %q", got)
	}

	// A missing variable: the server is skipped with an error naming it and the variable.
	d = httpDecl("other", hs.URL)
	d.Headers = map[string]string{"Authorization": "Bearer ${MCPTOOL_MISSING}"}
	set, errs = m.Tools(t.Context(), []Server{d}, nil, nil)
	if len(set) != 0 || len(errs) != 1 || !strings.Contains(errs[0].Error(), `mcp server "other": headers.Authorization: environment variable MCPTOOL_MISSING is not set or empty`) {
		t.Errorf("tools %v, errors %v", toolNames(set), errs)
	}
}

func TestHTTP_UnreachableServerSpareOthers(t *testing.T) {
	hs := newHTTPServer(t)
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	var log statusLog
	m := NewManager(Options{OnStatus: log.add, StartTimeout: 5 * time.Second})
	closeManager(t, m)
	set, errs := m.Tools(t.Context(), []Server{httpDecl("gone", deadURL), httpDecl("web", hs.URL),
		{Name: "old", Type: "sse", URL: hs.URL}}, nil, nil)
	if len(errs) != 2 || !strings.Contains(errs[0].Error(), `mcp server "old": type: sse is deprecated`) ||
		!strings.Contains(errs[1].Error(), `mcp server "gone": connect:`) {
		t.Fatalf("errors = %v", errs)
	}
	if len(set) != 4 {
		t.Errorf("tools = %v", toolNames(set))
	}
	if log.count("gone failed connect:") != 1 {
		t.Errorf("statuses:\n%s", &log)
	}
}
