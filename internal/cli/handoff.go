package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"massgen/internal/config"
	"massgen/internal/durable"
	"massgen/internal/engine"
)

// TemporalConn is a connection to a Temporal server: sessions started through it run on
// workers, and a worker takes sessions through it.
type TemporalConn interface {
	// Run runs one session on the workers, streaming its events to o's bus.
	Run(ctx context.Context, cfg *config.Config, o engine.Options) engine.Result
	// Work takes sessions from the connection's task queue until ctx is done, as w says.
	Work(ctx context.Context, w durable.WorkerOptions) error
	// Promote makes v the current version of its deployment and returns the version that was
	// (zero when none was, or v already was).
	Promote(ctx context.Context, v durable.Version) (durable.Version, error)
	// Drain waits until no session runs on v, promoted away from at promoted, reporting each
	// new count of the sessions left.
	Drain(ctx context.Context, v durable.Version, promoted time.Time, report func(running int)) error
	Close()
}

// DialTemporal connects to the Temporal server of t, failing within seconds with an error that
// says what to check.
type DialTemporal func(ctx context.Context, t durable.Target) (TemporalConn, error)

// dialTemporal is this build's Temporal client, set by MainTemporal before anything runs. It
// is nil in massgen, which does not link the Temporal SDK (about 10 MB of the stripped binary and
// its initialisers on every start, paid by commands that never use it): there --temporal and
// worker hand the command line over to massgen-temporal (handOffTemporal).
var dialTemporal DialTemporal

// CompanionName is the build of massgen that links the Temporal SDK (cmd/massgen-temporal).
// Release archives ship it beside massgen.
const CompanionName = "massgen-temporal"

// MainTemporal is Main for massgen-temporal: the same command line, with dial as its
// Temporal client.
func MainTemporal[C TemporalConn](args []string, stdout, stderr io.Writer, dial func(context.Context, durable.Target) (C, error)) int {
	dialTemporal = temporalDialer(dial)
	return Main(args, stdout, stderr)
}

// temporalDialer is dial as a DialTemporal; a failed dial gives a nil interface, never a nil
// *C inside one.
func temporalDialer[C TemporalConn](dial func(context.Context, durable.Target) (C, error)) DialTemporal {
	return func(ctx context.Context, t durable.Target) (TemporalConn, error) {
		c, err := dial(ctx, t)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
}

// needsTemporal says whether cmd, as parsed, talks to a Temporal server: --temporal is set.
func needsTemporal(cmd *cobra.Command) bool {
	f := cmd.Flags().Lookup("temporal")
	return f != nil && f.Value.String() != ""
}

// handOffTemporal runs, before cmd does anything, the whole command line in massgen-temporal
// when cmd needs Temporal and this build has no client. On Unix the process becomes the
// companion (same PID, terminal and signals); elsewhere the companion runs as a child and its
// exit code is this process's.
func handOffTemporal(cmd *cobra.Command, args []string) error {
	if dialTemporal != nil || !needsTemporal(cmd) {
		return nil
	}
	path, err := findCompanion()
	if err != nil {
		return exitf(ExitConfig, "%v", err)
	}
	return execCompanion(path, args)
}

// findCompanion looks for massgen-temporal beside this executable (under this executable's
// own name with "-temporal" after its "massgen", as release folders name them:
// massgen_V_OS_ARCH beside massgen-temporal_V_OS_ARCH; then plainly), then on PATH (never in
// the current folder: exec.LookPath refuses a relative result).
func findCompanion() (string, error) {
	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	self, _ := os.Executable()
	if self != "" {
		if real, err := filepath.EvalSymlinks(self); err == nil {
			self = real
		}
		dir, base := filepath.Split(self)
		for _, name := range companionNames(base, exe) {
			p := filepath.Join(dir, name)
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && (exe != "" || st.Mode()&0o111 != 0) {
				return p, nil
			}
		}
	}
	if p, err := exec.LookPath(CompanionName + exe); err == nil {
		return p, nil
	}
	dir := "."
	if self != "" {
		dir = filepath.Dir(self)
	}
	return "", fmt.Errorf("--temporal and massgen worker run in %s, the build of massgen with the Temporal SDK, "+
		"which is neither in %s nor on PATH: build it beside this massgen with `go build -o %s ./cmd/%s` "+
		"in massgen's repository (release folders ship it)", CompanionName, dir, filepath.Join(dir, CompanionName+exe), CompanionName)
}

// companionNames are the names massgen-temporal may have beside an executable called base.
func companionNames(base, exe string) []string {
	names := []string{CompanionName + exe}
	if rest, ok := strings.CutPrefix(base, "massgen"); ok && rest != exe && !strings.HasPrefix(rest, "-") {
		names = append([]string{CompanionName + rest}, names...)
	}
	return names
}

// execCompanionChild runs the companion as a child with this process's standard streams and
// returns its exit code as an exitError: for systems without exec(2).
func execCompanionChild(path string, args []string) error {
	c := exec.Command(path, args...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := c.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return exitf(ExitOK, "")
	case errors.As(err, &ee):
		return exitf(ee.ExitCode(), "")
	case errors.Is(err, fs.ErrNotExist):
		return exitf(ExitConfig, "run %s: %v", path, err)
	}
	return exitf(ExitExecution, "run %s: %v", path, err)
}
