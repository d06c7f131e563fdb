package command

import (
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"massgen/internal/childproc"
	"massgen/internal/workspace"
)

// keyProject is massgen run from a project outside home, as in a container's /work or a CI
// checkout: the project's .env (which massgen loaded), a config holding an api_key elsewhere,
// ~/.massgen in the user's home, secret files in the project and in the agent's workspace.
type keyProject struct {
	f                      *fixture
	home, project, config  string
	secrets, shown, hidden []string // file contents: never to show; to show; paths to hide
}

func newKeyProject(t *testing.T) *keyProject {
	base := outsideTmp(t)
	k := &keyProject{f: newFixture(t), home: filepath.Join(base, "home"), project: filepath.Join(base, "project"),
		config: filepath.Join(base, "etc", "team.yaml")}
	files := map[string]string{
		filepath.Join(k.project, ".env"):                      "OPENAI_API_KEY=sk-dotenv-1111",
		filepath.Join(k.project, ".git-credentials"):          "https://u:ghp-cred-2222@github.com",
		filepath.Join(k.project, "deploy", "server.key"):      "KEY-3333",
		filepath.Join(k.project, ".massgen", "sessions", "s"): "session-4444",
		k.config: "agents:\n  - backend: {type: openai, api_key: sk-config-5555}\n",
		filepath.Join(k.home, ".massgen", ".env"):                "ANTHROPIC_API_KEY=sk-home-6666",
		filepath.Join(k.home, ".massgen", "servers", "s.token"):  "serve-token-7777",
		filepath.Join(k.f.alice.Dir(), ".env"):                   "WS_KEY=sk-ws-8888",
		filepath.Join(k.f.alice.Dir(), "nested", "secrets.json"): `{"k": "sk-ws-9999"}`,
	}
	for p, content := range files {
		writeFile(t, p, content)
		k.hidden = append(k.hidden, p)
		k.secrets = append(k.secrets, content)
	}
	writeFile(t, filepath.Join(k.project, "main.go"), "package main // shown")
	writeFile(t, filepath.Join(k.home, "notes.txt"), "home notes shown")
	k.shown = []string{"package main // shown"}
	t.Chdir(k.project)
	return k
}

// options are the sandbox options of mode, told what to hide as the app tells them.
func (k *keyProject) options(mode string) *SandboxOptions {
	return &SandboxOptions{ReadMode: mode, Hide: []string{k.config, filepath.Join(k.project, ".env")}}
}

// Inside the sandbox, massgen's own secrets are not readable in any form, in every read mode:
// the .env it loaded from a project outside home, a config holding an api_key, ~/.massgen
// (even where "open" shows home), secret files in the project and in the workspace.
func TestSandbox_HidesMassgenSecrets(t *testing.T) {
	needSandbox(t)
	k := newKeyProject(t)
	var script strings.Builder
	for _, p := range append(k.hidden, filepath.Join(k.project, "main.go"), filepath.Join(k.home, "notes.txt")) {
		fmt.Fprintf(&script, "cat %s; base64 -w0 %s; ", p, p)
	}
	script.WriteString("echo done")
	list := "ls -aR " + filepath.Join(k.home, ".massgen") + " " + filepath.Join(k.project, ".massgen")
	for _, c := range []struct {
		mode  string
		shown []string
	}{
		{ReadConfined, k.shown},
		{ReadOpen, append(k.shown, "home notes shown")},
	} {
		t.Run(c.mode, func(t *testing.T) {
			env := []string{"PATH=/usr/bin:/bin", "HOME=" + k.home}
			opts := Options{Env: env, Sandbox: k.options(c.mode)}
			cmd := mustFind(t, Tools(k.f.alice, opts), "execute_command")
			res := run(t, cmd, map[string]any{"command": script.String(), "timeout_seconds": 20})
			t.Log(res.Content)
			for _, s := range append(c.shown, "done") {
				if !strings.Contains(res.Content, s) {
					t.Errorf("%q is not shown: the test reads nothing", s)
				}
			}
			for _, s := range k.secrets {
				if strings.Contains(res.Content, s) || strings.Contains(res.Content, base64.StdEncoding.EncodeToString([]byte(s))) {
					t.Errorf("%q is read", s)
				}
			}
			if res := run(t, cmd, map[string]any{"command": list}); strings.Contains(res.Content, "sessions") || strings.Contains(res.Content, "servers") {
				t.Errorf("massgen's folders are listed:\n%s", res.Content)
			}
		})
	}
}

// A coding-agent CLI's sandbox hides the same, even below the program folders it shows.
func TestCLISandbox_HidesMassgenSecrets(t *testing.T) {
	k := newKeyProject(t)
	for _, mode := range []string{ReadConfined, ReadOpen} {
		sb, err := CLISandbox(k.f.alice, k.options(mode), k.home, filepath.Join(t.TempDir(), "cli"), []string{k.project, filepath.Dir(k.config)})
		if err != nil {
			t.Fatal(err)
		}
		all := append(append([]childproc.Mount(nil), sb.Base...), sb.Mounts...)
		for _, p := range k.hidden {
			if kind, ok := coveredBy(all, p); !ok || kind != childproc.Hidden {
				t.Errorf("%s: %s is shown (%v, %v)", mode, p, kind, ok)
			}
		}
		if kind, ok := coveredBy(all, filepath.Join(k.project, "main.go")); !ok || kind != childproc.ReadOnly {
			t.Errorf("%s: the project's main.go is not shown read-only (%v, %v)", mode, kind, ok)
		}
	}
}

// coveredBy is the kind of the last of mounts at or above p: what the sandbox shows there.
func coveredBy(mounts []childproc.Mount, p string) (childproc.MountKind, bool) {
	for i := len(mounts) - 1; i >= 0; i-- {
		if workspace.Within(mounts[i].Dst, p) {
			return mounts[i].Kind, true
		}
	}
	return 0, false
}
