package config

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// MassGen's upload_files: files sent with the task, each entry naming one image, audio file,
// video or document (image_path, audio_path, video_path, file_path), by local path or http(s)
// URL. The validator checks what it can without reading them: one file per entry, what the
// backend type takes, and that a local file lies in a folder the config may read. The files
// are read, sniffed and capped when the session starts (internal/media.LoadUploads).

// secUpload is one entry of backend.upload_files.
const secUpload = "agents[].backend.upload_files[]"

// Kinds of Upload, named after MassGen's keys.
const (
	UploadImage = "image"
	UploadAudio = "audio"
	UploadVideo = "video"
	UploadFile  = "file" // a document: file search on OpenAI, a document block elsewhere
)

// Upload is one upload_files entry.
type Upload struct {
	Kind string
	// Path is the entry as written: an http(s) URL, or a local path relative to the folder
	// massgen runs in, else to the config's folder (as custom tool files are found).
	Path string
}

// IsURL reports whether the entry names an http(s) URL rather than a local file.
func (u Upload) IsURL() bool {
	return strings.HasPrefix(u.Path, "http://") || strings.HasPrefix(u.Path, "https://")
}

// Upload limits. MassGen caps media at media_max_file_size_mb (default 64) and File Search
// documents at 512 MB; here the one setting caps every file, up to 512, and an agent sends at
// most MaxUploads files.
const (
	DefaultUploadMB = 64
	MaxUploadMB     = 512
	MaxUploads      = 20
)

// UploadLimitMB is the per-file cap of b's uploads in MB.
func (b Backend) UploadLimitMB() int {
	if b.UploadMaxMB > 0 {
		return b.UploadMaxMB
	}
	return DefaultUploadMB
}

// uploadKinds are the kinds each protocol sends, and what to use instead of the others.
var uploadKinds = map[string]map[string]string{
	ProtocolResponses: {UploadImage: "", UploadFile: "",
		UploadAudio: "the Responses API takes no audio input; use type chatcompletion with an audio model (gpt-4o-audio-preview), or gemini",
		UploadVideo: "the Responses API takes no video; use gemini, or a chatcompletion server that reads video (Qwen-VL)"},
	ProtocolChat: {UploadImage: "", UploadAudio: "", UploadVideo: "",
		UploadFile: "Chat Completions has no file search; use type openai (file search), claude or gemini for documents"},
	ProtocolMessages: {UploadImage: "", UploadFile: "",
		UploadAudio: "Claude takes images and documents only; use gemini for audio",
		UploadVideo: "Claude takes images and documents only; use gemini for video"},
	ProtocolGemini: {UploadImage: "", UploadAudio: "", UploadVideo: "", UploadFile: ""},
}

// uploadKey is the key of an entry of this kind.
func uploadKey(kind string) string { return kind + "_path" }

func uploadKeys() []Key {
	entry := func(kind, doc, ex string) Key {
		return Key{Section: secUpload, Name: uploadKey(kind), Type: TypeString, Status: Implemented, Since: "0.1.12", ex: ex, Doc: doc,
			set: func(w *walker, t *target, v value) {
				if t.up.Kind != "" {
					w.errKey(v.f, "split it into one entry per file",
						"an upload_files entry names one file: `%s` and `%s` are both set", uploadKey(t.up.Kind), v.f.key)
					return
				}
				t.up.Kind, t.up.Path = kind, v.s
			}}
	}
	return []Key{
		entry(UploadImage, "An image (png, jpg, webp, gif, bmp), sent inline: OpenAI, Claude, Gemini, Chat Completions (image_url).",
			"https://example.com/a.png"),
		entry(UploadAudio, "An audio file, sent inline: Gemini, Chat Completions (input_audio: wav or mp3).",
			"https://example.com/a.wav"),
		entry(UploadVideo, "A video, sent inline: Gemini, Chat Completions (video_url, for servers that read video such as Qwen-VL).",
			"https://example.com/a.mp4"),
		entry(UploadFile, "A document: OpenAI searches it with file_search (a vector store made for the session and deleted after); Claude and Gemini read a PDF or text file inline.",
			"https://example.com/a.pdf"),
	}
}

