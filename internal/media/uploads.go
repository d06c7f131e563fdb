package media

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"massgen/internal/config"
	"massgen/internal/provider"
	"massgen/internal/redact"
	"massgen/internal/workspace"
)

// LoadUploads reads an agent's upload_files before its session starts, so that every model
// call sends the same bytes and a bad entry stops the run before any call: local files through
// the confinement the validator checks (opened below their root, so a link swapped in since
// cannot lead out), URLs downloaded once. Each file is capped, and checked to be what its entry
// and extension say (media are sniffed; documents are PDFs, UTF-8 text or the Office formats
// only OpenAI's file search reads).

// UploadOptions configure LoadUploads.
type UploadOptions struct {
	Uploads []config.Upload
	// MaxBytes caps each file (media_max_file_size_mb).
	MaxBytes int64
	// ConfigFile is the config's path ("" for none): relative paths are tried there too.
	ConfigFile string
	// Roots are the folders local files may come from (config.UploadRoots).
	Roots []string
	// HTTPClient downloads URLs; nil means one bounded by DownloadTimeout.
	HTTPClient *http.Client
}

// DownloadTimeout bounds the download of one upload_files URL.
const DownloadTimeout = 60 * time.Second

// documentTypes are the document extensions OpenAI's file search reads (MassGen's list), with
// the MIME type each is sent as: text files go as text/plain, which Claude and Gemini read.
var documentTypes = func() map[string]string {
	m := map[string]string{".pdf": "application/pdf", ".doc": "application/msword",
		".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
		".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation"}
	for _, e := range textDocuments {
		m[e] = "text/plain"
	}
	return m
}()

var textDocuments = []string{".txt", ".md", ".json", ".html", ".py", ".js", ".ts", ".java", ".c", ".cpp", ".cs", ".css", ".php",
	".rb", ".sh", ".tex"}

// LoadUploads returns the files of o.Uploads in order.
func LoadUploads(ctx context.Context, o UploadOptions) ([]provider.Attachment, error) {
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: DownloadTimeout}
	}
	var out []provider.Attachment
	for _, u := range o.Uploads {
		var (
			name, ctype string
			data        []byte
			err         error
			where       = u.Path
		)
		if u.IsURL() {
			where = redact.URL(u.Path)
			name, ctype, data, err = download(ctx, hc, u.Path, o.MaxBytes)
		} else {
			name, data, err = readLocal(u.Path, o.ConfigFile, o.Roots, o.MaxBytes)
		}
		if err == nil {
			var a provider.Attachment
			a, err = classify(u.Kind, name, ctype, data)
			out = append(out, a)
		}
		if err != nil {
			return nil, fmt.Errorf("upload_files %s %s: %w", u.Kind+"_path", where, err)
		}
	}
	return out, nil
}

// readLocal reads a local file below the root that holds it.
func readLocal(p, configFile string, roots []string, max int64) (string, []byte, error) {
	abs, found := config.FindUploadFile(p, configFile)
	if !found {
		return "", nil, fmt.Errorf("%s does not exist", abs)
	}
	root, rel, err := config.UploadRoot(abs, roots)
	if err != nil {
		return "", nil, err
	}
	if pat := workspace.SecretPattern(filepath.Join(root, rel)); pat != "" {
		return "", nil, fmt.Errorf("files that commonly hold secrets (%s) are not sent to a provider", pat)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return "", nil, err
	}
	defer r.Close()
	f, err := r.Open(rel)
	if err != nil {
		return "", nil, fmt.Errorf("%w: it may have changed since it was checked", err)
	}
	defer f.Close()
	st, err := f.Stat()
	switch {
	case err != nil:
		return "", nil, err
	case !st.Mode().IsRegular():
		return "", nil, errors.New("not a regular file")
	case st.Size() > max:
		return "", nil, tooLarge(st.Size(), max)
	}
	data, err := readCapped(f, max)
	return filepath.Base(rel), data, err
}

