package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"massgen/internal/childproc"
	"massgen/internal/lazy"
)

// gitTimeout bounds one git command; gitOutput what massgen reads of its output.
var (
	gitTimeout = 2 * time.Minute
	gitOutput  = int64(64 << 20)
)

// The repository is the user's, and its configuration may come from anyone who wrote the
// folder (a cloned project, an agent of an earlier run): git must never run a program it
// names. Command-line configuration outranks every file, so each command carries overrides
// for the settings that start programs during the commands run here (hooks, fsmonitor,
// external diffs, pagers, transports for lazy fetches), and one for every filter, diff or
// merge driver the repository's configuration defines (driverKey), whose commands git would
// otherwise run on checkout, status and diff. The environment is an allow-list without the
// user's global or system configuration.
var staticOverrides = []string{
	"core.hooksPath=/dev/null",
	"core.fsmonitor=false",
	"core.untrackedCache=false",
	"core.pager=cat",
	"core.editor=false",
	"core.sshCommand=false",
	"core.askPass=",
	"diff.external=",
	"protocol.allow=never",
	"commit.gpgSign=false",
	"tag.gpgSign=false",
	"credential.helper=",
}

// driverKey matches the configuration entries naming a program for an attribute driver.
var driverKey = lazy.Regexp(`^(filter|diff|merge)\.(.+)\.(clean|smudge|process|textconv|command|driver|required)$`)

// git runs the git binary, confined, with the overrides of the repository it works in.
type git struct {
	mu        sync.Mutex
	overrides map[string][]string // by the directory git ran in
}

// env is the whole environment git gets: nothing of massgen's (keys live there).
func gitEnv() []string {
	env := []string{
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_ATTR_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "GIT_NO_LAZY_FETCH=1", "GIT_OPTIONAL_LOCKS=0",
		"HOME=/nonexistent", "LC_ALL=C",
	}
	if p := os.Getenv("PATH"); p != "" {
		env = append(env, "PATH="+p)
	}
	return env
}

// run runs git in dir with args and returns its standard output.
func (g *git) run(ctx context.Context, dir string, args ...string) ([]byte, error) {
	ov, err := g.overridesFor(ctx, dir)
	if err != nil {
		return nil, err
	}
	return g.raw(ctx, dir, append(ov, args...)...)
}

// overridesFor is the -c list for a command in dir: the static overrides and one empty
// command for every driver the configuration seen from dir defines (includes and conditional
// includes resolved there).
func (g *git) overridesFor(ctx context.Context, dir string) ([]string, error) {
	g.mu.Lock()
	ov, ok := g.overrides[dir]
	g.mu.Unlock()
	if ok {
		return ov, nil
	}
	var out []string
	for _, s := range staticOverrides {
		out = append(out, "-c", s)
	}
	listing, err := g.raw(ctx, dir, append(out, "config", "--list", "--includes", "-z")...)
	if err != nil {
		return nil, err
	}
	for entry := range strings.SplitSeq(string(listing), "\x00") {
		key, _, _ := strings.Cut(entry, "\n")
		m := driverKey().FindStringSubmatch(key)
		if m == nil {
			continue
		}
		if strings.ContainsAny(m[2], "=\n") {
			return nil, fmt.Errorf("the git configuration of %s names a %s driver %q that cannot be switched off; remove it, or use write_mode: isolated", dir, m[1], m[2])
		}
		val := ""
		if m[3] == "required" {
			val = "false"
		}
		out = append(out, "-c", m[1]+"."+m[2]+"."+m[3]+"="+val)
	}
	g.mu.Lock()
	if g.overrides == nil {
		g.overrides = map[string][]string{}
	}
	g.overrides[dir] = out
	g.mu.Unlock()
	return out, nil
}

// raw runs git with exactly args.
func (g *git) raw(ctx context.Context, dir string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := childproc.Command(ctx, childproc.Confined, "git", append([]string{"--no-pager"}, args...)...)
	cmd.Dir, cmd.Env = dir, gitEnv()
	pp, err := cmd.StartPiped(false)
	if err != nil {
		return nil, fmt.Errorf("cannot start git (install git, or use write_mode: isolated): %w", err)
	}
	errc := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(pp.Stderr, 4<<10))
		_, _ = io.Copy(io.Discard, pp.Stderr)
		errc <- b
	}()
	out, readErr := io.ReadAll(io.LimitReader(pp.Stdout, gitOutput+1))
	tooLarge := int64(len(out)) > gitOutput
	if tooLarge || readErr != nil {
		cmd.Kill()
	}
	_ = pp.Stdout.Close()
	st := cmd.Wait()
	msg := strings.TrimSpace(string(<-errc))
	_ = pp.Stderr.Close()
	verb := firstVerb(args)
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("git %s in %s was cut off: %w", verb, dir, context.Cause(ctx))
	case tooLarge:
		return nil, fmt.Errorf("git %s in %s wrote more than %d MiB", verb, dir, gitOutput>>20)
	case readErr != nil:
		return nil, fmt.Errorf("git %s in %s: %w", verb, dir, readErr)
	case !st.Success():
		if msg == "" {
			msg = st.String()
		}
		return nil, &gitError{verb: verb, dir: dir, msg: msg}
	}
	return out, nil
}

// gitError is a git command that ran and failed.
type gitError struct{ verb, dir, msg string }

func (e *gitError) Error() string { return fmt.Sprintf("git %s in %s: %s", e.verb, e.dir, e.msg) }

func isGitError(err error) bool {
	var ge *gitError
	return errors.As(err, &ge)
}

// firstVerb is the git subcommand in args, past the -c options.
func firstVerb(args []string) string {
	for i := 0; i < len(args); i++ {
		if args[i] == "-c" {
			i++
			continue
		}
		return args[i]
	}
	return ""
}

// lines splits NUL-separated output.
func nulList(b []byte) []string {
	var out []string
	for p := range bytes.SplitSeq(b, []byte{0}) {
		if len(p) > 0 {
			out = append(out, string(p))
		}
	}
	return out
}
