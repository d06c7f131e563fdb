package mcpserve

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// Over stdio, as a client's raw JSON-RPC lines show it: every progress notification of a call
// is written before its result, the last one saying how the session ended; closing stdin ends
// the server cleanly.
func TestServeStdio_ProgressBeforeResult(t *testing.T) {
	srv := newServer(t, Options{Teams: []Team{{Name: "demo", Config: demo(t, true)}}})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- srv.ServeStdio(t.Context(), inR, outW)
		outW.Close()
	}()
	lines := bufio.NewScanner(outR)
	lines.Buffer(nil, 1<<20)
	send := func(msg string) {
		t.Helper()
		if _, err := io.WriteString(inW, msg+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	type message struct {
		ID     *int            `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	// next reads messages until the response to id, returning the notifications before it.
	next := func(id int) (notes []message, resp message) {
		t.Helper()
		for lines.Scan() {
			var m message
			if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
				t.Fatalf("not JSON-RPC on stdout: %q", lines.Text())
			}
			if m.ID != nil && *m.ID == id && m.Method == "" {
				return notes, m
			}
			notes = append(notes, m)
		}
		t.Fatalf("stdout ended before the response to %d: %v", id, lines.Err())
		return nil, message{}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if _, resp := next(1); resp.Error != nil {
		t.Fatalf("initialize: %s", resp.Error)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask_team","arguments":{"question":"What is the capital of France?"},"_meta":{"progressToken":7}}}`)
	notes, resp := next(2)
	var res struct {
		IsError           bool `json:"isError"`
		StructuredContent struct {
			Winner string `json:"winner"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(resp.Result, &res); err != nil || res.IsError || res.StructuredContent.Winner != "researcher" {
		t.Fatalf("result %s %s (%v)", resp.Result, resp.Error, err)
	}
	var last string
	n := 0
	for _, m := range notes {
		if m.Method != "notifications/progress" {
			continue
		}
		var p struct {
			Token   int    `json:"progressToken"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal(m.Params, &p); err != nil || p.Token != 7 {
			t.Fatalf("progress %s: %v", m.Params, err)
		}
		last = p.Message
		n++
	}
	if n < 10 || !strings.HasPrefix(last, "session completed") {
		t.Fatalf("%d progress notifications before the result, the last %q", n, last)
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatalf("ServeStdio after stdin closed: %v", err)
	}
}
