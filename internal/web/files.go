package web

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The workspace browser: the files of a turn folder (each answer's and vote's folder
// <agent>/<timestamp>/, each answer's workspace in snapshots/<label>/, and final/<winner>/
// with the winner's workspace) listed and opened.
// Every path is relative to the turn folder and opened through an os.Root on it, so no path,
// symbolic links included, reaches anything outside it.

const (
	maxListed   = 5000      // entries in one listing
	maxListDeep = 16        // folder depth walked
	maxView     = 2 << 20   // bytes of a file shown in the page
	maxDownload = 256 << 20 // bytes of a file downloaded
	maxFilePath = 1024
)

// The turn folder's own files, which the session page already shows from the events: the
// browser lists the snapshot folders and final/ only.
var turnFiles = map[string]bool{"events.jsonl": true, "metadata.json": true, "status.json": true,
	"massgen.log": true, "massgen_debug.log": true}

type fileEntry struct {
	Path string `json:"path"`
	Dir  bool   `json:"dir,omitempty"`
	Size int64  `json:"size"`
	// Link marks a symbolic link, listed but never followed.
	Link bool `json:"link,omitempty"`
}

// openTurn opens session id's turn folder as a root of its own.
func (s *Server) openTurn(id string) (*os.Root, error) {
	root, err := s.openRoot()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.OpenRoot(id)
}

// handleFiles lists the turn folder: {"entries": [{path, dir, size, link}], "truncated"}.
func (s *Server) handleFiles(w http.ResponseWriter, r *http.Request) {
	id, ok := sessionParam(w, r)
	if !ok {
		return
	}
	turn, err := s.openTurn(id)
	if err != nil {
		notFound(w, id)
		return
	}
	defer turn.Close()
	entries := []fileEntry{}
	truncated := false
	fsys := turn.FS()
	_ = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return nil
		}
		if !strings.Contains(p, "/") && turnFiles[p] {
			return nil
		}
		if len(entries) >= maxListed {
			truncated = true
			return fs.SkipAll
		}
		e := fileEntry{Path: p, Dir: d.IsDir(), Link: d.Type()&fs.ModeSymlink != 0}
		if info, err := d.Info(); err == nil && d.Type().IsRegular() {
			e.Size = info.Size()
		}
		entries = append(entries, e)
		if d.IsDir() && strings.Count(p, "/") >= maxListDeep {
			return fs.SkipDir
		}
		return nil
	})
	writeJSON(w, http.StatusOK, map[string]any{"entries": entries, "truncated": truncated})
}

// filePath checks a path the page sends: relative, clean, forward slashes, no "." or ".."
// segment, valid UTF-8, no control characters, at most maxFilePath bytes.
func filePath(p string) (string, error) {
	switch {
	case p == "":
		return "", errors.New("no path: name a file of the session (?path=final/agent/answer.txt)")
	case len(p) > maxFilePath:
		return "", fmt.Errorf("the path is over %d bytes", maxFilePath)
	case !utf8.ValidString(p) || strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "", errors.New("the path has bytes that are not text")
	case strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || strings.Contains(p, ":"):
		return "", errors.New("the path must be relative to the session folder, with forward slashes")
	case !fs.ValidPath(p) || path.Clean(p) != p:
		return "", errors.New("the path must not have empty, '.' or '..' parts")
	}
	return p, nil
}

// previewTypes are the files served as themselves (for the page's image, PDF and HTML
// previews); everything else is text/plain. HTML and SVG run in a sandbox of their own.
var previewTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp",
	".svg": "image/svg+xml", ".pdf": "application/pdf", ".html": "text/html; charset=utf-8", ".htm": "text/html; charset=utf-8",
}

// previewPolicy is the CSP of a previewed file: a sandbox with an opaque origin (no scripts,
// no forms, no access to the dashboard or its cookie), nothing fetched from anywhere, framed
// only by the dashboard itself.
const previewPolicy = "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'; frame-ancestors 'self'"

// handleFile sends one file of the turn folder: ?path=REL. As text/plain (up to 2 MiB, with
// X-Truncated when longer) unless ?as=preview asks for its own type (images, PDF, HTML in a
// sandbox) or ?download=1 for an attachment (up to 256 MiB).
func (s *Server) handleFile(w http.ResponseWriter, r *http.Request) {
	id, ok := sessionParam(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	p, err := filePath(q.Get("path"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_file_path", "path", err.Error())
		return
	}
	turn, err := s.openTurn(id)
	if err != nil {
		notFound(w, id)
		return
	}
	defer turn.Close()
	// Lstat: a symbolic link is never followed, even one that stays inside the folder.
	info, err := turn.Lstat(p)
	if err != nil || !info.Mode().IsRegular() {
		writeError(w, http.StatusNotFound, "invalid_request_error", "file_not_found", "path",
			"no file "+p+" in session "+id+" (folders and symbolic links are not opened)")
		return
	}
	f, err := turn.Open(p)
	if err != nil {
		writeError(w, http.StatusNotFound, "invalid_request_error", "file_not_found", "path", "cannot open "+p)
		return
	}
	defer f.Close()
	h := w.Header()
	limit := int64(maxView)
	switch {
	case q.Get("download") == "1":
		limit = maxDownload
		if info.Size() > limit {
			writeError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "file_too_large", "path",
				fmt.Sprintf("%s is %d bytes, over the %s download limit: copy it from the log folder", p, info.Size(), sizeText(limit)))
			return
		}
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": path.Base(p)}))
	case q.Get("as") == "preview":
		ct, ok := previewTypes[strings.ToLower(path.Ext(p))]
		if !ok {
			ct = "text/plain; charset=utf-8"
		}
		limit = maxDownload / 8
		if info.Size() > limit {
			writeError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "file_too_large", "path",
				fmt.Sprintf("%s is %d bytes, over the %s preview limit: download it", p, info.Size(), sizeText(limit)))
			return
		}
		h.Set("Content-Type", ct)
		h.Set("Content-Security-Policy", previewPolicy)
		h.Set("X-Frame-Options", "SAMEORIGIN")
	default:
		h.Set("Content-Type", "text/plain; charset=utf-8")
		if info.Size() > limit {
			h.Set("X-Truncated", strconv.FormatInt(info.Size(), 10))
		}
	}
	h.Set("Content-Length", strconv.FormatInt(min(info.Size(), limit), 10))
	_, _ = io.Copy(newStallWriter(w), io.LimitReader(f, limit))
}
