package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVCSSuffix(t *testing.T) {
	for _, tc := range []struct {
		settings []debug.BuildSetting
		want     string
	}{
		{nil, ""},
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}}, "+0123456789ab"},
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"}}, "+abc.dirty"},
		{[]debug.BuildSetting{{Key: "vcs.modified", Value: "true"}}, ""},
	} {
		if got := vcsSuffix(tc.settings); got != tc.want {
			t.Errorf("vcsSuffix(%v) = %q, want %q", tc.settings, got, tc.want)
		}
	}
}

// TestMan: the page covers every visible command and none of the refused MassGen ones, and
// SOURCE_DATE_EPOCH fixes its date.
func TestMan(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1767312000")
	var out, errb bytes.Buffer
	if code := Execute(t.Context(), []string{"man"}, strings.NewReader(""), &out, &errb); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	page := out.String()
	for _, want := range []string{`.TH "MASSGEN" "1" "Jan 2026"`, "massgen-serve(1)", "massgen-eval(1)", `\fB--config\fP`, "Exit codes"} {
		if !strings.Contains(page, want) {
			t.Errorf("man page lacks %q", want)
		}
	}
	if strings.Contains(page, "not supported yet") {
		t.Error("man page lists a refused MassGen subcommand")
	}

	dir := filepath.Join(t.TempDir(), "man1")
	if code := Execute(t.Context(), []string{"man", "--dir", dir}, strings.NewReader(""), &out, &errb); code != ExitOK {
		t.Fatalf("--dir: exit %d: %s", code, errb.String())
	}
	for _, name := range []string{"massgen.1", "massgen-serve.1", "massgen-logs-summary.1", "massgen-completion-bash.1"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("man --dir: %v", err)
		}
	}

	t.Setenv("SOURCE_DATE_EPOCH", "yesterday")
	errb.Reset()
	if code := Execute(t.Context(), []string{"man"}, strings.NewReader(""), &out, &errb); code != ExitConfig || !strings.Contains(errb.String(), "SOURCE_DATE_EPOCH") {
		t.Errorf("bad SOURCE_DATE_EPOCH: exit %d, %q", code, errb.String())
	}
}
