package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"massgen/internal/durable"
)

// addVersionFlags adds --deployment and --build-id, the Worker Deployment Version of a worker
// (or the one to promote).
func addVersionFlags(f *pflag.FlagSet, v *durable.Version, usage string) {
	f.StringVar(&v.Deployment, "deployment", "", usage)
	f.StringVar(&v.BuildID, "build-id", "", "build `ID` of the version in --deployment (default: massgen's version and a hash of this binary)")
}

// workerVersion is the version the flags name: none without --deployment, and this binary's
// build id when --build-id is left out.
func workerVersion(v durable.Version) (durable.Version, error) {
	if v.Deployment == "" {
		if v.BuildID != "" {
			return v, exitf(ExitConfig, "--build-id %q needs --deployment NAME, the Worker Deployment it is a version of", v.BuildID)
		}
		return v, nil
	}
	if v.BuildID == "" {
		id, err := defaultBuildID()
		if err != nil {
			return v, exitf(ExitConfig, "%v", err)
		}
		v.BuildID = id
	}
	if err := v.Check(); err != nil {
		return v, exitf(ExitConfig, "%v", err)
	}
	return v, nil
}

// defaultBuildID is massgen's version and the first 12 hex digits of the SHA-256 of this
// executable: the workflow code a worker runs is in this binary, so two builds that differ
// in anything are two versions, and the same release on every machine is one.
func defaultBuildID() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find this binary to name its build id (give --build-id): %w", err)
	}
	f, err := os.Open(exe)
	if err != nil {
		return "", fmt.Errorf("read this binary to name its build id (give --build-id): %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s to name its build id (give --build-id): %w", exe, err)
	}
	return version() + "-" + hex.EncodeToString(h.Sum(nil))[:12], nil
}

func newPromote(stdout, stderr io.Writer) *cobra.Command {
	var addr, namespace string
	var ver durable.Version
	var wait bool
	cmd := &cobra.Command{
		Use:   "promote --temporal HOST:PORT --deployment NAME [--build-id ID] [--wait]",
		Short: "Send new sessions to a version of the workers; running sessions stay on theirs",
		Long: `promote makes a version of a Worker Deployment (workers started with massgen worker
--deployment NAME --build-id ID) the current one: new sessions go to its workers, while every
running session stays on the version that started it. Start the new version's workers first;
promote waits up to 30 s for them to reach the server.

It prints the version that was current. With --wait it then waits until no session runs on
that version any more (a session ends, or its run fails), printing how many are left: then
that version's workers can stop without losing anything. Ctrl-C stops the waiting (exit 4);
the new version stays current.

Without --build-id it promotes this binary's default build id: run it with the new massgen,
or give the id the new workers printed.

  massgen worker --temporal 127.0.0.1:7233 --deployment massgen --build-id v2 &
  massgen worker promote --temporal 127.0.0.1:7233 --deployment massgen --build-id v2 --wait
  # then stop the workers of the version it named`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if addr == "" {
				return exitf(ExitConfig, "promote needs --temporal HOST:PORT, the Temporal server of the workers")
			}
			if ver.Deployment == "" {
				return exitf(ExitConfig, "promote needs --deployment NAME, the Worker Deployment the workers were started with")
			}
			v, err := workerVersion(ver)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			c, err := dialTemporal(ctx, durable.Target{Address: addr, Namespace: namespace})
			if err != nil {
				return exitf(ExitConfig, "%v", err)
			}
			defer c.Close()
			prev, err := c.Promote(ctx, v)
			if err != nil {
				if ctx.Err() != nil {
					return exitf(ExitInterrupted, "interrupted before %s became current", v)
				}
				return exitf(ExitExecution, "%v", err)
			}
			promoted := time.Now()
			switch {
			case prev.IsZero():
				fmt.Fprintf(stdout, "%s is current: new sessions go to its workers\n", v)
				return nil
			case !wait:
				fmt.Fprintf(stdout, "%s is current: new sessions go to its workers; sessions on %s stay there (--wait waits until they end, before its workers stop)\n", v, prev)
				return nil
			}
			fmt.Fprintf(stdout, "%s is current: new sessions go to its workers; waiting for the sessions on %s to end\n", v, prev)
			err = c.Drain(ctx, prev, promoted, func(n int) {
				fmt.Fprintf(stderr, "massgen worker promote: %d session(s) running on %s\n", n, prev)
			})
			switch {
			case ctx.Err() != nil:
				return exitf(ExitInterrupted, "stopped waiting: sessions may still run on %s", prev)
			case err != nil:
				return exitf(ExitExecution, "%v", err)
			}
			fmt.Fprintf(stdout, "no session runs on %s any more: its workers can stop\n", prev)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "temporal", "", "the Temporal server of the workers, `HOST:PORT`")
	f.StringVar(&namespace, "temporal-namespace", durable.DefaultNamespace, "Temporal `NAMESPACE` of the workers")
	addVersionFlags(f, &ver, "the Worker Deployment `NAME` the workers were started with")
	f.BoolVar(&wait, "wait", false, "then wait until no session runs on the version that was current")
	return cmd
}
