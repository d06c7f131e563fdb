package cli

import (
	"fmt"
	"io"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Version is set by release builds (scripts/release.sh) with
// -ldflags "-X massgen/internal/cli.Version=v1.2.3"; a plain `go build` keeps devVersion.
var Version = devVersion

const devVersion = "0.1.0-dev"

// version is what --version prints: the release's own string, or for a plain `go build` of a
// git checkout the commit it was built from, so that a bug report names the code it ran.
func version() string {
	if Version != devVersion {
		return Version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return Version
	}
	return devVersion + vcsSuffix(info.Settings)
}

// vcsSuffix is "+<12-hex commit>[.dirty]" from the build's VCS stamp, or "" without one (go
// run, go test, -buildvcs=false).
func vcsSuffix(settings []debug.BuildSetting) string {
	var rev, dirty string
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = ".dirty"
			}
		}
	}
	if rev == "" {
		return ""
	}
	return "+" + rev[:min(12, len(rev))] + dirty
}

// newVersion is `massgen version`, the same as --version.
func newVersion(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintf(stdout, "massgen %s\n", version())
			return nil
		},
	}
}
