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
// every key variable in the backend table (config.KeyEnvNames) and of the keys MCP servers
// and custom tools read through ${NAME_API_KEY}. A key can only authenticate; it cannot
// redirect a request.
func DotEnvKey(name string) bool {
	return strings.HasSuffix(name, "_API_KEY") && len(name) > len("_API_KEY")
}

// APIKey resolves b's key: the config's api_key, else the first variable set. It returns the
// key and where it came from (a variable name, or "api_key in the config"), or an error that
// says which variables to set. The error never contains a key.
func APIKey(b config.Backend, getenv func(string) string) (key, from string, err error) {
	if b.APIKey != "" {
		return b.APIKey, "api_key in the config", nil
	}
	envs := config.KeyEnvs(b.Type, b.BaseURL)
	for _, e := range envs {
		if v := strings.TrimSpace(getenv(e)); v != "" {
			return v, e, nil
		}
	}
	if config.BackendTypes[b.Type].KeyOptional || len(envs) == 0 {
		return "", "", nil
	}
	return "", envs[0], fmt.Errorf("no API key for backend %s: set %s (in the environment, ./.env or ~/.massgen/.env) or api_key in the config",
		b.Type, strings.Join(envs, " or "))
}

// DefaultTeam builds the config used when no config is given: one agent per provider whose key
// is set, or three agents of the only one. It returns the YAML it validated, so the user can
// save it, and an error naming the variables when no key is set.
func DefaultTeam(getenv func(string) string) (string, error) {
	var team, envs []string
	for _, typ := range config.TeamTypes {
		keys := config.BackendTypes[typ].APIKeyEnv
		envs = append(envs, keys...)
		if slices.ContainsFunc(keys, func(e string) bool { return getenv(e) != "" }) {
			team = append(team, typ)
		}
	}
	switch len(team) {
	case 0:
		return "", fmt.Errorf("no config and no API key found: set one or more of %s (in the environment, ./.env or ~/.massgen/.env), pass --config FILE, "+
			"or try the offline demo: massgen --config @examples/demo \"What is the capital of France?\"", strings.Join(envs, ", "))
	case 1:
		team = []string{team[0], team[0], team[0]}
	}
	var b strings.Builder
	b.WriteString("agents:\n")
	for i, typ := range team {
		fmt.Fprintf(&b, "  - id: %s_%d\n    backend:\n      type: %s\n      model: %s\n", typ, i+1, typ, config.BackendTypes[typ].DefaultModel)
	}
	return b.String(), nil
}
