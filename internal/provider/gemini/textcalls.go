package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"

	"google.golang.org/genai"

	"massgen/internal/lazy"
	"massgen/internal/provider"
)

// Tool calls as text. Gemini refuses Google Search or code execution beside function
// declarations (Gemini 3 accepts them only with server-side invocation round trips this
// backend does not do), yet coordination always offers function tools. So when both are
// asked for, the request carries only the hosted tools, the system instruction describes the
// function tools and a text protocol for calling them, and the stream turns fenced tool_call
// blocks at the end of the reply back into ToolCallChunks. MassGen's Gemini backend makes the
// same trade. Everything else (hosted runs, usage, stop reasons) works as with native calls.

// invalidToolCall names a tool_call block with no recoverable tool name. The engine answers
// it as an unknown tool, listing the real ones, which tells the model how to retry.
const invalidToolCall = "invalid_tool_call"

// textCallMode reports whether req's function tools must be called through text.
func textCallMode(o provider.Options, req provider.Request) bool {
	return (o.WebSearch || o.CodeExecution) && len(req.Tools) > 0
}

// withToolProtocol appends the tool section to the caller's system text, which stays first so
// that the cacheable prefix does not move.
func withToolProtocol(system string, specs []provider.ToolSpec, o provider.Options) (string, error) {
	var b strings.Builder
	if system != "" {
		b.WriteString(system + "\n\n")
	}
	b.WriteString("# Tools\nFunction calling is unavailable here: call the tools below by writing tool_call blocks. " +
		"Each tool is listed with what it does and the JSON Schema of its arguments.\n")
	for _, s := range specs {
		schema := "none"
		if s.Parameters != nil {
			var err error
			if schema, err = compactJSON(s.Parameters); err != nil {
				return "", fmt.Errorf("request: tool %q: parameters: %w", s.Name, err)
			}
		}
		b.WriteString("- " + s.Name)
		if d := strings.TrimSpace(s.Description); d != "" {
			b.WriteString(": " + strings.ReplaceAll(d, "\n", "\n  "))
		}
		b.WriteString("\n  arguments: " + schema + "\n")
	}
	b.WriteString("To call tools, end your reply with one block per call, each exactly:\n" +
		"```tool_call\n" +
		`{"name": "<tool name>", "arguments": {<arguments matching its schema>}}` + "\n" +
		"```\n" +
		"Several blocks are allowed; write nothing after the last one. Each block must be valid JSON: " +
		`inside strings, escape quotes and write line breaks as \n. ` +
		"Your text before the first block is the reply shown to the user; the blocks are not shown. " +
		`Each result comes back in the next user message as "Result of <tool> (call <id>)".`)
	switch {
	case o.WebSearch && o.CodeExecution:
		b.WriteString("\nGoogle Search and code execution are built in: use them directly, never through a tool_call block.")
	case o.WebSearch:
		b.WriteString("\nGoogle Search is built in: use it directly, never through a tool_call block.")
	case o.CodeExecution:
		b.WriteString("\nCode execution is built in: use it directly, never through a tool_call block.")
	}
	return b.String(), nil
}

// dropFunctionCallingConfig removes a configured functionCallingConfig: without declarations
// the API rejects it, and the text protocol does not need it.
func dropFunctionCallingConfig(body map[string]any) {
	tc, ok := body["toolConfig"].(map[string]any)
	if !ok {
		return
	}
	tc = maps.Clone(tc)
	delete(tc, "functionCallingConfig")
	if len(tc) == 0 {
		delete(body, "toolConfig")
		return
	}
	body["toolConfig"] = tc
}

// toTextContents is toWireContents for the text protocol: functionCall and functionResponse
// parts are invalid without declarations, so earlier calls become the tool_call blocks the
// model would have written, and results become user text naming the call.
func toTextContents(msgs []provider.Message, meta func(id string) callMeta) ([]*genai.Content, error) {
	if len(msgs) == 0 {
		return nil, errors.New("request: no messages")
	}
	var out turns
	names := map[string]string{} // call ID -> tool name, from the conversation so far
	for i, m := range msgs {
		switch m.Role {
		case provider.RoleUser:
			if m.Content != "" {
				out.add(genai.RoleUser, &genai.Part{Text: m.Content})
			}
		case provider.RoleAssistant:
			var text []string
			if s := strings.TrimRight(m.Content, " \t\r\n"); s != "" {
				text = append(text, s)
			}
			for _, c := range m.ToolCalls {
				names[c.ID] = c.Name
				text = append(text, callBlock(c, meta(c.ID).raw))
			}
			if len(text) > 0 {
				out.add(genai.RoleModel, &genai.Part{Text: strings.Join(text, "\n\n")})
			}
		case provider.RoleTool:
			name, ok := names[m.ToolCallID]
			if !ok {
				return nil, fmt.Errorf("request: message %d answers unknown tool call %q", i, m.ToolCallID)
			}
			head := fmt.Sprintf("Result of %s (call %s)", name, m.ToolCallID)
			if m.IsError {
				head += " [error]"
			}
			out.add(genai.RoleUser, &genai.Part{Text: head + ":\n" + m.Content})
		default:
			return nil, fmt.Errorf("request: message %d has unknown role %q", i, m.Role)
		}
	}
	return out.contents()
}

