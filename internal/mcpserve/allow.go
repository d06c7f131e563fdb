package mcpserve

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// allowedRoots resolves the folders clients may share: each given one, or dir alone without
// any. Symlinks are resolved once here, so that a path a client names is compared with the
// real folders.
func allowedRoots(given []string, dir string) ([]string, error) {
	if len(given) == 0 {
		given = []string{dir}
	}
	var out []string
	for _, g := range given {
		real, err := realDir(g, dir)
		if err != nil {
			return nil, fmt.Errorf("mcpserve: allowed path %s: %w", g, err)
		}
		if !slices.Contains(out, real) {
			out = append(out, real)
		}
	}
	return out, nil
}

// realDir is the folder p (relative to dir) with its symlinks resolved.
func realDir(p, dir string) (string, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	info, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !info.IsDir() {
		return "", errors.New("not a folder: name the folder whose contents clients may share")
	}
	return real, nil
}

// allows reports whether real, a path with its symlinks resolved, lies in an allowed folder.
func (s *Server) allows(real string) bool {
	return slices.ContainsFunc(s.allowed, func(root string) bool {
		rel, err := filepath.Rel(root, real)
		return err == nil && filepath.IsLocal(rel)
	})
}

// outsideError refuses the paths outside the allowed folders, saying which those are and how
// the server's owner adds one.
func (s *Server) outsideError(bad []string) error {
	return fmt.Errorf("not shared, outside the folders this server lets clients share (%s): %s. "+
		"Share files inside those folders, or have the server's owner start massgen mcp with --allow-path DIR for another folder",
		strings.Join(s.allowed, ", "), strings.Join(bad, "; "))
}