// download fetches a URL, bounded in time and size. It returns the file name the URL's path
// ends with ("" for none) and the Content-Type the server declared.
func download(ctx context.Context, hc *http.Client, raw string, max int64) (name, ctype string, data []byte, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return "", "", nil, fmt.Errorf("bad URL: %v", redactedErr(err, raw))
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", "", nil, fmt.Errorf("download failed: %v", redactedErr(err, raw))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", "", nil, fmt.Errorf("download failed: status %d (%s)", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	if resp.ContentLength > max {
		return "", "", nil, tooLarge(resp.ContentLength, max)
	}
	if data, err = readCapped(resp.Body, max); err != nil {
		return "", "", nil, fmt.Errorf("download failed: %v", redactedErr(err, raw))
	}
	ctype, _, _ = mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if u, err := url.Parse(raw); err == nil {
		if b := path.Base(u.Path); b != "." && b != "/" {
			name = b
		}
	}
	return name, ctype, data, nil
}

// redactedErr is err with the URL's query and credentials left out.
func redactedErr(err error, raw string) string {
	return strings.ReplaceAll(err.Error(), raw, redact.URL(raw))
}

func readCapped(r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, tooLarge(int64(len(data)), max)
	}
	return data, nil
}

func tooLarge(n, max int64) error {
	if n > max+1 {
		return fmt.Errorf("it is %s, over the limit of %s (media_max_file_size_mb)", provider.MB(n), provider.MB(max))
	}
	return fmt.Errorf("it is over the limit of %s (media_max_file_size_mb)", provider.MB(max))
}

// classify checks that data is the kind the entry says and names its MIME type. A name
// without a known extension (a URL such as .../image?id=3) takes the server's Content-Type.
func classify(kind, name, ctype string, data []byte) (provider.Attachment, error) {
	if len(data) == 0 {
		return provider.Attachment{}, errors.New("the file is empty")
	}
	ext := strings.ToLower(filepath.Ext(name))
	if kind == config.UploadFile {
		return classifyDocument(name, ext, ctype, data)
	}
	k, m, ok := kindOf(name)
	if !ok && strings.HasPrefix(ctype, kind+"/") {
		k, m, ok = kind, ctype, true
		if exts, _ := mime.ExtensionsByType(ctype); len(exts) > 0 {
			name += exts[0]
		}
	}
	if !ok || k != kind {
		return provider.Attachment{}, fmt.Errorf("not %s%s file: use one of %s", article(kind), kind, supported(kind))
	}
	m, err := sniff(name, kind, m, data)
	if err != nil {
		return provider.Attachment{}, err
	}
	return provider.Attachment{Kind: kind, MIME: m, Name: name, Data: data}, nil
}

func classifyDocument(name, ext, ctype string, data []byte) (provider.Attachment, error) {
	m, ok := documentTypes[ext]
	switch {
	case ok:
	case ctype == "application/pdf":
		m, name = ctype, nameOr(name, "document")+".pdf"
	case strings.HasPrefix(ctype, "text/"):
		m, name = "text/plain", nameOr(name, "document")+".txt"
	default:
		var exts []string
		for _, e := range append(append([]string{".pdf"}, textDocuments...), ".doc", ".docx", ".pptx") {
			exts = append(exts, e[1:])
		}
		return provider.Attachment{}, fmt.Errorf("file search reads %s documents, not %q", strings.Join(exts, ", "), ext)
	}
	switch {
	case m == "application/pdf" && !strings.HasPrefix(string(data), "%PDF-"):
		return provider.Attachment{}, errors.New("it does not hold a PDF (no %PDF- header)")
	case m == "text/plain" && !utf8.Valid(data):
		return provider.Attachment{}, errors.New("it is not UTF-8 text")
	}
	return provider.Attachment{Kind: provider.AttachDocument, MIME: m, Name: name, Data: data}, nil
}

func nameOr(name, def string) string {
	if name == "" {
		return def
	}
	return name
}
