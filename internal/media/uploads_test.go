package media

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"massgen/internal/config"
	"massgen/internal/provider"
)

// uploadDir is a config folder holding the test's files, and the config file in it.
func uploadDir(t *testing.T, files map[string][]byte) (dir, conf string) {
	t.Helper()
	dir = t.TempDir()
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, filepath.Join(dir, "team.yaml")
}

func TestLoadUploads_LocalFiles(t *testing.T) {
	dir, conf := uploadDir(t, map[string][]byte{"chart.png": pngBytes, "talk.wav": wavBytes, "report.pdf": pdfBytes,
		"notes.md": []byte("# Plan\n"), "mislabelled.png": pdfBytes, "text.png": []byte("hello there, plain text\n"),
		"latin1.md": {0xe9, 0x74, 0xe9}, "fake.pdf": []byte("not a pdf"), "sheet.xlsx": []byte("PK"), ".env.prod.txt": []byte("K=v"),
		"big.mp4": append(mp4Bytes, make([]byte, 2<<20)...)})
	roots := config.UploadRoots(conf)
	load := func(kind, path string, mb int64) ([]provider.Attachment, error) {
		return LoadUploads(t.Context(), UploadOptions{Uploads: []config.Upload{{Kind: kind, Path: path}}, MaxBytes: mb << 20,
			ConfigFile: conf, Roots: roots})
	}
	for _, tc := range []struct {
		kind, path, wantMIME, wantKind string
	}{
		{config.UploadImage, "chart.png", "image/png", provider.AttachImage},
		{config.UploadAudio, "talk.wav", "audio/wav", provider.AttachAudio},
		{config.UploadFile, "report.pdf", "application/pdf", provider.AttachDocument},
		{config.UploadFile, "notes.md", "text/plain", provider.AttachDocument},
		{config.UploadFile, filepath.Join(dir, "notes.md"), "text/plain", provider.AttachDocument},
	} {
		got, err := load(tc.kind, tc.path, 64)
		if err != nil {
			t.Errorf("%s: %v", tc.path, err)
			continue
		}
		if len(got) != 1 || got[0].Kind != tc.wantKind || got[0].MIME != tc.wantMIME || got[0].Name != filepath.Base(tc.path) {
			t.Errorf("%s: %+v", tc.path, got)
		}
	}
	for _, tc := range []struct {
		kind, path, want string
	}{
		{config.UploadImage, "talk.wav", "not an image file"},
		{config.UploadImage, "mislabelled.png", "not the image its extension says"},
		{config.UploadImage, "text.png", "holds text"},
		{config.UploadFile, "latin1.md", "not UTF-8 text"},
		{config.UploadFile, "fake.pdf", "does not hold a PDF"},
		{config.UploadFile, "sheet.xlsx", `not ".xlsx"`},
		{config.UploadFile, ".env.prod.txt", "commonly hold secrets"},
		{config.UploadVideo, "big.mp4", "over the limit of 1.0 MB (media_max_file_size_mb)"},
		{config.UploadImage, "missing.png", "does not exist"},
		{config.UploadFile, "/etc/hostname", "outside the folders upload_files may read"},
	} {
		_, err := load(tc.kind, tc.path, 1)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.kind+"_path") {
			t.Errorf("%s: err = %v, want %q", tc.path, err, tc.want)
		}
	}
}

// A file reached through a link out of the allowed folders is refused even when the link
// itself lies inside them.
func TestLoadUploads_LinkOut(t *testing.T) {
	dir, conf := uploadDir(t, nil)
	outside := filepath.Join(t.TempDir(), "secret.pdf")
	if err := os.WriteFile(outside, pdfBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link.pdf")); err != nil {
		t.Skip(err)
	}
	_, err := LoadUploads(t.Context(), UploadOptions{Uploads: []config.Upload{{Kind: config.UploadFile, Path: "link.pdf"}},
		MaxBytes: 1 << 20, ConfigFile: conf, Roots: config.UploadRoots(conf)})
	if err == nil || !strings.Contains(err.Error(), "a link to "+outside) {
		t.Fatalf("err = %v", err)
	}
}

func TestLoadUploads_URLs(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/audio/alloy.wav":
			_, _ = w.Write(wavBytes)
		case "/doc":
			w.Header().Set("Content-Type", "application/pdf")
			_, _ = w.Write(pdfBytes)
		case "/img":
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write(pngBytes)
		case "/big.pdf":
			_, _ = w.Write(append([]byte("%PDF-"), make([]byte, 2<<20)...))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	got, err := LoadUploads(t.Context(), UploadOptions{MaxBytes: 1 << 20, Uploads: []config.Upload{
		{Kind: config.UploadAudio, Path: srv.URL + "/audio/alloy.wav"},
		{Kind: config.UploadFile, Path: srv.URL + "/doc"},
		{Kind: config.UploadImage, Path: srv.URL + "/img?sig=SECRET"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ name, mime string }{{"alloy.wav", "audio/wav"}, {"doc.pdf", "application/pdf"}, {"img.png", "image/png"}}
	for i, w := range want {
		if got[i].Name != w.name || got[i].MIME != w.mime {
			t.Errorf("file %d: %s %s, want %s %s", i, got[i].Name, got[i].MIME, w.name, w.mime)
		}
	}
	for _, tc := range []struct {
		path, want string
	}{
		{"/gone.png?sig=SECRET", "status 404"},
		{"/big.pdf", "over the limit of 1.0 MB"},
	} {
		kind := config.UploadImage
		if strings.HasSuffix(tc.path, ".pdf") {
			kind = config.UploadFile
		}
		_, err := LoadUploads(t.Context(), UploadOptions{MaxBytes: 1 << 20, Uploads: []config.Upload{{Kind: kind, Path: srv.URL + tc.path}}})
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%s: err = %v, want %q without the query", tc.path, err, tc.want)
		}
	}
}
