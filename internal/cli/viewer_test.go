package cli

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"massgen/internal/testio"
)

func TestViewer_PlaysAsTextWithoutATerminal(t *testing.T) {
	dir := twoTurnSession(t)
	tests := []struct {
		name      string
		args      []string
		stdin     string
		want, not []string
	}{
		{"the newest session, every turn", []string{"viewer"}, "", []string{"== " + dir + "/turn_1", "== " + dir + "/turn_2", "And now?"}, nil},
		{"one turn", []string{"viewer", "--turn", "2"}, "", []string{"massgen: 1 agent on: And now?"}, []string{"What is in the notes?", "== "}},
		{"by id", []string{"viewer", dir[strings.LastIndex(dir, "log_"):], "--replay-speed", "0"}, "", []string{"What is in the notes?"}, nil},
		{"picked", []string{"viewer", "--pick"}, "1\n1\n", []string{"Session [1-1, Enter for 1]: ", "Turn [1-2, Enter for all]: ", "What is in the notes?"}, []string{"And now?"}},
		{"picked, every turn", []string{"viewer", "--pick"}, "\n\n", []string{"What is in the notes?", "And now?"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := massgen(t, tc.stdin, tc.args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out, errs)
			}
			if !strings.Contains(errs, "no terminal to play the session on, so it is printed as text") {
				t.Errorf("stderr: %s", errs)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(out, n) {
					t.Errorf("output has %q:\n%s", n, out)
				}
			}
		})
	}
}

func TestViewer_Errors(t *testing.T) {
	twoTurnSession(t)
	tests := []struct {
		args  []string
		stdin string
		want  string
	}{
		{[]string{"viewer", "--turn", "9"}, "", "--turn 9: the session has turns 1, 2"},
		{[]string{"viewer", "--attempt", "2"}, "", "this build writes one attempt per turn"},
		{[]string{"viewer", "--replay-speed", "-1"}, "", "--replay-speed -1"},
		{[]string{"viewer", "--no-browser"}, "", "go with --web"},
		{[]string{"viewer", "--port", "9000"}, "", "--port and --no-browser go with --web"},
		{[]string{"viewer", "--pick"}, "7\n", `--pick: "7" is not a number from 1 to 1`},
		{[]string{"viewer", "--pick"}, "", "--pick needs an answer"},
		{[]string{"viewer", "--port", "70000", "--web"}, "", "--port 70000"},
		{[]string{"viewer", "log_nosuch"}, "", "no such session"},
	}
	for _, tc := range tests {
		code, out, errs := massgen(t, tc.stdin, tc.args...)
		if code != ExitConfig || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q\n%s", tc.args, code, errs, tc.want, out)
		}
	}
}

func TestViewer_Web(t *testing.T) {
	dir := twoTurnSession(t)
	id := dir[strings.LastIndex(dir, "log_"):]
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out, errs testio.Buffer
	done := make(chan int)
	go func() {
		done <- Execute(ctx, []string{"viewer", "--web", "--port", "0", "--no-browser", "--turn", "1", "--replay-speed", "4"}, strings.NewReader(""), &out, &errs)
	}()
	page := regexp.MustCompile(`at (http://127\.0\.0\.1:\d+/)\?token=([\w-]+)#/replay/(\S+)\?speed=4 `)
	var m []string
	for deadline := time.Now().Add(5 * time.Second); m == nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no replay URL printed:\n%s\n%s", out.String(), errs.String())
		}
		m = page.FindStringSubmatch(out.String())
	}
	if m[3] != id+"/turn_1" {
		t.Errorf("replay page of %s, want %s/turn_1", m[3], id)
	}
	// The dashboard can start runs: without the token, nothing.
	if resp, err := http.Get(m[1] + "api/sessions"); err != nil || resp.Body.Close() != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without the token: %v %v", resp, err)
	}
	resp, err := bearerGet(t, m[1]+"api/sessions/"+m[3]+"/events", m[2])
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "What is in the notes?") {
		t.Errorf("events of the replayed turn: %d %.200s", resp.StatusCode, body)
	}
	cancel()
	if code := <-done; code != 0 || !strings.Contains(out.String(), "massgen viewer: stopped") {
		t.Errorf("exit %d\n%s\n%s", code, out.String(), errs.String())
	}
}

// massgen replay without LOGDIR replays the newest session; the events.jsonl file is taken
// for its folder.
func TestReplay_DefaultsToTheNewestSession(t *testing.T) {
	dir := twoTurnSession(t)
	for _, args := range [][]string{{"replay"}, {"replay", dir + "/turn_2/events.jsonl"}} {
		code, out, errs := massgen(t, "", args...)
		if code != 0 || !strings.Contains(out, "And now?") {
			t.Errorf("%v: exit %d\n%s\n%s", args, code, out, errs)
		}
	}
	t.Chdir(t.TempDir())
	if code, _, errs := massgen(t, "", "replay"); code != ExitConfig || !strings.Contains(errs, "no sessions in") {
		t.Errorf("no sessions: exit %d %s", code, errs)
	}
}

// massgen viewer without LOGDIR and without any session says so, and how to make one.
func TestViewer_NoSessions(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, args := range [][]string{{"viewer"}, {"viewer", "--web", "--no-browser"}} {
		code, out, errs := massgen(t, "", args...)
		if code != 1 || !strings.Contains(errs, `no sessions in .massgen/massgen_logs yet: run massgen "your question" to start one`) {
			t.Errorf("%v: exit %d\n%s\n%s", args, code, out, errs)
		}
	}
}
