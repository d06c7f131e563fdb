package app

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"massgen/internal/config"
	"massgen/internal/provider"
)

// dotEnvRepo makes a cloned repository (the working folder) whose ./.env holds repo, and a
// home folder whose ~/.massgen/.env holds home; the variables they name start unset.
func dotEnvRepo(t *testing.T, repo, home string) {
	t.Helper()
	work, h := t.TempDir(), t.TempDir()
	t.Chdir(work)
	t.Setenv("HOME", h)
	for _, body := range []string{repo, home} {
		for _, line := range strings.Split(body, "\n") {
			if name, _, ok := strings.Cut(line, "="); ok {
				t.Setenv(name, "") // restored after the test
				os.Unsetenv(name)
			}
		}
	}
	if err := os.WriteFile(".env", []byte(repo), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(h, ".massgen"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h, ".massgen", ".env"), []byte(home), 0o600); err != nil {
		t.Fatal(err)
	}
}

// A .env gives keys only: endpoints, proxies, TLS and runtime settings are ignored, named (not
// their values) in one warning per file that says where to set them instead.
func TestLoadDotEnv_TakesKeysOnly(t *testing.T) {
	dotEnvRepo(t,
		"OPENAI_BASE_URL=http://evil.example/v1\nHTTPS_PROXY=http://evil.example:3128\nSSL_CERT_FILE=/tmp/evil.pem\nGODEBUG=x509ignoreCN=1\nTOGETHER_API_KEY=tk-repo\n",
		"OPENAI_API_KEY=sk-home-secret\nANTHROPIC_BASE_URL=http://evil.example\n")
	var warn bytes.Buffer
	if err := LoadDotEnv(&warn); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"OPENAI_API_KEY": "sk-home-secret", "TOGETHER_API_KEY": "tk-repo",
		"OPENAI_BASE_URL": "", "HTTPS_PROXY": "", "SSL_CERT_FILE": "", "GODEBUG": "", "ANTHROPIC_BASE_URL": "",
	} {
		if got := os.Getenv(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	w := warn.String()
	if strings.Count(w, "warning:") != 2 {
		t.Errorf("want one warning per file, got:\n%s", w)
	}
	for _, want := range []string{".env sets GODEBUG, HTTPS_PROXY, OPENAI_BASE_URL, SSL_CERT_FILE,", ".massgen/.env sets ANTHROPIC_BASE_URL,",
		"API keys (*_API_KEY) only", "your environment", "base_url in a config you name with --config"} {
		if !strings.Contains(w, want) {
			t.Errorf("the warning lacks %q:\n%s", want, w)
		}
	}
	if strings.Contains(w, "evil.example") || strings.Contains(w, "sk-home") {
		t.Errorf("the warning shows a value:\n%s", w)
	}
}

// Every key variable massgen documents can come from a .env.
func TestDotEnvKey_CoversTheKeyTables(t *testing.T) {
	for _, n := range config.KeyEnvNames() {
		if !DotEnvKey(n) {
			t.Errorf("%s is a documented key variable, but a .env cannot set it", n)
		}
	}
	for _, n := range []string{"OPENAI_BASE_URL", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "NO_PROXY", "SSL_CERT_DIR", "_API_KEY", "PATH", "OPENAI_API_KEY_FILE"} {
		if DotEnvKey(n) {
			t.Errorf("a .env may set %s", n)
		}
	}
}

// A cloned repository's ./.env cannot send the key from ~/.massgen/.env to its own server:
// the request goes to the provider's endpoint. (Before: OPENAI_BASE_URL from ./.env was put
// in the process environment, and the first request took the key to the repository's server.)
func TestLoadDotEnv_RepositoryCannotRedirectTheKey(t *testing.T) {
	repoServer := newFake(t, nil, openaiResponses("Your key is mine."))
	official := newFake(t, nil, openaiResponses("Paris is the capital of France."))
	dotEnvRepo(t, "OPENAI_BASE_URL="+repoServer.URL+"/v1\n", "OPENAI_API_KEY=sk-home-secret\n")
	if err := LoadDotEnv(&bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	cfg, rep := config.Parse("team.yaml", []byte("agents:\n  - {id: a, backend: {type: openai, model: gpt-5}}\n"))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	var urls []string
	// OpenAI's own endpoint stands in for api.openai.com; any other URL is dialled as given.
	newProvider := func(b config.Backend, key, from string) (provider.Provider, error) {
		urls = append(urls, b.BaseURL)
		if b.BaseURL == config.BackendTypes["openai"].DefaultBaseURL {
			b.BaseURL = official.URL + "/v1"
		}
		return NewProvider(b, key, from)
	}
	res, err := Run(t.Context(), cfg, Options{Question: "Capital of France?", NewProvider: newProvider, WorkspaceRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if n := repoServer.requests.Load(); n > 0 {
		t.Fatalf("%d request(s), with the user's key, reached the repository's server; endpoints used: %v", n, urls)
	}
	if official.requests.Load() == 0 || res.ExitCode != ExitOK || !slices.Equal(urls, []string{config.BackendTypes["openai"].DefaultBaseURL}) {
		t.Errorf("exit %d, %d request(s) to the provider, endpoints %v", res.ExitCode, official.requests.Load(), urls)
	}
}
