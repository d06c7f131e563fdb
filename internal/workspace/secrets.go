package workspace

// What an agent may see. One rule, conceal, decides it for a path given to a tool (resolve)
// and for every entry a walk yields (Agent.Walk, copy_file's source tree), so that a tree
// walked from above never shows what a direct read of the same path would refuse.
//
// Concealed are:
//   - massgen's private trees: the run's workspaces root (other agents' workspaces under their
//     real ids, the staging folder), the paths given to Run.HidePath (the logs), and, inside a
//     context path, every folder named .massgen or massgen_logs (massgen's state and the logs
//     of every run, with system prompts and every tool argument);
//   - inside a context path, files that commonly hold secrets (SecretPattern), unless a
//     context path entry names the file itself.
//
// The agent's workspace and the snapshots hold only what agents made, so only the first rule
// applies there, and only to trees reached from elsewhere.

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"massgen/internal/tool"
)

// ErrConcealed: CopyTree's visit leaves the entry out.
var ErrConcealed = errors.New("hidden from agents")

// massgenDir reports whether a folder of this name is massgen's own inside a project: its
// state and logs.
func massgenDir(name string) bool { return name == ".massgen" || name == "massgen_logs" }

// SecretPattern returns the secret-file rule the file at abs matches (".env", "*.pem",
// ".git/config"), or "": inside context paths such files are hidden unless a context path
// names them. Keep the rules tight: a name here is hidden in every context path, so it must
// rarely be an ordinary source file or folder (a folder named "credentials" is a common
// package name; "secrets.go" is code). Templates of .env files are readable: they document
// the variables and hold placeholders.
func SecretPattern(abs string) string {
	name := strings.ToLower(filepath.Base(abs))
	parent := strings.ToLower(filepath.Base(filepath.Dir(abs)))
	ext := filepath.Ext(name)
	switch {
	case secretName(name):
		return name
	case strings.HasPrefix(name, ".env.") && !envTemplate(name):
		return ".env.*"
	case secretExt(ext) && name != ext:
		return "*" + ext
	case secretInDir(parent) == name:
		return parent + "/" + name
	}
	return ""
}

// secretName reports whether a file of this lower-cased name is secret wherever it lies.
func secretName(name string) bool {
	switch name {
	case ".env", ".git-credentials", ".netrc", "_netrc", ".npmrc", ".pypirc", ".pgpass", "id_rsa",
		"id_dsa", "id_ecdsa", "id_ed25519", "credentials.json", ".credentials.json", "secrets.json",
		"secrets.yaml", "secrets.yml", "secrets.toml":
		return true
	}
	return false
}

func secretExt(ext string) bool {
	switch ext {
	case ".pem", ".key", ".p12", ".pfx":
		return true
	}
	return false
}

// secretInDir is the name secret only inside a folder of this name, or "".
func secretInDir(dir string) string {
	switch dir {
	case ".git":
		return "config"
	case ".aws":
		return "credentials"
	case ".docker":
		return "config.json"
	}
	return ""
}

func envTemplate(name string) bool {
	return name == ".env.example" || name == ".env.sample" || name == ".env.template"
}

// view is what one tool call may see, taken once so that a walk asks the same of every entry.
type view struct {
	hidden []string        // massgen's private trees
	named  map[string]bool // files granted by name: context path entries naming the file
}

func (a *Agent) viewOf(grants []*grant) view {
	v := view{hidden: a.run.hiddenPaths(), named: map[string]bool{}}
	for _, g := range grants {
		if g.kind == kindContext && g.file {
			v.named[g.path] = true
		}
	}
	return v
}

// concealment says why a path is hidden.
type concealment struct {
	private bool   // massgen's
	secret  string // the secret pattern matched
}

// conceal returns why the agent may not see abs, which lies in g, or ok=false when it may.
func (v view) conceal(g *grant, abs string) (concealment, bool) {
	for _, h := range v.hidden {
		// A grant inside a hidden tree (the agent's own workspace, the snapshots) is the
		// agent's own way in; the tree is hidden only from grants that contain it.
		if Within(h, abs) && !Within(h, g.path) {
			return concealment{private: true}, true
		}
	}
	if g.kind != kindContext {
		return concealment{}, false
	}
	if rel, err := filepath.Rel(g.path, abs); err == nil && rel != "." {
		for c := range strings.SplitSeq(rel, string(filepath.Separator)) {
			if massgenDir(c) {
				return concealment{private: true}, true
			}
		}
	}
	if p := SecretPattern(abs); p != "" && !v.named[abs] {
		return concealment{secret: p}, true
	}
	return concealment{}, false
}

// refusal is the message for a path the agent gave that is concealed.
func (c concealment) refusal(raw, abs, snapDir string) error {
	if c.private {
		return fmt.Errorf("%s is private to massgen (other agents' workspaces and logs); the agents' shared work is under %s",
			tool.Quote(raw), snapDir)
	}
	return fmt.Errorf("%s may hold secrets (it matches %s), so agents cannot read, copy, search, compare or change it. To allow it, list the file itself under context_paths (- path: %s)",
		tool.Quote(raw), c.secret, abs)
}
