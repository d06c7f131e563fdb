package customtool

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// The worker and the massgen package shim it puts first on sys.path, so that tool files
// written for MassGen (from massgen.tool._result import ExecutionResult) import without MassGen.
//
//go:embed python/worker.py all:python/massgen
var pythonFiles embed.FS

// writeWorker writes the embedded files to a new private folder and returns it.
func writeWorker() (string, error) {
	dir, err := os.MkdirTemp("", "massgen-custom-tools-")
	if err != nil {
		return "", fmt.Errorf("cannot create a folder for the custom tool worker: %w", err)
	}
	err = fs.WalkDir(pythonFiles, "python", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("python", path)
		dst := filepath.Join(dir, rel)
		if d.IsDir() && d.Name() == "__pycache__" {
			return fs.SkipDir // left by running the files in place; Python makes its own
		}
		if d.IsDir() {
			return os.MkdirAll(dst, 0o700)
		}
		data, err := pythonFiles.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o600)
	})
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", fmt.Errorf("cannot write the custom tool worker: %w", err)
	}
	return dir, nil
}
