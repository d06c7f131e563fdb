package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"massgen/internal/event"
	"massgen/internal/permission"
)

const humanBroadcastConfig = `
agents:
  - id: asker
    backend:
      type: scripted
      answers: ["Blue, as asked."]
      tool_calls: [{name: ask_others, args: {question: "Which colour?"}}]
  - id: other
    backend: {type: scripted, answers: ["Red."]}
orchestrator:
  coordination: {broadcast: human, broadcast_timeout: 60}
`

// --automation --inbox-dir: the run prints RUNTIME_INBOX, and a script answers the agent's
// question by dropping a msg_*.json file there; until the question is asked such a file is
// rejected (with an INBOX: line), so the script writes it again.
func TestAutomation_InboxAnswersQuestion(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "inbox")
	logs := t.TempDir()
	cfg := writeConfig(t, humanBroadcastConfig)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for n := 1; ; n++ {
			name := filepath.Join(dir, fmt.Sprintf("msg_%03d.json", n))
			_ = os.WriteFile(name+".tmp", []byte(`{"request_id": "bc_1", "content": "Blue"}`), 0o600)
			_ = os.Rename(name+".tmp", name)
			for {
				select {
				case <-stop:
					return
				case <-time.After(50 * time.Millisecond):
				}
				if _, err := os.Stat(name + ".done"); err == nil {
					return
				}
				if _, err := os.Stat(name + ".rejected"); err == nil {
					break
				}
			}
		}
	})
	code, out, stderr := execute(t, t.Context(), "--automation", "--inbox-dir", dir, "--config", cfg, "--log-root", logs, "Paint it?")
	close(stop)
	wg.Wait()
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	lines := automationLines(out)
	abs, _ := filepath.Abs(dir)
	if lines["RUNTIME_INBOX"] != abs {
		t.Fatalf("RUNTIME_INBOX %q, want %q\n%s", lines["RUNTIME_INBOX"], abs, out)
	}
	evs := turnEvents(t, out)
	var answered []event.BroadcastAnswered
	for _, e := range evs {
		if p, ok := e.Payload.(event.BroadcastAnswered); ok {
			answered = append(answered, p)
		}
	}
	if len(answered) != 1 || answered[0].Responder != event.ResponderHuman || answered[0].Content != "Blue" {
		t.Fatalf("answers %+v\n%s\n%s", answered, stderr, out)
	}
	// The agent read it as its call's result.
	var result string
	for _, e := range evs {
		if p, ok := e.Payload.(event.ToolResult); ok && p.Tool == "ask_others" {
			result = p.Content
		}
	}
	if !strings.Contains(result, `"status":"complete"`) || !strings.Contains(result, `"content":"Blue","is_human":true`) {
		t.Fatalf("ask_others result %q does not carry the person's answer", result)
	}
}

// Without anybody to ask (automation, no --inbox-dir), a question ends at once as timed out,
// and the session goes on.
func TestAutomation_QuestionWithNobodyToAsk(t *testing.T) {
	logs := t.TempDir()
	code, out, stderr := execute(t, t.Context(), "--automation", "--config", writeConfig(t, humanBroadcastConfig), "--log-root", logs, "Paint it?")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	if _, ok := automationLines(out)["RUNTIME_INBOX"]; ok {
		t.Errorf("RUNTIME_INBOX printed without --inbox-dir:\n%s", out)
	}
	var done []event.BroadcastDone
	for _, e := range turnEvents(t, out) {
		if p, ok := e.Payload.(event.BroadcastDone); ok {
			done = append(done, p)
		}
	}
	if len(done) != 1 || done[0].Status != event.BroadcastTimeout || !strings.Contains(done[0].Note, "nobody can answer") {
		t.Fatalf("broadcast_done %+v", done)
	}
}

// A file the inbox cannot use is set aside as .rejected with a reason, never acted on.
func TestInbox_RejectsBadFiles(t *testing.T) {
	dir := t.TempDir()
	var errs strings.Builder
	in, err := newInbox(dir, &errs)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"msg_1.json": `not json`,
		"msg_2.json": `{"request_id": "bc_9", "content": "late"}`,
		"msg_3.json": `{"request_id": "bc_9"}`,
		"msg_4.json": `{}`,
		"msg_5.json": strings.Repeat(" ", maxInboxFile+1),
	}
	for n, body := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "msg_6.json")); err != nil {
		t.Fatal(err)
	}
	tb := &turnInbox{inbox: in, broker: permission.NewBroker()}
	tb.scan()
	for _, n := range []string{"msg_1.json", "msg_2.json", "msg_3.json", "msg_4.json", "msg_5.json", "msg_6.json"} {
		if _, err := os.Lstat(filepath.Join(dir, n+".rejected")); err != nil {
			t.Errorf("%s was not rejected: %v", n, err)
		}
	}
	for _, want := range []string{"msg_1.json rejected: not a JSON object", "msg_2.json rejected: no such ask is waiting: bc_9",
		`msg_3.json rejected: give "content"`, "msg_5.json rejected: 65537 bytes", "msg_6.json rejected: not a regular file"} {
		if !strings.Contains(errs.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs.String())
		}
	}
}
