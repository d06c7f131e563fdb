// Package trust decides whether a config massgen found by itself (a project's
// .massgen/config.yaml, the config a log folder names) may run what it would start: it lists
// what a config can start or reach (Reasons) and remembers the configs a person accepted,
// by absolute path and content hash (Store), as direnv and editors do.
package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"massgen/internal/private"
)

// Store is the file of accepted configs: ~/.massgen/trusted_configs.json, 0600. A config is
// trusted while the file maps its absolute path to the sha256 of its content, so an edit asks
// again. The zero Store trusts nothing and remembers nothing.
type Store struct {
	// Path is the store's file; "" disables it.
	Path string
}

// DefaultStore is the store under the user's home folder, or the zero Store without one.
func DefaultStore() Store {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return Store{}
	}
	return Store{Path: filepath.Join(home, ".massgen", "trusted_configs.json")}
}

// storeFile is the store's content.
type storeFile struct {
	// Configs maps an absolute path to the hex sha256 of the content accepted.
	Configs map[string]string `json:"configs"`
}

// Sum is the hash a store keeps for content.
func Sum(content []byte) string {
	h := sha256.Sum256(content)
	return hex.EncodeToString(h[:])
}

// Trusted reports whether content at path was accepted as it is now. An unreadable or
// damaged store trusts nothing.
func (s Store) Trusted(path string, content []byte) bool {
	abs, err := filepath.Abs(path)
	if err != nil || s.Path == "" {
		return false
	}
	f, err := s.read()
	return err == nil && f.Configs[abs] == Sum(content)
}

// Remember records content at path as accepted, replacing what was accepted there before.
// Concurrent writers do not corrupt the file (each renames a whole new one into place); one
// may lose the other's entry, which then asks again.
func (s Store) Remember(path string, content []byte) error {
	if s.Path == "" {
		return errors.New("trust: no home folder to remember accepted configs in")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	f, err := s.read()
	if err != nil {
		f = storeFile{} // a damaged store is replaced rather than blocking every run
	}
	if f.Configs == nil {
		f.Configs = map[string]string{}
	}
	f.Configs[abs] = Sum(content)
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	dir := filepath.Dir(s.Path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	if err := private.WriteFileAtomic(s.Path, append(data, '\n')); err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	return nil
}

// maxStore bounds what is read of the store: a few thousand configs.
const maxStore = 4 << 20

func (s Store) read() (storeFile, error) {
	var f storeFile
	data, err := os.ReadFile(s.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return f, nil
	case err != nil:
		return f, err
	case len(data) > maxStore:
		return f, fmt.Errorf("trust: %s is larger than %d MiB", s.Path, maxStore>>20)
	}
	return f, json.Unmarshal(data, &f)
}
