package media

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// zipBytes sniffs as a zip archive, as a pptx does.
var zipBytes = append([]byte("PK\x03\x04\x14\x00\x00\x00"), make([]byte, 64)...)

// genFake is how the fake's generation endpoints behave: OpenAI's videos API, Gemini's
// predictLongRunning operations and file download, Chat Completions and the code
// interpreter's containers. The zero value makes every video after one in_progress check.
type genFake struct {
	// pending is how many checks answer in_progress (not done) before the job completes;
	// negative: it never does.
	pending int
	// failure makes the job fail with this message.
	failure string
	// content serves the video (nil: mp4Bytes as video/mp4).
	content func(w http.ResponseWriter)
	// inline puts Veo's video in the operation (base64) instead of a file to download.
	inline bool
	// checks counts the job checks served.
	checks int
	// text is what Chat Completions answers; cite is the file the code interpreter's reply cites
	// ("" cites none).
	text, cite string
}

// serveGeneration answers the generation endpoints; it reports whether r was one.
func (f *fakeProviders) serveGeneration(w http.ResponseWriter, r *http.Request, body []byte) bool {
	f.mu.Lock()
	content := f.gen.content
	ok := f.answerGeneration(w, r, body, content == nil)
	f.mu.Unlock()
	if ok == "content" {
		content(w) // unlocked: it may take long
	}
	return ok != ""
}

// answerGeneration writes the answer, or returns "content" for a video or file to be served
// by gen.content (when own is false); "" when r is not a generation endpoint.
func (f *fakeProviders) answerGeneration(w http.ResponseWriter, r *http.Request, body []byte, own bool) string {
	g := &f.gen
	p := r.URL.Path
	w.Header().Set("Content-Type", "application/json")
	check := func() (done bool) {
		g.checks++
		return g.pending >= 0 && g.checks > g.pending
	}
	switch {
	case p == "/v1/videos" && r.Method == http.MethodPost:
		_, _ = io.WriteString(w, `{"id":"video_123","object":"video","model":"sora-2","status":"queued","progress":0,"created_at":1,"seconds":"4","size":"720x1280"}`)
	case strings.HasPrefix(p, "/v1/videos/") && strings.HasSuffix(p, "/content"):
		if !own {
			return "content"
		}
		w.Header().Set("Content-Type", "video/mp4")
		_, _ = w.Write(mp4Bytes)
	case strings.HasPrefix(p, "/v1/videos/"):
		switch {
		case !check():
			fmt.Fprintf(w, `{"id":"video_123","object":"video","model":"sora-2","status":"in_progress","progress":%d,"created_at":1,"seconds":"8","size":"1280x720"}`, min(g.checks*10, 99))
		case g.failure != "":
			fmt.Fprintf(w, `{"id":"video_123","object":"video","model":"sora-2","status":"failed","progress":100,"created_at":1,"error":{"code":"moderation_blocked","message":%q}}`, g.failure)
		default:
			_, _ = io.WriteString(w, `{"id":"video_123","object":"video","model":"sora-2","status":"completed","progress":100,"created_at":1,"completed_at":2,"seconds":"8","size":"1280x720"}`)
		}
	case strings.HasSuffix(p, ":predictLongRunning"):
		model := strings.TrimSuffix(strings.TrimPrefix(p, "/v1beta/models/"), ":predictLongRunning")
		fmt.Fprintf(w, `{"name":"models/%s/operations/op123"}`, model)
	case strings.Contains(p, "/operations/"):
		name := strings.TrimPrefix(p, "/v1beta/")
		switch {
		case !check():
			fmt.Fprintf(w, `{"name":%q,"metadata":{"@type":"type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningMetadata"}}`, name)
		case g.failure != "":
			fmt.Fprintf(w, `{"name":%q,"done":true,"error":{"code":3,"message":%q}}`, name, g.failure)
		case g.inline:
			b, _ := json.Marshal(mp4Bytes)
			fmt.Fprintf(w, `{"name":%q,"done":true,"response":{"@type":"type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse",`+
				`"generateVideoResponse":{"generatedSamples":[{"video":{"encodedVideo":%s,"encoding":"video/mp4"}}]}}}`, name, b)
		default:
			fmt.Fprintf(w, `{"name":%q,"done":true,"response":{"@type":"type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse",`+
				`"generateVideoResponse":{"generatedSamples":[{"video":{"uri":"https://generativelanguage.googleapis.com/v1beta/files/abc123:download?alt=media"}}]}}}`, name)
		}
	case p == "/v1beta/files/abc123:download":
		if !own {
			return "content"
		}
		w.Header().Set("Content-Type", "video/mp4")
		_, _ = w.Write(mp4Bytes)
	case p == "/v1/chat/completions":
		text, _ := json.Marshal(cmpOr(g.text, "# Report\n\nThe plan (in short) works.\n\n- one\n- two\n"))
		fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"finish_reason":"stop",`+
			`"message":{"role":"assistant","content":%s}}],"usage":{"prompt_tokens":100,"completion_tokens":1000,"total_tokens":1100}}`, text)
	case p == "/v1/responses" && strings.Contains(string(body), `"code_interpreter"`):
		ann := ""
		if g.cite != "" {
			ann = fmt.Sprintf(`{"type":"container_file_citation","container_id":"cntr_1","file_id":"cfile_1","filename":%q,"start_index":0,"end_index":5}`, g.cite)
		}
		fmt.Fprintf(w, `{"id":"resp_3","object":"response","created_at":1,"status":"completed","model":"gpt-4o","output":[`+
			`{"type":"code_interpreter_call","id":"ci_1","status":"completed","container_id":"cntr_1","code":"prs.save('/mnt/data/deck.pptx')","outputs":[]},`+
			`{"type":"message","id":"msg_2","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Saved the deck.","annotations":[%s]}]}],`+
			`"usage":{"input_tokens":200,"input_tokens_details":{"cached_tokens":0},"output_tokens":300,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":500}}`, ann)
	case p == "/v1/containers/cntr_1/files/cfile_1/content":
		if !own {
			return "content"
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(zipBytes)
	default:
		return ""
	}
	return "answered"
}

// endless serves a body that never ends, as fast as the client reads it.
func endless(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "video/mp4")
	chunk := make([]byte, 1<<20)
	copy(chunk, mp4Bytes)
	for {
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
}
