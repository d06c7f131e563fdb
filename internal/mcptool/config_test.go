package mcptool

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestValidate(t *testing.T) {
	long := strings.Repeat("a", 101)
	for _, c := range []struct {
		name string
		s    Server
		want []string // substrings, one per reported problem
	}{
		{"stdio ok", Server{Name: "fs", Command: "npx", Args: []string{"-y", "x"}}, nil},
		{"http ok", Server{Name: "w-1_b", Type: "streamable-http", URL: "https://example.com/mcp"}, nil},
		{"missing everything", Server{}, []string{`"": name: missing`, `command: missing; stdio servers need a command`}},
		{"bad name", Server{Name: "a b", Command: "x"}, []string{`name: "a b" has invalid characters (use letters, digits, _ and -)`}},
		{"only separators", Server{Name: "__", Command: "x"}, []string{`needs at least one letter or digit`}},
		{"long name", Server{Name: long, Command: "x"}, []string{"101 characters, at most 100"}},
		{"sse", Server{Name: "s", Type: "sse", URL: "http://x/sse"}, []string{`type: sse is deprecated and not supported (use type: streamable-http`}},
		{"unknown type", Server{Name: "s", Type: "websocket"}, []string{`type: unknown "websocket" (want stdio or streamable-http)`}},
		{"http without url", Server{Name: "s", Type: "streamable-http"}, []string{"url: missing"}},
		{"ftp url", Server{Name: "s", Type: "streamable-http", URL: "ftp://x"}, []string{`url: "ftp://x" is not an http(s) URL`}},
		{"cwd escapes", Server{Name: "s", Command: "x", Cwd: "a/../../b"}, []string{`cwd: "a/../../b" must not contain ..`}},
		{"cwd dots in name", Server{Name: "s", Command: "x", Cwd: "a..b/c"}, nil},
		{"too many args", Server{Name: "s", Command: "x", Args: make([]string, 51)}, []string{"51 arguments"}},
		{"long arg", Server{Name: "s", Command: "x", Args: []string{"", strings.Repeat("x", 501)}}, []string{"args[1]: 501 characters"}},
		{"timeout", Server{Name: "s", Command: "x", Timeout: 301 * time.Second}, []string{"timeout: 5m1s out of range"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Validate(c.s)
			var got []string
			if err != nil {
				for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
					var fe *FieldError
					if !errors.As(e, &fe) {
						t.Errorf("%v is not a *FieldError", e)
					}
					got = append(got, e.Error())
				}
			}
			if len(got) != len(c.want) {
				t.Fatalf("Validate = %q, want %d problems %q", got, len(c.want), c.want)
			}
			for i := range got {
				if !strings.Contains(got[i], c.want[i]) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], c.want[i])
				}
			}
		})
	}
}

func TestExpand(t *testing.T) {
	env := map[string]string{"HOME": "/home/u", "KEY": "k1", "EMPTY": ""}
	getenv := func(k string) string { return env[k] }
	in := Server{Name: "s", Command: "${HOME}/bin/x", Args: []string{"--root=${HOME}", "$HOME", "plain"},
		Env: map[string]string{"A": "${KEY}-${KEY}"}, Headers: map[string]string{"Authorization": "Bearer ${KEY}"},
		URL: "http://${HOST}/", Cwd: "${HOME}"}
	got, err := Expand(in, getenv)
	if err != nil {
		t.Fatal(err)
	}
	want := in
	want.Args = []string{"--root=/home/u", "$HOME", "plain"}
	want.Env = map[string]string{"A": "k1-k1"}
	want.Headers = map[string]string{"Authorization": "Bearer k1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Expand (-want +got):\n%s", diff)
	}
	if in.Args[0] != "--root=${HOME}" {
		t.Error("Expand modified its argument")
	}

	_, err = Expand(Server{Name: "gh", Args: []string{"${MISSING}"}, Env: map[string]string{"T": "${EMPTY}"},
		Headers: map[string]string{"X": "${bad-name}", "Y": "${OPEN"}}, getenv)
	for _, want := range []string{
		`mcp server "gh": args[0]: environment variable MISSING is not set or empty`,
		`mcp server "gh": env.T: environment variable EMPTY is not set or empty`,
		`headers.X: invalid variable name "bad-name"`,
		`headers.Y: unterminated ${`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
}

