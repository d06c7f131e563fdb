package cliagent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"massgen/internal/childproc"
	"massgen/internal/lazy"
)

// versionWait bounds `CLI --version`; Gemini CLI takes seconds to start on a busy machine.
const versionWait = 60 * time.Second

// maxVersionOutput caps what is read of `--version`.
const maxVersionOutput = 4 << 10

var semver = lazy.Regexp(`(\d+)\.(\d+)\.(\d+)`)

// versions caches each CLI binary's check for the life of the process (one massgen run): the
// binary does not change under a run, and asking costs a CLI start.
var versions sync.Map // path -> *versionCheck

type versionCheck struct {
	once sync.Once
	err  error
}

// checkVersion refuses a CLI older than the version massgen was tested with, saying which one
// is needed. The version comes from the npm package the binary belongs to when there is one
// (no process start), else from `path --version`.
func checkVersion(path string, fl flavour, env []string) error {
	v, _ := versions.LoadOrStore(path, &versionCheck{})
	c := v.(*versionCheck)
	c.once.Do(func() { c.err = versionOf(path, fl, env) })
	return c.err
}

func versionOf(path string, fl flavour, env []string) error {
	have := packageVersion(path, fl.npm)
	if have == "" {
		ctx, cancel := context.WithTimeout(context.Background(), versionWait)
		defer cancel()
		var out bytes.Buffer
		cmd := childproc.Command(ctx, childproc.Tree, path, "--version")
		cmd.Env = env
		w := &limited{w: &out, n: maxVersionOutput} // one writer: os/exec serialises its writes
		cmd.Stdout, cmd.Stderr = w, w
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("%s --version: %w", path, err)
		}
		st := cmd.Wait()
		have = semver().FindString(out.String())
		if have == "" {
			return &fatalError{fmt.Sprintf("%s --version (%s) did not print a version: %q; massgen needs %s %s or later",
				path, st, out.String(), fl.npm, fl.minVersion)}
		}
	}
	if older(have, fl.minVersion) {
		return &fatalError{fmt.Sprintf("%s is version %s; massgen needs %s %s or later: run `npm install -g %s@%s`",
			path, have, fl.npm, fl.minVersion, fl.npm, fl.minVersion)}
	}
	return nil
}

// packageVersion is the version of npm package name that binary path belongs to, "" when it is
// not one (a native install, a wrapper script).
func packageVersion(path, name string) string {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return ""
	}
	for dir := filepath.Dir(real); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		raw, err := os.ReadFile(filepath.Join(dir, "package.json"))
		if err != nil {
			continue
		}
		var p struct{ Name, Version string }
		if json.Unmarshal(raw, &p) == nil && p.Name == name {
			return semver().FindString(p.Version)
		}
		return "" // the nearest package.json is another package's
	}
	return ""
}

// older reports whether version have is below want (both x.y.z).
func older(have, want string) bool {
	h, w := semver().FindStringSubmatch(have), semver().FindStringSubmatch(want)
	if h == nil || w == nil {
		return false
	}
	for k := 1; k <= 3; k++ {
		a, _ := strconv.Atoi(h[k])
		b, _ := strconv.Atoi(w[k])
		if a != b {
			return a < b
		}
	}
	return false
}

// limited writes at most n bytes to w and drops the rest.
type limited struct {
	w interface{ Write([]byte) (int, error) }
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.n -= k
		_, _ = l.w.Write(p[:k])
	}
	return len(p), nil
}
