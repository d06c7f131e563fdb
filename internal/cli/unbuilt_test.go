package cli

import (
	"io"
	"strings"
	"testing"
)

// A flag or subcommand massgen builds is never also in the refused tables: its entry would be
// dead, or would shadow the real one.
func TestUnbuilt_NoneIsBuilt(t *testing.T) {
	root := newRoot(strings.NewReader(""), io.Discard, io.Discard) // without addUnbuiltFlags
	for _, u := range unbuiltFlags {
		if root.Flags().Lookup(u.name) != nil || root.PersistentFlags().Lookup(u.name) != nil {
			t.Errorf("--%s is built, yet unbuiltFlags refuses it", u.name)
		}
	}
	for _, c := range missingSubcommands {
		n := 0
		for _, sub := range root.Commands() {
			if sub.Name() == c.name || sub.HasAlias(c.name) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("massgen %s: %d commands answer to it, want only its refusal", c.name, n)
		}
	}
}

// MassGen's serve --reload is refused by name, not as cobra's unknown flag, and before
// anything is served.
func TestServe_ReloadIsRefusedByName(t *testing.T) {
	t.Chdir(t.TempDir())
	code, out, errOut := execute(t, t.Context(), "serve", "--reload", "--port", "0")
	if code != ExitConfig || !strings.Contains(errOut, "--reload") || !strings.Contains(errOut, "not supported yet") ||
		strings.Contains(errOut, "unknown flag") || strings.Contains(out, "http://") {
		t.Errorf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}