// callBlock renders a call as the block the model writes. A call whose block did not parse
// is replayed as written, so that the error the engine sent back matches what the model sees;
// so is one whose arguments are not an object, when the memory of the call is gone.
func callBlock(c provider.ToolCall, raw bool) string {
	body := strings.TrimSpace(c.Arguments)
	if body == "" {
		body = "{}"
	}
	if !raw && body[0] == '{' && json.Valid([]byte(body)) {
		var b bytes.Buffer
		if json.Compact(&b, []byte(body)) == nil {
			name, _ := compactJSON(c.Name) // a string always encodes
			body = `{"name":` + name + `,"arguments":` + b.String() + `}`
		}
	}
	return "```tool_call\n" + body + "\n```"
}

// textCalls holds back tool_call blocks from the streamed text. Text is passed on as it comes
// except for a line that may still turn into an opening fence, which waits for its end of
// line; from an opening fence on, everything is held and parsed when the stream ends.
type textCalls struct {
	line    string // an unfinished line that may open a fence
	midLine bool   // the text passed on so far ends inside a line
	holding bool
	held    strings.Builder
	blocks  []string // the bodies of the blocks, once tail has run
}

// feed takes a piece of answer text and returns what can be shown now.
func (s *textCalls) feed(text string) string {
	if s.holding {
		s.held.WriteString(text)
		return ""
	}
	buf := s.line + text
	s.line = ""
	for pos := 0; pos < len(buf); {
		rest := buf[pos:]
		nl := strings.IndexByte(rest, '\n')
		switch {
		case s.midLine && nl < 0:
			return buf
		case s.midLine:
			pos += nl + 1
			s.midLine = false
		case nl < 0:
			if mayOpenFence(rest) {
				s.line = rest
				return buf[:pos]
			}
			s.midLine = true
			return buf
		default:
			if _, ok := openingFence(rest[:nl]); ok {
				s.holding = true
				s.held.WriteString(rest)
				return buf[:pos]
			}
			pos += nl + 1
		}
	}
	return buf
}

// boundary is a non-text part (code, a code result) between pieces of text. The model starts
// the text after it afresh, so a fence may open right away.
func (s *textCalls) boundary() string {
	text := s.settle()
	s.midLine = false
	return text
}

// tail ends the text: it returns the text still to show, and keeps the block bodies.
func (s *textCalls) tail() string {
	text := s.settle()
	if s.holding {
		prose, blocks := splitBlocks(s.held.String())
		s.blocks = blocks
		text += prose
	}
	return text
}

// settle decides an unfinished line now that no more of it will come.
func (s *textCalls) settle() string {
	line := s.line
	s.line = ""
	if line == "" {
		return ""
	}
	if _, ok := openingFence(line); ok {
		s.holding = true
		s.held.WriteString(line)
		return ""
	}
	s.midLine = true
	return line
}

// textCallsEnd turns the held blocks into calls, each with a fresh ID. A stream that broke
// (no finish reason) yields none: its last block may be cut anywhere, and the call fails anyway.
func (t *translator) textCallsEnd() []provider.Chunk {
	if t.err != nil || t.finish == "" {
		return nil
	}
	var out []provider.Chunk
	for _, b := range t.text.blocks {
		name, args, ok := parseCall(b)
		id := t.nextID()
		if !ok {
			t.remember(id, callMeta{raw: true})
		}
		t.calls++
		out = append(out, provider.ToolCallChunk{Call: provider.ToolCall{ID: id, Name: name, Arguments: args}})
	}
	return out
}

const fence = "```"

// mayOpenFence reports whether an unfinished line could still become an opening fence.
func mayOpenFence(partial string) bool {
	l := strings.TrimLeft(partial, " \t")
	return strings.HasPrefix(fence, l) || strings.HasPrefix(l, fence)
}

// openingFence reports whether a whole line opens a tool_call block, and returns what follows
// the label on the same line (a block written on one line). The label may come with other
// words, such as "json", and any spacing.
func openingFence(line string) (rest string, ok bool) {
	l, ok := strings.CutPrefix(strings.TrimSpace(line), fence)
	if !ok {
		return "", false
	}
	info := strings.TrimLeft(l, "`")
	if i := strings.IndexByte(info, '{'); i >= 0 {
		info, rest = info[:i], info[i:]
	}
	for _, f := range strings.Fields(info) {
		if strings.EqualFold(f, "tool_call") {
			return rest, true
		}
	}
	return "", false
}

