package app

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/joho/godotenv"

	"massgen/internal/config"
)

// LoadDotEnv reads ./.env, then ~/.massgen/.env, and takes from them API keys only
// (DotEnvKey): a cloned repository's ./.env must not send the user's keys to its own server
// (OPENAI_BASE_URL), intercept TLS (HTTPS_PROXY, SSL_CERT_FILE) or change how massgen runs.
// Every other variable a file sets is ignored, named (never its value) in one warning per
// file on warn. Variables already set win, and ./.env wins over the home file: each file only
// fills what is still unset.
func LoadDotEnv(warn io.Writer) error {
	for _, f := range dotEnvFiles() {
		if _, err := os.Stat(f); err != nil {
			continue
		}
		vars, err := godotenv.Read(f)
		if err != nil {
			return fmt.Errorf("read %s: %w (fix the line or remove the file)", f, err)
		}
		var ignored []string
		for _, name := range slices.Sorted(maps.Keys(vars)) {
			if !DotEnvKey(name) {
				ignored = append(ignored, name)
				continue
			}
			if _, set := os.LookupEnv(name); !set {
				if err := os.Setenv(name, vars[name]); err != nil {
					return fmt.Errorf("read %s: set %s: %w", f, name, err)
				}
			}
		}
		if len(ignored) > 0 {
			fmt.Fprintf(warn, "warning: %s sets %s, which massgen ignores: a .env file gives massgen API keys (*_API_KEY) only; "+
				"set endpoints, proxies and TLS settings in your environment (export %s=...) or as base_url in a config you name with --config\n",
				f, strings.Join(ignored, ", "), ignored[0])
		}
	}
	return nil
}

// dotEnvFiles are the files LoadDotEnv reads keys from, in order (./.env is relative to
// massgen's folder); sandboxed commands never see them.
func dotEnvFiles() []string {
	files := []string{".env"}
	if home, err := os.UserHomeDir(); err == nil {
		files = append(files, filepath.Join(home, ".massgen", ".env"))
	}
	return files
}

// DotEnvKey reports whether a .env file may set the variable name: NAME_API_KEY, the form of
// every key variable in the backend tables (APIKeyEnv, hostKeyEnv) and of the keys MCP servers
// and custom tools read through ${NAME_API_KEY}. A key can only authenticate; it cannot
// redirect a request.
func DotEnvKey(name string) bool {
	return strings.HasSuffix(name, "_API_KEY") && len(name) > len("_API_KEY")
}

// hostKeyEnv is MassGen's rule for chatcompletion: the key variable follows the base_url host.
var hostKeyEnv = []struct{ host, env string }{
	{"cerebras.ai", "CEREBRAS_API_KEY"},
	{"together.xyz", "TOGETHER_API_KEY"},
	{"fireworks.ai", "FIREWORKS_API_KEY"},
	{"groq.com", "GROQ_API_KEY"},
	{"nebius", "NEBIUS_API_KEY"},
	{"openrouter.ai", "OPENROUTER_API_KEY"},
	{"z.ai", "ZAI_API_KEY"},
	{"bigmodel.cn", "ZAI_API_KEY"},
	{"moonshot.ai", "MOONSHOT_API_KEY"},
	{"moonshot.cn", "MOONSHOT_API_KEY"},
	{"poe.com", "POE_API_KEY"},
	{"aliyuncs.com", "QWEN_API_KEY"},
	{"deepseek.com", "DEEPSEEK_API_KEY"},
	{"x.ai", "XAI_API_KEY"},
}

// keyEnvs lists the variables that may hold b's key, in the order they are tried.
func keyEnvs(b config.Backend) []string {
	var envs []string
	if b.Type == "chatcompletion" {
		for _, h := range hostKeyEnv {
			if strings.Contains(b.BaseURL, h.host) {
				envs = append(envs, h.env)
			}
		}
	}
	for _, e := range config.BackendTypes[b.Type].APIKeyEnv {
		if !slices.Contains(envs, e) {
			envs = append(envs, e)
		}
	}
	return envs
}

