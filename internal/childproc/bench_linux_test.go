package childproc

import (
	"os/exec"
	"testing"
)

// go test -bench . ./internal/childproc: what the init costs per command, against running sh
// directly as execute_command used to.
func BenchmarkStart(b *testing.B) {
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			if m.fallback {
				b.Cleanup(DisableNamespaces())
			}
			for b.Loop() {
				c := Command(nil, m.mode, "sh", "-c", "true")
				if err := c.Start(); err != nil {
					b.Fatal(err)
				}
				if st := c.Wait(); !st.Success() {
					b.Fatal(st)
				}
			}
		})
	}
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("sh", "-c", "true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