// splitBlocks separates the held text, which starts with an opening fence, into block bodies
// and the text around them (what the model wrote against the rules, kept rather than lost).
func splitBlocks(held string) (prose string, blocks []string) {
	lines := strings.Split(strings.ReplaceAll(held, "\r\n", "\n"), "\n")
	var text []string
	for i := 0; i < len(lines); {
		first, ok := openingFence(lines[i])
		if !ok {
			text = append(text, lines[i])
			i++
			continue
		}
		end := i + 1
		for end < len(lines) {
			if _, ok := openingFence(lines[end]); ok {
				break
			}
			end++
		}
		body, after := blockBody(append([]string{first}, lines[i+1:end]...))
		blocks = append(blocks, body)
		text = append(text, after...)
		i = end
	}
	prose = strings.Join(text, "\n")
	if strings.TrimSpace(prose) == "" {
		return "", blocks
	}
	return prose, blocks
}

// blockBody finds where a block closes. Answers often contain code fences of their own, so
// the block ends at the first closing fence before which the body is a valid call, else at
// the last one, else (the stream ended first) at the end.
func blockBody(lines []string) (body string, after []string) {
	var closes []int
	for k, l := range lines {
		if strings.HasSuffix(strings.TrimRight(l, " \t"), fence) {
			closes = append(closes, k)
		}
	}
	upTo := func(k int) string {
		last := strings.TrimRight(lines[k], " \t`")
		return strings.Join(append(lines[:k:k], last), "\n")
	}
	for _, k := range closes {
		if b := upTo(k); validCall(b) {
			return b, lines[k+1:]
		}
	}
	if n := len(closes); n > 0 {
		k := closes[n-1]
		return upTo(k), lines[k+1:]
	}
	return strings.Join(lines, "\n"), nil
}

func validCall(body string) bool {
	_, _, ok := parseCall(body)
	return ok
}

// nameField finds the tool name in a block that is not valid JSON.
var nameField = lazy.Regexp(`"name"\s*:\s*"([^"\\]+)"`)

// parseCall reads {"name": ..., "arguments": {...}} and returns the name and the compact
// arguments. Missing arguments mean none. A block that does not parse gives the name if it can
// be found, else invalidToolCall, and the block itself as the arguments, for the engine to
// reject with an error the model can act on.
func parseCall(body string) (name, args string, ok bool) {
	raw := strings.TrimSpace(body)
	if name, args, err := decodeCall([]byte(raw)); err == nil {
		return name, args, true
	}
	// Models writing long answers often put real line breaks inside JSON strings.
	if name, args, err := decodeCall(escapeControls(raw)); err == nil {
		return name, args, true
	}
	name = invalidToolCall
	if m := nameField().FindStringSubmatch(raw); m != nil {
		name = m[1]
	}
	return name, raw, false
}

func decodeCall(b []byte) (name, args string, err error) {
	var c struct {
		Name      *string         `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return "", "", fmt.Errorf("tool_call block: %w", err)
	}
	if c.Name == nil || *c.Name == "" {
		return "", "", errors.New("tool_call block: no name")
	}
	a := bytes.TrimSpace(c.Arguments)
	if len(a) == 0 || string(a) == "null" {
		return *c.Name, "{}", nil
	}
	if a[0] != '{' {
		return "", "", errors.New("tool_call block: arguments are not an object")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, a); err != nil {
		return "", "", fmt.Errorf("tool_call block: arguments: %w", err)
	}
	return *c.Name, buf.String(), nil
}

// escapeControls escapes the control characters JSON forbids inside strings.
func escapeControls(s string) []byte {
	var b bytes.Buffer
	in, esc := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			in = !in
		case in && c == '\n':
			b.WriteString(`\n`)
			continue
		case in && c == '\r':
			b.WriteString(`\r`)
			continue
		case in && c == '\t':
			b.WriteString(`\t`)
			continue
		case in && c < 0x20:
			fmt.Fprintf(&b, `\u%04x`, c)
			continue
		}
		b.WriteByte(c)
	}
	return b.Bytes()
}

// breaksText reports whether a part interrupts the answer text.
func breaksText(p *genai.Part) bool {
	return p.FunctionCall != nil || p.ExecutableCode != nil || p.CodeExecutionResult != nil
}

// appendText appends a TextDelta unless there is no text.
func appendText(out []provider.Chunk, text string) []provider.Chunk {
	if text == "" {
		return out
	}
	return append(out, provider.TextDelta{Text: text})
}

// compactJSON encodes v on one line, leaving <, > and & readable.
func compactJSON(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", fmt.Errorf("encode: %w", err)
	}
	return strings.TrimRight(b.String(), "\n"), nil
}
