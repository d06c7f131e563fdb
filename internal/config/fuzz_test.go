package config

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks that Parse never panics and that every issue is well formed.
func FuzzParse(f *testing.F) {
	paths, err := filepath.Glob(filepath.Join("testdata", "*"))
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range paths {
		switch filepath.Ext(p) {
		case ".yaml", ".yml", ".json":
			data, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Add([]byte("a: &a [*a]\nb: *a\n"))
	f.Add([]byte("agents:\n  - id: x\n    backend:\n      <<: [*x]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, rep := Parse("fuzz.yaml", data)
		if rep.OK() != (cfg != nil) {
			t.Fatalf("OK()=%v but cfg=%v", rep.OK(), cfg)
		}
		for _, is := range append(rep.Errors, rep.Warnings...) {
			if is.Message == "" {
				t.Fatalf("issue without message: %+v", is)
			}
			if is.Line < 0 || is.Column < 0 {
				t.Fatalf("bad position: %+v", is)
			}
		}
		_ = rep.Text()
		_ = rep.JSON()
	})
}
