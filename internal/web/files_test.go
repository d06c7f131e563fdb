package web

import (
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
)

// A turn folder with snapshot files, the winner's workspace, and attacks on its edges.
func filesEnv(t *testing.T) (*env, string, string) {
	t.Helper()
	e := newEnv(t, nil)
	id := "log_20250101_000003/turn_1"
	turn := filepath.Join(e.root, filepath.FromSlash(id))
	outside := t.TempDir()
	const secret = "OUTSIDE-THE-TURN"
	mustWrite(t, filepath.Join(outside, "secret.txt"), secret)
	mustWrite(t, filepath.Join(e.root, "log_20250101_000004", "turn_1", "final", "x", "answer.txt"), secret) // a sibling session
	mustWrite(t, filepath.Join(turn, "events.jsonl"), `{"seq":1,"time":"2025-01-01T00:00:00Z","type":"session_started","data":{"question":"q","turn":1,"session_id":"log_20250101_000003","agents":[]}}`+"\n")
	mustWrite(t, filepath.Join(turn, "a1", "20250101_000000_000001", "answer.txt"), "first answer")
	mustWrite(t, filepath.Join(turn, "final", "a1", "answer.txt"), "final answer")
	mustWrite(t, filepath.Join(turn, "final", "a1", "workspace", "page.html"), "<h1>hi</h1><script>alert(1)</script>")
	mustWrite(t, filepath.Join(turn, "final", "a1", "workspace", "big.txt"), strings.Repeat("x", maxView+10))
	mustLink(t, filepath.Join(outside, "secret.txt"), filepath.Join(turn, "final", "a1", "workspace", "link.txt"))
	mustLink(t, outside, filepath.Join(turn, "final", "a1", "workspace", "linkdir"))
	mustLink(t, "../answer.txt", filepath.Join(turn, "final", "a1", "workspace", "inlink.txt")) // stays inside, still not followed
	mustLink(t, filepath.Join(e.root, "log_20250101_000004", "turn_1", "final", "x", "answer.txt"), filepath.Join(turn, "sibling.txt"))
	return e, id, secret
}

func fileURL(id, p string, extra ...string) string {
	return "/api/sessions/" + id + "/file?path=" + url.QueryEscape(p) + strings.Join(extra, "")
}

func TestFiles_ListAndOpenConfinedToTheTurn(t *testing.T) {
	e, id, secret := filesEnv(t)
	list := decode[struct {
		Entries []fileEntry
	}](t, e.get("/api/sessions/"+id+"/files"))
	paths := map[string]fileEntry{}
	for _, f := range list.Entries {
		paths[f.Path] = f
	}
	for _, want := range []string{"a1/20250101_000000_000001/answer.txt", "final/a1/answer.txt", "final/a1/workspace/page.html"} {
		if _, ok := paths[want]; !ok {
			t.Errorf("listing misses %s: %+v", want, list.Entries)
		}
	}
	if _, ok := paths["events.jsonl"]; ok {
		t.Error("the listing shows events.jsonl")
	}
	if f := paths["final/a1/workspace/link.txt"]; !f.Link {
		t.Errorf("a symlink is not marked: %+v", f)
	}
	if _, ok := paths["final/a1/workspace/linkdir/secret.txt"]; ok {
		t.Error("the listing followed a symlinked folder out of the turn")
	}

	r := e.get(fileURL(id, "final/a1/answer.txt"))
	if r.status != http.StatusOK || string(r.body) != "final answer" || !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") {
		t.Errorf("answer: %d %q %s", r.status, r.body, r.header.Get("Content-Type"))
	}
	r = e.get(fileURL(id, "final/a1/workspace/big.txt"))
	if r.status != http.StatusOK || len(r.body) != maxView || r.header.Get("X-Truncated") == "" {
		t.Errorf("big file: %d, %d bytes, X-Truncated %q", r.status, len(r.body), r.header.Get("X-Truncated"))
	}
	r = e.get(fileURL(id, "final/a1/workspace/big.txt", "&download=1"))
	if r.status != http.StatusOK || len(r.body) != maxView+10 || !strings.HasPrefix(r.header.Get("Content-Disposition"), "attachment") {
		t.Errorf("download: %d, %d bytes, %q", r.status, len(r.body), r.header.Get("Content-Disposition"))
	}
	// HTML is previewed only inside a sandbox with no scripts, framed by the dashboard alone.
	r = e.get(fileURL(id, "final/a1/workspace/page.html", "&as=preview"))
	csp := r.header.Get("Content-Security-Policy")
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") || !strings.HasPrefix(csp, "sandbox;") ||
		strings.Contains(csp, "allow-scripts") || !strings.Contains(csp, "default-src 'none'") || r.header.Get("X-Frame-Options") != "SAMEORIGIN" {
		t.Errorf("preview: %d %s CSP %q XFO %q", r.status, r.header.Get("Content-Type"), csp, r.header.Get("X-Frame-Options"))
	}
	// Not as a preview, HTML is plain text.
	if r := e.get(fileURL(id, "final/a1/workspace/page.html")); !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") {
		t.Errorf("html as text: %s", r.header.Get("Content-Type"))
	}

	attacks := map[string]int{
		"": http.StatusBadRequest,
		"../../log_20250101_000004/turn_1/final/x/answer.txt": http.StatusBadRequest,
		"final/../../../secret.txt":                           http.StatusBadRequest,
		"./final/a1/answer.txt":                               http.StatusBadRequest,
		"final//a1/answer.txt":                                http.StatusBadRequest,
		"/etc/passwd":                                         http.StatusBadRequest,
		filepath.Join(t.TempDir(), "x.txt"):                   http.StatusBadRequest,
		`final\a1\answer.txt`:                                 http.StatusBadRequest,
		"C:/Windows/win.ini":                                  http.StatusBadRequest,
		"final/a1/answer.txt\x00":                             http.StatusBadRequest,
		strings.Repeat("a/", 600) + "x":                       http.StatusBadRequest,
		"final/a1/workspace/link.txt":                         http.StatusNotFound,
		"final/a1/workspace/linkdir/secret.txt":               http.StatusNotFound,
		"final/a1/workspace/inlink.txt":                       http.StatusNotFound,
		"sibling.txt":                                         http.StatusNotFound,
		"final/a1":                                            http.StatusNotFound,
		"nope.txt":                                            http.StatusNotFound,
	}
	for p, status := range attacks {
		for _, extra := range []string{"", "&download=1", "&as=preview"} {
			r := e.get(fileURL(id, p, extra))
			if r.status != status || strings.Contains(string(r.body), secret) {
				t.Errorf("path %q%s: %d %s, want %d", p, extra, r.status, r.body, status)
			}
		}
	}
	if r := e.get("/api/sessions/log_20250101_000003/turn_9/files"); r.status != http.StatusNotFound {
		t.Errorf("files of a missing turn: %d", r.status)
	}
	if r := e.get("/api/sessions/" + id + "/file?path=final%2Fa1%2Fanswer.txt&path=x"); r.status != http.StatusOK {
		t.Errorf("first path wins: %d", r.status)
	}
}
