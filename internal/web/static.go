package web

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

// The dashboard: plain HTML, CSS and JavaScript built into the binary. Nothing is fetched from
// anywhere else, and the content security policy says so to the browser.
//
//go:embed static
var staticFiles embed.FS

const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; frame-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

func (s *Server) handleIndex(w http.ResponseWriter, r *http.Request) {
	b, err := staticFiles.ReadFile("static/index.html")
	if err != nil {
		http.Error(w, "the dashboard is missing from this build", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b)
}

// staticHandler serves the embedded files under /static/, without directory listings.
func staticHandler() http.Handler {
	sub, err := fs.Sub(staticFiles, "static")
	if err != nil {
		panic(err) // the embed pattern guarantees the folder
	}
	files := http.StripPrefix("/static/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Only files that exist reach the file server, which answers 500 to a name the file
		// system calls invalid.
		name := strings.TrimPrefix(r.URL.Path, "/static/")
		if info, err := fs.Stat(sub, name); err != nil || !fs.ValidPath(name) || !info.Mode().IsRegular() {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Security-Policy", contentSecurityPolicy)
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}