func TestKeySharing(t *testing.T) {
	a := Server{Name: "fs", Command: "npx", Args: []string{"x"}, Env: map[string]string{"A": "1", "B": "2"}, AllowedTools: []string{"read"}}
	b := Server{Name: "fs", Command: "npx", Args: []string{"x"}, Env: map[string]string{"B": "2", "A": "1"}, Timeout: time.Second}
	if a.key() != b.key() {
		t.Error("filters, timeouts or map order changed the key")
	}
	for _, c := range []Server{
		{Name: "fs2", Command: "npx", Args: []string{"x"}, Env: a.Env},
		{Name: "fs", Command: "npx", Args: []string{"y"}, Env: a.Env},
		{Name: "fs", Command: "npx", Args: []string{"x"}, Env: map[string]string{"A": "1"}},
		{Name: "fs", Command: "npx", Args: []string{"x"}, Env: a.Env, Cwd: "/tmp"},
	} {
		if c.key() == a.key() {
			t.Errorf("%+v shares a key with %+v", c, a)
		}
	}
}

func TestToolName(t *testing.T) {
	for _, c := range []struct {
		server, tool, want string
		renamed            bool
	}{
		{"weather", "get_forecast", "mcp__weather__get_forecast", false},
		{"_weather-", ".get-forecast_", "mcp__weather__get-forecast", false},
		{"gh", "repos.list/all", "mcp__gh__repos_list_all", true},
		{"gh", "???", "mcp__gh__x", true},
		{"s", strings.Repeat("t", 70), "mcp__s__" + strings.Repeat("t", 47) + "_", true},
	} {
		got, renamed := ToolName(c.server, c.tool)
		if !strings.HasPrefix(got, c.want) || renamed != c.renamed || len(got) > MaxToolNameLen {
			t.Errorf("ToolName(%q, %q) = %q, %v; want prefix %q, %v", c.server, c.tool, got, renamed, c.want, c.renamed)
		}
	}
	a, _ := ToolName("s", strings.Repeat("t", 70))
	b, _ := ToolName("s", strings.Repeat("t", 71))
	if a == b || len(a) != MaxToolNameLen {
		t.Errorf("long names %q and %q", a, b)
	}
}

func TestServerEnv(t *testing.T) {
	got := serverEnv([]string{"PATH=/bin", "OPENAI_API_KEY=x", "github_token=y", "MY_SECRET=z", "TOKENIZER=ok",
		"AWS_SECRET_ACCESS_KEY=a", "API_KEY=b", "NOEQUALS", "KEEP=1"}, map[string]string{"OPENAI_API_KEY": "explicit", "KEEP": "2"})
	want := []string{"KEEP=2", "OPENAI_API_KEY=explicit", "PATH=/bin", "TOKENIZER=ok"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("serverEnv (-want +got):\n%s", diff)
	}
}

func TestObjectSchema(t *testing.T) {
	for _, c := range []struct {
		in   any
		want map[string]any
	}{
		{nil, map[string]any{"type": "object", "properties": map[string]any{}}},
		{map[string]any{"type": "object"}, map[string]any{"type": "object", "properties": map[string]any{}}},
		{map[string]any{"properties": map[string]any{"a": map[string]any{"type": "string"}}},
			map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}}},
		{map[string]any{"type": "array"}, map[string]any{"type": "object", "properties": map[string]any{}}},
		{"garbage", map[string]any{"type": "object", "properties": map[string]any{}}},
	} {
		if diff := cmp.Diff(c.want, objectSchema(c.in)); diff != "" {
			t.Errorf("objectSchema(%v) (-want +got):\n%s", c.in, diff)
		}
	}
	shared := map[string]any{"type": "object", "properties": map[string]any{}}
	objectSchema(shared)["properties"].(map[string]any)["x"] = 1
	if len(shared["properties"].(map[string]any)) != 0 {
		t.Error("objectSchema does not copy")
	}
}

func TestResultText(t *testing.T) {
	size := int64(10)
	for _, c := range []struct {
		res  *mcp.CallToolResult
		want string
	}{
		{&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.TextContent{Text: "b"}}}, "a\nb"},
		{&mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, 68)}}}, "[image: image/png, 68 bytes]"},
		{&mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{Data: []byte{1}}}}, "[audio: unknown type, 1 bytes]"},
		{&mcp.CallToolResult{Content: []mcp.Content{&mcp.ResourceLink{Name: "r", URI: "file:///r", MIMEType: "text/plain", Size: &size}}}, "[resource link: r <file:///r>, text/plain]"},
		{&mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://a", Text: "body"}}}}, "[resource: mem://a]\nbody"},
		{&mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://b", MIMEType: "application/gzip", Blob: []byte("xyz")}}}}, "[resource: mem://b, application/gzip, 3 bytes]"},
		{&mcp.CallToolResult{StructuredContent: map[string]any{"temp": 21}}, `{"temp":21}`},
		{&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "21 degrees"}}, StructuredContent: map[string]any{"temp": 21}}, "21 degrees"},
		{&mcp.CallToolResult{}, "(no output)"},
		{&mcp.CallToolResult{IsError: true}, "the tool reported an error without details"},
	} {
		if got := resultText(c.res); got != c.want {
			t.Errorf("resultText = %q, want %q", got, c.want)
		}
	}
}