func uploadConfigKeys() []Key {
	return []Key{
		{Section: secBackend, Name: "upload_files", Type: TypeList, Status: Implemented, Since: "0.1.12", ex: "[{image_path: https://example.com/a.png}]",
			Doc: fmt.Sprintf("Files sent with the task (see upload_files[]), at most %d; local paths are relative to the working folder, else the config's, and must lie in one of them or a context path.", MaxUploads),
			raw: func(w *walker, t *target, f field) { t.backend.Uploads = w.uploads(f, t) }},
		{Section: secBackend, Name: "media_max_file_size_mb", Type: TypeInt, Default: "64", Status: Implemented, Since: "0.1.12", Needs: "upload_files",
			Doc: fmt.Sprintf("Size limit of each upload_files file in MB (1-%d; MassGen's limit of media files, here of documents too).", MaxUploadMB),
			check: func(w *walker, v *value) bool {
				if v.n < 1 || v.n > MaxUploadMB {
					w.errf(v.f, fmt.Sprintf("use 1 to %d", MaxUploadMB), "media_max_file_size_mb %d is out of range", v.n)
					return false
				}
				return true
			},
			set: func(_ *walker, t *target, v value) { t.backend.UploadMaxMB = v.n }},
	}
}

// uploadEntry is an entry read, with where it was, for the checks once the backend is read.
type uploadEntry struct {
	u Upload
	f field
}

func (w *walker) uploads(f field, t *target) []Upload {
	var out []Upload
	items, _ := w.list(f)
	for _, it := range items {
		if kind(it.val) != "a mapping" {
			w.errf(it, "write {image_path: ...}, {audio_path: ...}, {video_path: ...} or {file_path: ...}",
				"%s must be a mapping, not %s", it.key, kind(it.val))
			continue
		}
		var u Upload
		sub := *t
		sub.up = &u
		w.walk(secUpload, it, &sub)
		if u.Kind == "" {
			continue
		}
		out = append(out, u)
		if w.uploadAt == nil {
			w.uploadAt = map[*Backend][]uploadEntry{}
		}
		w.uploadAt[t.backend] = append(w.uploadAt[t.backend], uploadEntry{u, it})
	}
	if len(out) > MaxUploads {
		w.errf(f, fmt.Sprintf("send at most %d files per agent", MaxUploads), "upload_files lists %d files", len(out))
	}
	return out
}

// uploadAfter checks one entry on its own: one file, and a path or URL that can be one.
func uploadAfter(w *walker, t *target, f field, present map[string]field) {
	u := t.up
	if u.Kind == "" {
		w.errAt(f.loc, "an upload_files entry names no file", "write {image_path: ...}, {audio_path: ...}, {video_path: ...} or {file_path: ...}", f.raw)
		return
	}
	g := present[uploadKey(u.Kind)]
	switch {
	case strings.TrimSpace(u.Path) == "":
		w.errf(g, "name a file or an http(s) URL", "%s is empty", g.key)
		u.Kind = ""
	case strings.Contains(u.Path, "://") && !u.IsURL():
		w.errf(g, "use an http(s) URL or a local path", "`%s` is not an http(s) URL", clip(u.Path))
		u.Kind = ""
	case u.IsURL():
		if p, err := url.Parse(u.Path); err != nil || p.Host == "" {
			w.errf(g, "fix the URL", "`%s` is not a valid URL", clip(u.Path))
			u.Kind = ""
		} else if p.User != nil {
			w.errf(g, "put no user name or password in the URL", "the URL of %s holds credentials", g.key)
			u.Kind = ""
		}
	}
}

// checkUploads refuses what backend b's type cannot take and local files outside the
// folders upload_files may read; a file missing here only warns, as it must exist when
// massgen runs, not where the config is checked.
func (w *walker) checkUploads(t *target) {
	entries := w.uploadAt[t.backend]
	if len(entries) == 0 || !t.known || !t.bt.Implemented {
		return
	}
	kinds, ok := uploadKinds[t.bt.Protocol]
	roots := UploadRoots(w.file, t.backend.Tools.ContextPaths, t.cfg.Orchestrator.ContextPaths)
	for _, e := range entries {
		key := uploadKey(e.u.Kind)
		g := e.f
		if instead, has := kinds[e.u.Kind]; !ok || !has || instead != "" {
			if !ok {
				instead = fmt.Sprintf("remove upload_files; backend type %s sends no files", t.bt.Name)
			}
			w.errAt(g.loc, fmt.Sprintf("`%s` is not supported on backend type `%s`", key, t.bt.Name), instead, g.raw)
			continue
		}
		if e.u.IsURL() {
			continue
		}
		if w.received {
			// The sender resolved and confined its files; the receiver reads them, if it lets
			// the session send its files at all.
			if !filepath.IsAbs(e.u.Path) {
				w.errAt(g.loc, fmt.Sprintf("upload file `%s` is not an absolute path", clip(e.u.Path)),
					"a config sent to another machine names its local files by absolute path", g.raw)
			}
			continue
		}
		abs, found := FindUploadFile(e.u.Path, w.file)
		if !found {
			w.warnAt(g.loc, fmt.Sprintf("upload file `%s` does not exist here", clip(e.u.Path)), "it must exist when massgen runs", g.raw)
			continue
		}
		if err := CheckUploadPath(abs, roots); err != nil {
			w.errAt(g.loc, err.Error(), "move it into the folder massgen runs in or the config's, or add its folder to context_paths", g.raw)
		}
	}
}

