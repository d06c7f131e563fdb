package web

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"massgen/internal/config"
	"massgen/internal/event"
)

func TestAPI_ListDetailEventsAndReplayOfAFinishedSession(t *testing.T) {
	e := newEnv(t, nil)
	c := decode[completionResp](t, e.post("/v1/chat/completions", chatBody("demo", false, "user", "What is the capital of France?")))
	id := c.MassGen.LogDir
	e.waitIdle()

	list := decode[struct{ Sessions []summary }](t, e.get("/api/sessions")).Sessions
	if len(list) != 1 {
		t.Fatalf("sessions %+v", list)
	}
	s := list[0]
	if s.ID != id || s.SessionID != c.MassGen.SessionID || s.Turn != 1 || s.Team != "demo" || s.Question != "What is the capital of France?" ||
		s.Status != "completed" || s.Running || s.Winner != c.MassGen.Winner || s.StartedAt == nil || s.DurationSeconds <= 0 ||
		s.ExitCode == nil || *s.ExitCode != 0 || s.Tokens.Total != c.Usage.TotalTokens {
		t.Errorf("summary %+v", s)
	}

	d := decode[sessionDetail](t, e.get("/api/sessions/"+id))
	if d.FinalAnswer != c.Choices[0].Message.Content || len(d.Agents) != 3 || d.Agents[0].Label != "agent1" || d.Team != "demo" {
		t.Errorf("detail %+v", d)
	}

	r := e.get("/api/sessions/" + id + "/events")
	file, err := os.ReadFile(filepath.Join(e.root, id, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if r.status != http.StatusOK || string(r.body) != string(file) || r.header.Get("Content-Type") != "application/x-ndjson" {
		t.Errorf("events: %d %s, %d bytes, want the %d bytes of events.jsonl", r.status, r.header.Get("Content-Type"), len(r.body), len(file))
	}

	// The stream of a finished session is its file, then "end".
	evs := e.turnEvents(id)
	r = e.get("/api/sessions/" + id + "/stream")
	msgs := parseSSE(t, r.body)
	if len(msgs) != len(evs)+1 {
		t.Fatalf("%d messages for %d events", len(msgs), len(evs))
	}
	for i, m := range msgs[:len(evs)] {
		if m.id != strconv.Itoa(i+1) || m.name != "" || !strings.Contains(m.data, `"seq":`+strconv.Itoa(i+1)+`,`) {
			t.Fatalf("message %d: %+v", i, m)
		}
	}
	if end := msgs[len(msgs)-1]; end.name != "end" || end.data != `{"status":"completed"}` {
		t.Errorf("last message %+v", end)
	}
	// Resuming after event 5 starts at 6.
	r = e.get("/api/sessions/"+id+"/stream", "Last-Event-ID", "5")
	if msgs := parseSSE(t, r.body); len(msgs) != len(evs)-5+1 || msgs[0].id != "6" {
		t.Errorf("resumed stream starts %+v, %d messages", msgs[0], len(msgs))
	}

	wantError(t, e.get("/api/sessions/log_20200101_000000/turn_1"), http.StatusNotFound, "session_not_found")
	wantError(t, e.get("/api/sessions/log_20200101_000000/turn_1/events"), http.StatusNotFound, "session_not_found")
	wantError(t, e.get("/api/sessions/log_20200101_000000/turn_1/stream"), http.StatusNotFound, "session_not_found")
	wantError(t, e.get("/api/sessions?limit=0"), http.StatusBadRequest, "invalid_limit")
	wantError(t, e.post("/api/sessions/"+id+"/cancel", nil), http.StatusNotFound, "not_running")
}

type sseMsg struct{ id, name, data string }

func parseSSE(t *testing.T, body []byte) []sseMsg {
	t.Helper()
	var out []sseMsg
	var cur sseMsg
	for line := range strings.SplitSeq(string(body), "\n") {
		switch {
		case line == "":
			if cur.data != "" {
				out = append(out, cur)
			}
			cur = sseMsg{}
		case strings.HasPrefix(line, "id: "):
			cur.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			cur.name = line[7:]
		case strings.HasPrefix(line, "data: "):
			cur.data = line[6:]
		}
	}
	return out
}

func TestAPI_StartARunWatchItLiveAndStopIt(t *testing.T) {
	e := newEnv(t, nil)
	for _, c := range []struct {
		body   any
		header []string
		status int
		code   string
	}{
		{map[string]string{"team": "nope", "question": "q"}, nil, 404, "model_not_found"},
		{map[string]string{"team": "demo", "question": " "}, nil, 400, "missing_question"},
		{"{", nil, 400, "invalid_json"},
		{map[string]string{"team": "demo", "question": "q"}, []string{"Content-Type", "text/plain"}, 415, "unsupported_media_type"},
	} {
		wantError(t, e.post("/api/runs", c.body, c.header...), c.status, c.code)
	}

	r := e.post("/api/runs", map[string]string{"team": "hang", "question": "Will it end?"})
	if r.status != http.StatusAccepted {
		t.Fatalf("start: %d %s", r.status, r.body)
	}
	id := decode[map[string]string](t, r)["id"]
	if e.srv.lookup(id) == nil {
		t.Fatalf("session %q is not running", id)
	}
	if d := decode[sessionDetail](t, e.get("/api/sessions/"+id)); !d.Running || d.Status != "running" || d.Team != "hang" || d.Question != "Will it end?" {
		t.Errorf("detail of the running session %+v", d.summary)
	}
	// A subscriber gets everything from the first event, then live ones until the end.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, e.ts.URL+"/api/sessions/"+id+"/stream", nil)
	resp, err := e.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if line, _ := br.ReadString('\n'); line != "id: 1\n" {
		t.Fatalf("first line %q", line)
	}
	if r := e.post("/api/sessions/"+id+"/cancel", nil); r.status != http.StatusAccepted {
		t.Fatalf("cancel: %d %s", r.status, r.body)
	}
	rest, _ := readAll(br)
	msgs := parseSSE(t, []byte("id: 1\n"+rest))
	last := msgs[len(msgs)-1]
	if last.name != "end" || last.data != `{"status":"interrupted"}` {
		t.Errorf("stream ended with %+v", last)
	}
	e.waitIdle()
	evs := e.turnEvents(id)
	if len(msgs) != len(evs)+1 {
		t.Errorf("%d messages for %d events", len(msgs), len(evs))
	}
	if end := lastEnd(t, evs); end.Status != event.StatusInterrupted {
		t.Errorf("ended %+v", end)
	}
}

func readAll(br *bufio.Reader) (string, error) {
	var b strings.Builder
	_, err := br.WriteTo(&b)
	return b.String(), err
}

func TestAPI_TheListToleratesHalfWrittenSessions(t *testing.T) {
	e := newEnv(t, nil)
	write := func(rel, body string, age time.Duration) {
		p := filepath.Join(e.root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-age)
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	stale := strconv.FormatInt(time.Now().Add(-time.Hour).Unix(), 10)
	write("log_20250101_000001/turn_1/status.json", `{"meta":{"question":"crashed","status":"running","last_updated":`+stale+`}}`, time.Hour)
	write("log_20250101_000001/turn_1/events.jsonl", `{"seq":1,"time":"2025-01-01T00:00:01Z","type":"session_started","data":{"question":"crashed","turn":1,"session_id":"log_20250101_000001","agents":[]}}`+"\n"+`{"seq":2,"ti`, time.Hour)
	write("log_20250101_000002/turn_1/metadata.json", `{"question": "half`, time.Hour)
	write("log_20250101_000002/turn_2/events.jsonl", "", time.Hour)
	write("log_20250101_000003/turn_1/metadata.json", `{"question":"done","status":"completed","exit_code":0,"config_path":"/somewhere/research.yaml","totals":{"usage":{"input_tokens":10,"output_tokens":5,"estimated":true},"cost_usd":0.5}}`, time.Hour)
	write("notes/turn_1/metadata.json", `{"question":"not a session"}`, time.Hour)
	write("log_20250101_000004", "a file, not a folder", time.Hour)

	list := decode[struct{ Sessions []summary }](t, e.get("/api/sessions")).Sessions
	got := map[string]summary{}
	var ids []string
	for _, s := range list {
		got[s.ID] = s
		ids = append(ids, s.ID)
	}
	if want := "log_20250101_000003/turn_1 log_20250101_000002/turn_2 log_20250101_000002/turn_1 log_20250101_000001/turn_1"; strings.Join(ids, " ") != want {
		t.Fatalf("ids %v, want %s", ids, want)
	}
	if s := got["log_20250101_000001/turn_1"]; s.Status != "incomplete" || s.Running || s.Question != "crashed" {
		t.Errorf("crashed session %+v", s)
	}
	if s := got["log_20250101_000002/turn_1"]; s.Status != "unknown" {
		t.Errorf("half-written metadata %+v", s)
	}
	if s := got["log_20250101_000003/turn_1"]; s.Status != "completed" || s.Team != "research" || s.Tokens.Total != 15 || !s.Tokens.Estimated || s.CostUSD != 0.5 {
		t.Errorf("finished session %+v", s)
	}
	if n := len(decode[struct{ Sessions []summary }](t, e.get("/api/sessions?limit=2")).Sessions); n != 2 {
		t.Errorf("limit=2 gave %d", n)
	}
	// The crashed session streams what it has (the cut line left out) and ends at once.
	start := time.Now()
	msgs := parseSSE(t, e.get("/api/sessions/log_20250101_000001/turn_1/stream").body)
	if len(msgs) != 2 || msgs[1].name != "end" || msgs[1].data != `{"status":"incomplete"}` || time.Since(start) > 5*time.Second {
		t.Errorf("stream of a crashed session %+v after %v", msgs, time.Since(start))
	}
}

func TestServe_ShutdownInterruptsSessionsWhichKeepTheirLogs(t *testing.T) {
	e := newEnv(t, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- e.srv.ServeListener(ctx, ln) }()
	base := "http://" + ln.Addr().String()
	resp, err := http.Post(base+"/api/runs", "application/json", strings.NewReader(`{"team":"hang","question":"q"}`))
	if err != nil {
		t.Fatal(err)
	}
	var started map[string]string
	err = json.NewDecoder(resp.Body).Decode(&started)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("start: %d %v", resp.StatusCode, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("ServeListener: %v", err)
	}
	if len(e.srv.runningSessions()) != 0 {
		t.Error("sessions still running after shutdown")
	}
	if end := lastEnd(t, e.turnEvents(started["id"])); end.Status != event.StatusInterrupted {
		t.Errorf("ended %+v", end)
	}
	if _, err := os.Stat(filepath.Join(e.root, started["id"], "metadata.json")); err != nil {
		t.Errorf("no metadata.json after shutdown: %v", err)
	}
	// After Close no session starts.
	wantError(t, e.post("/v1/chat/completions", chatBody("demo", false, "user", "q")), http.StatusServiceUnavailable, "shutting_down")
	http.DefaultClient.CloseIdleConnections()
}

func TestNewServer_RejectsBadOptions(t *testing.T) {
	cfg := loadTeam(t, "demo", fastDemo(t))
	for name, teams := range map[string]map[string]*config.Config{
		"no teams":  nil,
		"bad name":  {"../demo": cfg},
		"long name": {strings.Repeat("a", 65): cfg},
		"nil":       {"demo": nil},
	} {
		if _, err := NewServer(Options{Teams: teams, NoToken: true}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := NewServer(Options{Teams: map[string]*config.Config{"demo": cfg}, ReadTimeout: -time.Second, NoToken: true}); err == nil ||
		!strings.Contains(err.Error(), "read timeout") {
		t.Errorf("negative read timeout: %v", err)
	}
	// A caller that forgets the token must not get an open server: it chooses NoToken.
	for name, o := range map[string]Options{
		"no token, not NoToken": {Teams: map[string]*config.Config{"demo": cfg}},
		"a token and NoToken":   {Teams: map[string]*config.Config{"demo": cfg}, Token: "t0123456789", NoToken: true},
	} {
		if _, err := NewServer(o); err == nil || !strings.Contains(err.Error(), "NoToken") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if got := TeamName(cfg); got != "demo" {
		t.Errorf("TeamName = %q", got)
	}
}

// A session's detail lists every turn of its log folder, in numeric order, so the page of a
// follow-up links back to the turns before it (and they to it).
func TestAPI_SessionDetailListsItsTurns(t *testing.T) {
	e := newEnv(t, nil)
	for _, turn := range []string{"turn_1", "turn_2", "turn_10", "notes"} {
		if err := os.MkdirAll(filepath.Join(e.root, "log_20250101_000001", turn), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"log_20250101_000001/turn_1", "log_20250101_000001/turn_10"} {
		if got := decode[sessionDetail](t, e.get("/api/sessions/"+id)).Turns; !slices.Equal(got, []int{1, 2, 10}) {
			t.Errorf("%s lists turns %v, want [1 2 10]", id, got)
		}
	}
}
