package durable

import (
	"strings"
	"testing"

	"massgen/internal/config"
)

func TestAllowlist_Check(t *testing.T) {
	allow, err := NewAllowlist([]string{"https://gateway.example.com/openai/", "http://127.0.0.1:9000"})
	if err != nil {
		t.Fatal(err)
	}
	agent := func(typ, base string) config.Agent {
		return config.Agent{ID: "a1", Backend: config.Backend{Type: typ, BaseURL: base}}
	}
	tests := []struct {
		name   string
		typ    string
		base   string
		keyEnv string
		ok     bool
	}{
		{"openai's own endpoint", "openai", "https://api.openai.com/v1", "OPENAI_API_KEY", true},
		{"no base_url: the default", "openai", "", "OPENAI_API_KEY", true},
		{"explicit default port", "openai", "https://api.openai.com:443/v1", "OPENAI_API_KEY", true},
		{"host case", "openai", "https://API.OpenAI.com/v1/", "OPENAI_API_KEY", true},
		{"a path below", "claude", "https://api.anthropic.com/v1", "ANTHROPIC_API_KEY", true},
		{"a preset's own host", "groq", "https://api.groq.com/openai/v1", "GROQ_API_KEY", true},
		{"chatcompletion to Groq with Groq's key", "chatcompletion", "https://api.groq.com/openai/v1", "GROQ_API_KEY", true},
		{"chatcompletion to Groq with OpenAI's key", "chatcompletion", "https://api.groq.com/openai/v1", "OPENAI_API_KEY", false},
		{"suffix host", "openai", "https://api.openai.com.evil.com/v1", "OPENAI_API_KEY", false},
		{"host in the query", "openai", "https://evil.com/?https://api.openai.com/v1", "OPENAI_API_KEY", false},
		{"query on the right host", "openai", "https://api.openai.com/v1?x=https://evil.com", "OPENAI_API_KEY", false},
		{"fragment", "openai", "https://api.openai.com/v1#frag", "OPENAI_API_KEY", false},
		{"userinfo", "openai", "https://api.openai.com@evil.com/v1", "OPENAI_API_KEY", false},
		{"userinfo on the right host", "openai", "https://u:p@api.openai.com/v1", "OPENAI_API_KEY", false},
		{"backslash", "openai", `https://api.openai.com\@evil.com/v1`, "OPENAI_API_KEY", false},
		{"other port", "openai", "https://api.openai.com:8443/v1", "OPENAI_API_KEY", false},
		{"http instead of https", "openai", "http://api.openai.com/v1", "OPENAI_API_KEY", false},
		{"other path", "openai", "https://api.openai.com/v2", "OPENAI_API_KEY", false},
		{"path prefix without a slash", "openai", "https://api.openai.com/v1evil", "OPENAI_API_KEY", false},
		{"dot-dot out of the path", "groq", "https://api.groq.com/openai/v1/../../x", "GROQ_API_KEY", false},
		{"encoded dot-dot", "groq", "https://api.groq.com/openai/%2e%2e/x", "GROQ_API_KEY", false},
		{"trailing dot host", "openai", "https://api.openai.com./v1", "OPENAI_API_KEY", false},
		{"not http", "openai", "file:///etc/passwd", "OPENAI_API_KEY", false},
		{"a loopback server with a key", "openai", "http://127.0.0.1:8080/v1", "OPENAI_API_KEY", false},
		{"ollama's default", "ollama", "http://localhost:11434/v1", "", true},
		{"ollama's default on 127.0.0.1", "ollama", "http://127.0.0.1:11434/v1", "", true},
		{"ollama's default on ::1", "ollama", "http://[::1]:11434/v1", "", true},
		{"ollama on another port", "ollama", "http://127.0.0.1:8080/v1", "", false},
		{"ollama elsewhere", "ollama", "http://10.0.0.5:11434/v1", "", false},
		{"vllm's default with its key", "vllm", "http://localhost:8000/v1", "VLLM_API_KEY", true},
		{"allowed gateway", "openai", "https://gateway.example.com/openai", "OPENAI_API_KEY", true},
		{"below the allowed gateway", "chatcompletion", "https://gateway.example.com/openai/v1", "OPENAI_API_KEY", true},
		{"beside the allowed gateway", "openai", "https://gateway.example.com/openai-evil", "OPENAI_API_KEY", false},
		{"allowed gateway over http", "openai", "http://gateway.example.com/openai", "OPENAI_API_KEY", false},
		{"allowed loopback port", "chatcompletion", "http://127.0.0.1:9000/v1", "OPENAI_API_KEY", true},
		{"allowed host, default port", "chatcompletion", "http://127.0.0.1/v1", "OPENAI_API_KEY", false},
		{"scripted has no endpoint", "scripted", "", "", true},
		{"a CLI without base_url: its vendor's API", "codex", "", "OPENAI_API_KEY", true},
		{"a CLI on its own login", "claude_code", "", "", true},
		{"a CLI at its vendor's API", "claude_code", "https://api.anthropic.com", "ANTHROPIC_API_KEY", true},
		{"a CLI's own key variable at its vendor's API", "claude_code", "https://api.anthropic.com", "CLAUDE_CODE_API_KEY", true},
		{"a CLI's key elsewhere", "claude_code", "https://collector.example", "ANTHROPIC_API_KEY", false},
		{"a CLI's key at another vendor", "codex", "https://api.anthropic.com", "OPENAI_API_KEY", false},
		{"a CLI on its login at a custom URL", "claude_code", "https://collector.example", "", false},
		{"a CLI at an allowed loopback port", "codex", "http://127.0.0.1:9000/v1", "OPENAI_API_KEY", true},
		{"copilot's key at an unlisted endpoint", "copilot", "https://byok.example/v1", "COPILOT_PROVIDER_API_KEY", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := allow.Check(agent(tc.typ, tc.base), tc.keyEnv)
			if (err == nil) != tc.ok {
				t.Fatalf("Check(%s, %q, %s) = %v, want ok %v", tc.typ, tc.base, tc.keyEnv, err, tc.ok)
			}
			if err != nil && !strings.Contains(err.Error(), "agent a1") {
				t.Errorf("%v does not name the agent", err)
			}
		})
	}
}

func TestAllowlist_RefusalSaysWhatToDo(t *testing.T) {
	var none *Allowlist
	err := none.Check(config.Agent{ID: "evil", Backend: config.Backend{Type: "openai", BaseURL: "https://collector.example/v1"}}, "OPENAI_API_KEY")
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"agent evil", "https://collector.example/v1", "--allow-base-url", AllowBaseURLEnv, "OPENAI_API_KEY"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not mention %q", err, want)
		}
	}
}

func TestNewAllowlist_RefusesWhatIsNotABaseURL(t *testing.T) {
	for _, u := range []string{"gateway.example.com", "https://u:p@gw.example.com", "https://gw.example.com/?x=1", "ftp://gw.example.com", "https://gw.example.com/a/../b"} {
		if _, err := NewAllowlist([]string{u}); err == nil || !strings.Contains(err.Error(), "--allow-base-url") {
			t.Errorf("%q: err = %v, want a refusal naming --allow-base-url", u, err)
		}
	}
	a, err := NewAllowlist(SplitList(" https://a.example/v1, http://127.0.0.1:9000\nhttps://b.example "))
	if err != nil || len(a.URLs()) != 3 {
		t.Errorf("SplitList: %v, %v", a.URLs(), err)
	}
}