// keyOptional are types that run on the user's own machine and accept requests without a key,
// and the coding-agent CLIs, which use their own login without one.
var keyOptional = map[string]bool{"ollama": true, "lmstudio": true, "vllm": true, "sglang": true, "scripted": true,
	"claude_code": true, "codex": true, "gemini_cli": true, "copilot": true}

// KeyOptional reports whether a backend type runs without an API key (local servers, the
// scripted backend).
func KeyOptional(backendType string) bool { return keyOptional[backendType] }

// APIKey resolves b's key: the config's api_key, else the first variable set. It returns the
// key and where it came from (a variable name, or "api_key in the config"), or an error that
// says which variables to set. The error never contains a key.
func APIKey(b config.Backend, getenv func(string) string) (key, from string, err error) {
	if b.APIKey != "" {
		return b.APIKey, "api_key in the config", nil
	}
	envs := keyEnvs(b)
	for _, e := range envs {
		if v := strings.TrimSpace(getenv(e)); v != "" {
			return v, e, nil
		}
	}
	if keyOptional[b.Type] || len(envs) == 0 {
		return "", "", nil
	}
	return "", envs[0], fmt.Errorf("no API key for backend %s: set %s (in the environment, ./.env or ~/.massgen/.env) or api_key in the config",
		b.Type, strings.Join(envs, " or "))
}

// modelBackends is MassGen's model-to-backend table for --model without --backend, plus the
// families it implies.
var modelBackends = []struct{ prefix, backend string }{
	{"gpt-", "openai"}, {"o1", "openai"}, {"o3", "openai"}, {"o4", "openai"}, {"chatgpt-", "openai"},
	{"claude-", "claude"},
	{"gemini-", "gemini"},
	{"grok-", "grok"},
	{"glm-", "zai"},
	{"deepseek-", "deepseek"},
}

// InferBackend returns the backend type serving model, or "" when it is not known.
func InferBackend(model string) string {
	m := strings.ToLower(model)
	for _, mb := range modelBackends {
		if strings.HasPrefix(m, mb.prefix) {
			return mb.backend
		}
	}
	return ""
}

// defaultModels is the model each provider's agents use in the team built from keys alone.
var defaultModels = []struct{ backend, model, env string }{
	{"openai", "gpt-5-mini", "OPENAI_API_KEY"},
	{"claude", "claude-sonnet-4-5", "ANTHROPIC_API_KEY"},
	{"gemini", "gemini-2.5-flash", "GEMINI_API_KEY"},
	{"gemini", "gemini-2.5-flash", "GOOGLE_API_KEY"},
	{"grok", "grok-4-fast", "XAI_API_KEY"},
}

// DefaultTeam builds the config used when no config is given: one agent per provider whose key
// is set, or three agents of the only one. It returns the YAML it validated, so the user can
// save it, and an error naming the variables when no key is set.
func DefaultTeam(getenv func(string) string) (string, error) {
	type member struct{ backend, model string }
	var team []member
	for _, d := range defaultModels {
		if getenv(d.env) == "" || slices.ContainsFunc(team, func(m member) bool { return m.backend == d.backend }) {
			continue
		}
		team = append(team, member{d.backend, d.model})
	}
	switch len(team) {
	case 0:
		return "", fmt.Errorf("no config and no API key found: set one or more of OPENAI_API_KEY, ANTHROPIC_API_KEY, " +
			"GEMINI_API_KEY, XAI_API_KEY (in the environment, ./.env or ~/.massgen/.env), pass --config FILE, " +
			"or try the offline demo: massgen --config examples/demo.yaml \"What is the capital of France?\"")
	case 1:
		team = []member{team[0], team[0], team[0]}
	}
	var b strings.Builder
	b.WriteString("agents:\n")
	for i, m := range team {
		fmt.Fprintf(&b, "  - id: %s_%d\n    backend:\n      type: %s\n      model: %s\n", m.backend, i+1, m.backend, m.model)
	}
	return b.String(), nil
}
