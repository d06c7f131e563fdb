package durable

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"massgen/internal/lazy"
	"massgen/internal/private"
	"massgen/internal/workspace"
)

// Store is where a session's workspaces travel between the machines that run it: the
// worker holding a session puts each agent's snapshot there when the agent answers, a worker
// that takes the session over gets them back, and the caller gets the winner's workspace at
// the end. Keys are slash-separated names StoreKey makes; what is stored is a folder tree.
// FolderStore is the one built in; an object store fits behind the same three calls.
type Store interface {
	// Put replaces the tree under key with a copy of dir: a reader sees the old tree or the
	// new one, never part of either.
	Put(ctx context.Context, key, dir string) error
	// Get copies the tree under key into dir (created if missing); ok is false when the key
	// holds nothing.
	Get(ctx context.Context, key, dir string) (ok bool, err error)
	// Remove deletes the trees under key and below it.
	Remove(ctx context.Context, key string) error
}

// FolderStore is a Store in a folder every worker and the caller reach: the same machine, or a
// shared mount (NFS, a cloud file share).
type FolderStore struct{ Dir string }

// DefaultStoreDir is the store's folder when none is given: ~/.massgen/temporal_store, so
// that a caller and workers on one machine share it wherever each was started.
func DefaultStoreDir() string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return filepath.Join(".massgen", "temporal_store")
	}
	return filepath.Join(home, ".massgen", "temporal_store")
}

var safeName = lazy.Regexp(`^[A-Za-z0-9][A-Za-z0-9._-]{0,100}$`)

// StoreKey names a session's entry in a store from its workflow ID and the parts below it.
// The workflow ID comes from whoever started the session, so it is kept only when it is a
// plain name, and is always followed by a hash of it: two IDs never share a folder and none
// reaches outside the store.
func StoreKey(workflowID string, parts ...string) string {
	sum := sha256.Sum256([]byte(workflowID))
	name := hex.EncodeToString(sum[:6])
	if safeName().MatchString(workflowID) && len(workflowID) <= 80 {
		name = workflowID + "-" + name
	}
	for _, p := range parts {
		if !safeName().MatchString(p) || len(p) > 80 {
			sum := sha256.Sum256([]byte(p))
			p = "x-" + hex.EncodeToString(sum[:6])
		}
		name += "/" + p
	}
	return name
}

func (s FolderStore) path(key string) (string, error) {
	if s.Dir == "" {
		return "", errors.New("store: no folder given")
	}
	for _, p := range strings.Split(key, "/") {
		if !safeName().MatchString(p) {
			return "", fmt.Errorf("store: %q is not a key StoreKey makes", key)
		}
	}
	return filepath.Join(s.Dir, filepath.FromSlash(key)), nil
}

// Put implements Store: the copy is built beside the key and renamed into place.
func (s FolderStore) Put(ctx context.Context, key, dir string) error {
	dst, err := s.path(key)
	if err != nil {
		return err
	}
	if err := private.MkdirAll(filepath.Dir(dst)); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	tmp := dst + ".put-" + randomSuffix()
	if err := copyTree(ctx, dir, tmp); err != nil {
		_ = os.RemoveAll(tmp)
		return fmt.Errorf("store: put %s: %w", key, err)
	}
	old := dst + ".old-" + randomSuffix()
	if err := os.Rename(dst, old); err != nil && !errors.Is(err, fs.ErrNotExist) {
		_ = os.RemoveAll(tmp)
		return fmt.Errorf("store: put %s: %w", key, err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		_ = os.Rename(old, dst)
		_ = os.RemoveAll(tmp)
		return fmt.Errorf("store: put %s: %w", key, err)
	}
	_ = os.RemoveAll(old)
	return nil
}

// Get implements Store.
func (s FolderStore) Get(ctx context.Context, key, dir string) (bool, error) {
	src, err := s.path(key)
	if err != nil {
		return false, err
	}
	if info, err := os.Lstat(src); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("store: get %s: %w", key, err)
	} else if !info.IsDir() {
		return false, fmt.Errorf("store: get %s: not a folder", key)
	}
	if err := copyTree(ctx, src, dir); err != nil {
		return false, fmt.Errorf("store: get %s: %w", key, err)
	}
	return true, nil
}

// Remove implements Store.
func (s FolderStore) Remove(_ context.Context, key string) error {
	p, err := s.path(key)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(p); err != nil {
		return fmt.Errorf("store: remove %s: %w", key, err)
	}
	return nil
}

// copyTree copies the folder src into dst (created if missing), as workspaces are copied:
// links that leave the tree and special files are left out.
func copyTree(ctx context.Context, src, dst string) error {
	if err := private.MkdirAll(dst); err != nil {
		return err
	}
	in, err := os.OpenRoot(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenRoot(dst)
	if err != nil {
		return err
	}
	defer out.Close()
	_, err = workspace.CopyTree(ctx, in, ".", out, ".", true, nil)
	return err
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
