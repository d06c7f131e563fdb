package cli

import (
	"slices"
	"strings"
	"testing"
)

func TestCompanionNames(t *testing.T) {
	for _, tc := range []struct {
		base, exe string
		want      []string
	}{
		{"massgen", "", []string{"massgen-temporal"}},
		{"massgen_v1.2.3_linux_amd64", "", []string{"massgen-temporal_v1.2.3_linux_amd64", "massgen-temporal"}},
		{"massgen.exe", ".exe", []string{"massgen-temporal.exe"}},
		{"massgen_v1_windows_arm64.exe", ".exe", []string{"massgen-temporal_v1_windows_arm64.exe", "massgen-temporal.exe"}},
		{"massgen-temporal", "", []string{"massgen-temporal"}},
		{"cli.test", "", []string{"massgen-temporal"}},
	} {
		if got := companionNames(tc.base, tc.exe); !slices.Equal(got, tc.want) {
			t.Errorf("companionNames(%q) = %q, want %q", tc.base, got, tc.want)
		}
	}
}

// Without massgen-temporal anywhere, the error says what it is and how to build it.
func TestFindCompanion_MissingSaysHowToBuildIt(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := findCompanion()
	if err == nil {
		t.Fatal("found a companion in an empty PATH beside the test binary")
	}
	for _, want := range []string{"massgen-temporal", "Temporal SDK", "go build -o", "./cmd/massgen-temporal"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
