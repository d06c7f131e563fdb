package command

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"massgen/internal/workspace"
)

// What a sandbox hides beyond massgen's private trees. Keys reach massgen from files a command
// could otherwise read wherever the read mode shows them: a project outside home (a container's
// /work, /srv, a CI checkout) shows its .env in the default mode, and "open" shows home, with
// ~/.massgen/.env, the serve tokens and trust records. Redaction catches a key a command prints
// as it is, not one it encodes (base64), so these files must not be readable at all.

// sandboxSecrets are the paths a sandbox hides besides massgen's private trees, whatever its
// read mode shows: massgen's folder in home (~/.massgen), the files o.Hide names, and what the
// file tools conceal in a context path (secret files, massgen's folders) found in massgen's
// working folder and in the agent's workspace and snapshots. private and named are the view's
// (privateTrees, files granted by name).
func sandboxSecrets(o *SandboxOptions, home string, roots []workspace.Root, private []string, named map[string]bool) ([]string, error) {
	var out []string
	if home != "" {
		out = append(out, filepath.Join(home, ".massgen"))
	}
	for _, p := range o.Hide {
		if p = expandHome(p, home); p != "" {
			out = append(out, p)
		}
	}
	for _, g := range roots {
		if g.Context {
			continue // contextInside hides what lies there, as the file tools see it
		}
		found, err := scanConcealed(g.Path, named, nil)
		if errors.Is(err, errTooBig) {
			return nil, fmt.Errorf("%s holds more than %d files and folders, too many to check for secret files before each sandboxed command; remove what the agent no longer needs",
				g.Path, maxContextScan)
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s cannot be checked for secret files: %w", g.Path, err)
		}
		out = append(out, found...)
	}
	found, err := workDirSecrets(o, home, roots, private, named)
	return append(out, found...), err
}

// workDirSecrets are the secret files and massgen folders in the folder massgen runs in, where
// the sandbox shows it: the .env massgen loaded lies there, and so may a config with a key.
func workDirSecrets(o *SandboxOptions, home string, roots []workspace.Root, private []string, named map[string]bool) ([]string, error) {
	wd, err := os.Getwd()
	if err == nil {
		wd, err = filepath.EvalSymlinks(wd)
	}
	if err != nil || wd == string(filepath.Separator) || !shownBy(o, home, wd) {
		return nil, nil
	}
	for _, g := range roots {
		if !g.File && workspace.Within(g.Path, wd) {
			return nil, nil // scanned as that grant
		}
	}
	found, err := scanConcealed(wd, named, func(p string, d fs.DirEntry) error {
		// Grants inside are scanned as grants; massgen's trees are hidden whole.
		if d.IsDir() && (slices.Contains(private, p) || slices.ContainsFunc(roots, func(g workspace.Root) bool { return g.Path == p })) {
			return filepath.SkipDir
		}
		return nil
	})
	if errors.Is(err, errTooBig) {
		return nil, fmt.Errorf("massgen runs in %s, which holds more than %d files and folders, too many to check for secret files before each sandboxed command; "+
			"run massgen from a smaller folder, or use command_line_srt_read_mode: strict", wd, maxContextScan)
	}
	if err != nil {
		return nil, fmt.Errorf("massgen's working folder %s cannot be checked for secret files: %w", wd, err)
	}
	return found, nil
}

// shownBy reports whether a sandbox with o shows p: through the read mode's view of the
// system, or an allow_read entry.
func shownBy(o *SandboxOptions, home, p string) bool {
	for _, a := range o.AllowRead {
		if a = expandHome(a, home); a != "" && workspace.Within(a, p) {
			return true
		}
	}
	switch {
	case workspace.Within("/tmp", p):
		return false // every sandbox has a /tmp of its own
	case o.ReadMode == ReadOpen:
		return true
	case o.ReadMode == ReadStrict:
		return slices.ContainsFunc(strictSystem, func(d string) bool { return workspace.Within(d, p) })
	}
	return !workspace.Within("/home", p) && !workspace.Within("/root", p) && (home == "" || !workspace.Within(home, p))
}

// scanConcealed walks the folder root and returns what the file tools conceal inside a
// context path there: massgen's folders, and secret files other than those in named (granted
// by name). visit, when set, sees every other entry; it may return filepath.SkipDir. Past
// maxContextScan entries it returns errTooBig.
func scanConcealed(root string, named map[string]bool, visit func(p string, d fs.DirEntry) error) ([]string, error) {
	var hide []string
	n := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil // unreadable here: unreadable in the sandbox too
		}
		if n++; n > maxContextScan {
			return errTooBig
		}
		if p == root {
			return nil
		}
		if slices.Contains(workspace.MassgenDirs(), d.Name()) || workspace.SecretPattern(p) != "" && !named[p] && d.Type()&fs.ModeSymlink == 0 {
			hide = append(hide, p)
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if visit != nil {
			return visit(p, d)
		}
		return nil
	})
	return hide, err
}