// FindUploadFile resolves a local upload_files path: ~ is the home folder; a relative path is
// tried in the folder massgen runs in, then in the config's folder. found is false when it
// exists in neither (abs is then the first place tried).
func FindUploadFile(path, configFile string) (abs string, found bool) {
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(home, rest)
		}
	}
	if filepath.IsAbs(path) {
		abs = filepath.Clean(path)
		_, err := os.Lstat(abs)
		return abs, err == nil
	}
	dirs := []string{"."}
	if configFile != "" {
		dirs = append(dirs, filepath.Dir(configFile))
	}
	for i, d := range dirs {
		a, err := filepath.Abs(filepath.Join(d, path))
		if err != nil {
			continue
		}
		if i == 0 {
			abs = a
		}
		if _, err := os.Lstat(a); err == nil {
			return a, true
		}
	}
	return abs, false
}

// UploadRoots are the folders upload_files may read: the one massgen runs in, the config's,
// and the context paths (a file context path grants that file).
func UploadRoots(configFile string, contextPaths ...[]ContextPath) []string {
	var roots []string
	if wd, err := os.Getwd(); err == nil {
		roots = append(roots, wd)
	}
	if configFile != "" {
		if d, err := filepath.Abs(filepath.Dir(configFile)); err == nil {
			roots = append(roots, d)
		}
	}
	for _, cps := range contextPaths {
		for _, c := range cps {
			if a, err := filepath.Abs(c.Path); err == nil {
				roots = append(roots, a)
			}
		}
	}
	return roots
}

// ErrUploadOutside is a file outside every folder upload_files may read.
var ErrUploadOutside = errors.New("it is outside the folders upload_files may read")

// CheckUploadPath checks that the file at abs, after its symbolic links are resolved, lies
// in one of roots (resolved too) and is a regular file.
func CheckUploadPath(abs string, roots []string) error {
	_, _, err := UploadRoot(abs, roots)
	return err
}

// UploadRoot finds the root (of roots, its links resolved) that holds the file at abs once its
// links are resolved, and the file's path below it: what a reader opens through os.Root, so
// that a link swapped in later cannot lead it out.
func UploadRoot(abs string, roots []string) (root, rel string, err error) {
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", "", fmt.Errorf("upload file %s: %w", abs, unwrapPath(err))
	}
	for _, r := range roots {
		rr, err := filepath.EvalSymlinks(r)
		if err != nil || !within(rr, real) {
			continue
		}
		st, err := os.Stat(real)
		switch {
		case err != nil:
			return "", "", fmt.Errorf("upload file %s: %w", abs, unwrapPath(err))
		case !st.Mode().IsRegular():
			return "", "", fmt.Errorf("upload file %s is not a regular file", abs)
		}
		if st, err := os.Stat(rr); err == nil && !st.IsDir() {
			// A file context path: it grants that file alone.
			return filepath.Dir(rr), filepath.Base(rr), nil
		}
		rel, err := filepath.Rel(rr, real)
		if err != nil {
			continue
		}
		return rr, rel, nil
	}
	where := abs
	if real != abs {
		where = fmt.Sprintf("%s (a link to %s)", abs, real)
	}
	return "", "", fmt.Errorf("upload file %s: %w (the working folder, the config's folder and the context paths)", where, ErrUploadOutside)
}

// within reports whether p is base or lies below it; both are clean absolute paths.
func within(base, p string) bool {
	if base == string(filepath.Separator) {
		return true
	}
	return p == base || strings.HasPrefix(p, base+string(filepath.Separator))
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
