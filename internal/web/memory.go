package web

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"massgen/internal/memory"
)

// The Memory page: what `massgen memory list|search|forget` do, over the same store (the
// user's ~/.massgen/memory unless Options.MemoryDir names another) with the same filters.
// Every request passes the guard (token, same origin); forget is a JSON POST, so no form on
// another site can send it. Memories were redacted before they were stored; the page still
// shows them as text only.

const (
	// maxMemoryList is the most memories one answer carries; defaultMemoryList and
	// defaultMemorySearch are what it carries when the request names no limit (search's is the
	// CLI's --limit default).
	maxMemoryList       = 1000
	defaultMemoryList   = 200
	defaultMemorySearch = 10
	// maxMemoryParam bounds a filter or a query.
	maxMemoryParam = 1024
	// maxForgetIDs bounds the ids of one forget; maxForgetBody its body.
	maxForgetIDs  = 1000
	maxForgetBody = 128 << 10
)

// memoryFilter is the CLI's --agent, --session, --team and --model.
type memoryFilter struct {
	Agent   string `json:"agent"`
	Session string `json:"session"`
	Team    string `json:"team"`
	Model   string `json:"model"`
}

func (f memoryFilter) keep(m memory.Memory) bool {
	return (f.Agent == "" || m.Agent == f.Agent) && (f.Session == "" || m.Session == f.Session) &&
		(f.Team == "" || m.Team == f.Team) && (f.Model == "" || m.Model == f.Model)
}

func (f memoryFilter) any() bool {
	return f.Agent != "" || f.Session != "" || f.Team != "" || f.Model != ""
}

// check says what is wrong with a filter value, "" when nothing.
func checkParam(name, v string) string {
	switch {
	case len(v) > maxMemoryParam:
		return fmt.Sprintf("%s is %d bytes: at most %d", name, len(v), maxMemoryParam)
	case !utf8.ValidString(v) || strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return name + " holds control characters or bytes that are not UTF-8"
	}
	return ""
}

func (f memoryFilter) check() string {
	for _, p := range [][2]string{{"agent", f.Agent}, {"session", f.Session}, {"team", f.Team}, {"model", f.Model}} {
		if msg := checkParam(p[0], p[1]); msg != "" {
			return msg
		}
	}
	return ""
}

// openMemory opens the store; nil, "" when it does not exist yet (nothing was remembered,
// and a read must not create it). notice says when a store that could not be read was set
// aside, as the CLI warns.
func (s *Server) openMemory(w http.ResponseWriter) (st *memory.Store, notice string, ok bool) {
	if s.memoryDir == "" {
		writeError(w, http.StatusServiceUnavailable, "server_error", "memory_unavailable", "",
			"no memory store: "+s.memoryErr)
		return nil, "", false
	}
	if _, err := os.Stat(s.memoryDir); errors.Is(err, fs.ErrNotExist) {
		return nil, "", true
	}
	st, opened, err := memory.Open(s.memoryDir, time.Now())
	if err != nil {
		writeError(w, http.StatusInternalServerError, "server_error", "memory_unreadable", "", err.Error())
		return nil, "", false
	}
	if opened.SetAside != "" {
		notice = fmt.Sprintf("the memory store could not be read (%v); it was moved to %s and a new one is used", opened.Err, opened.SetAside)
	}
	return st, notice, true
}

// handleMemory lists the memories the filters select, or with q searches them by words:
// {"store", "total", "memories", "truncated", "notice"}. A list is oldest first and, past
// the limit, keeps the newest; a search is best first.
func (s *Server) handleMemory(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := memoryFilter{Agent: q.Get("agent"), Session: q.Get("session"), Team: q.Get("team"), Model: q.Get("model")}
	query := q.Get("q")
	msg := f.check()
	if msg == "" {
		msg = checkParam("q", query)
	}
	if msg != "" {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_filter", "", msg)
		return
	}
	limit := defaultMemoryList
	if query != "" {
		limit = defaultMemorySearch
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxMemoryList {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_limit", "limit",
				fmt.Sprintf("limit is %q: use a whole number from 1 to %d", v, maxMemoryList))
			return
		}
		limit = n
	}
	st, notice, ok := s.openMemory(w)
	if !ok {
		return
	}
	var all []memory.Memory
	if st != nil {
		all = st.List(r.Context(), f.keep)
	}
	total := len(all)
	var out []memory.Memory
	if query != "" {
		out = memory.Search(all, query, limit)
		total = len(memory.Search(all, query, len(all)))
	} else {
		out = all[max(0, len(all)-limit):]
	}
	for i := range out {
		out[i].Text = clipText(out[i].Text, memory.MaxFactChars)
	}
	if out == nil {
		out = []memory.Memory{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"store": s.memoryDir, "total": total, "memories": out,
		"truncated": len(out) < total, "notice": notice})
}

// handleForget deletes memories: {"ids": [...]} and/or filters, or {"all": true}, as
// `massgen memory forget` does; {"forgotten": n}.
func (s *Server) handleForget(w http.ResponseWriter, r *http.Request) {
	var body struct {
		memoryFilter
		IDs []string `json:"ids"`
		All bool     `json:"all"`
	}
	if !readJSON(w, r, maxForgetBody, &body) {
		return
	}
	bad := body.check()
	if len(body.IDs) > maxForgetIDs {
		bad = fmt.Sprintf("%d ids: forget at most %d at once", len(body.IDs), maxForgetIDs)
	}
	for _, id := range body.IDs {
		if id == "" || len(id) > 128 || checkParam("an id", id) != "" {
			bad = "ids are the memories' ids, as the list gives them"
			break
		}
	}
	if bad == "" && len(body.IDs) == 0 && !body.any() && !body.All {
		bad = `name the memories to forget: "ids", a filter ("agent", "session", "team", "model"), or "all": true`
	}
	if bad != "" {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_forget", "", bad)
		return
	}
	st, _, ok := s.openMemory(w)
	if !ok {
		return
	}
	n := 0
	if st != nil {
		var err error
		n, err = st.Forget(r.Context(), func(m memory.Memory) bool {
			return (len(body.IDs) == 0 || slices.Contains(body.IDs, m.ID)) && body.keep(m)
		})
		if err != nil {
			writeError(w, http.StatusInternalServerError, "server_error", "forget_failed", "", err.Error())
			return
		}
	}
	s.log.printf("memory: %d forgotten from the studio", n)
	writeJSON(w, http.StatusOK, map[string]int{"forgotten": n})
}

// clipText cuts s to at most n bytes at a rune boundary.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
