package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// fakeMemoryAPI is a local OpenAI (Responses and embeddings) and Gemini (embeddings) server
// for memory: deterministic word-hash vectors, a fact extractor that keeps each sentence of
// the answer, a summariser that keeps the sentences holding a code, and agents whose answer
// is chosen from what their request shows (answerFor).
type fakeMemoryAPI struct {
	*httptest.Server
	answerFor func(text string) string
	// play, when set, plays the agents instead of answerFor and decide.
	play func(text string, offered []string, enum []any, answered bool) move
	// failEmbeddings makes the embeddings endpoints answer 500.
	failEmbeddings bool

	mu        sync.Mutex
	requests  []string // the text of every agent (coordination) request
	extracts  []string // the text of every extraction request
	summaries []string // the text of every summary request
	embedded  []string // every text embedded
	paths     []string
}

func newFakeMemoryAPI(t *testing.T, answerFor func(text string) string) *fakeMemoryAPI {
	t.Helper()
	f := &fakeMemoryAPI{answerFor: answerFor}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

// texts gathers every string in a decoded JSON body, in order.
func texts(v any, out *[]string) {
	switch x := v.(type) {
	case string:
		*out = append(*out, x)
	case []any:
		for _, e := range x {
			texts(e, out)
		}
	case map[string]any:
		for _, k := range []string{"instructions", "input", "content", "text", "parts", "contents", "requests", "output"} {
			if e, ok := x[k]; ok {
				texts(e, out)
			}
		}
	}
}

func bodyText(body map[string]any) string {
	var out []string
	texts(body, &out)
	return strings.Join(out, "\n")
}

var sentence = regexp.MustCompile(`[^.!?\n]+[.!?]`)

func (f *fakeMemoryAPI) serve(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, 400)
		return
	}
	f.mu.Lock()
	f.paths = append(f.paths, r.URL.Path)
	f.mu.Unlock()
	switch {
	case r.URL.Path == "/v1/embeddings":
		var in []string
		texts(body["input"], &in)
		f.embed(w, in, func(vecs [][]float32) any {
			data := make([]any, len(vecs))
			for i, v := range vecs {
				data[i] = map[string]any{"object": "embedding", "index": i, "embedding": v}
			}
			return map[string]any{"object": "list", "data": data, "model": body["model"],
				"usage": map[string]any{"prompt_tokens": 11 * len(in), "total_tokens": 11 * len(in)}}
		})
	case strings.HasSuffix(r.URL.Path, ":batchEmbedContents"):
		var in []string
		texts(body["requests"], &in)
		f.embed(w, in, func(vecs [][]float32) any {
			out := make([]any, len(vecs))
			for i, v := range vecs {
				out[i] = map[string]any{"values": v}
			}
			return map[string]any{"embeddings": out}
		})
	case r.URL.Path == "/v1/responses":
		text := bodyText(body)
		instr, _ := body["instructions"].(string)
		switch {
		case strings.HasPrefix(instr, "You keep a long-term memory"):
			f.mu.Lock()
			f.extracts = append(f.extracts, text)
			f.mu.Unlock()
			_, answer, _ := strings.Cut(text, "\nAnswer:\n")
			facts := sentence.FindAllString(answer, -1)
			for i := range facts {
				facts[i] = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(facts[i]), "FINAL:"))
			}
			b, _ := json.Marshal(map[string]any{"facts": facts})
			f.reply(w, string(b), body)
		case strings.HasPrefix(instr, "You compress"):
			f.mu.Lock()
			f.summaries = append(f.summaries, text)
			f.mu.Unlock()
			var keep []string
			for _, s := range sentence.FindAllString(text, -1) {
				if strings.Contains(s, "code") {
					keep = append(keep, strings.TrimSpace(s))
				}
			}
			f.reply(w, "Found so far: "+strings.Join(keep, " "), body)
		default:
			f.mu.Lock()
			f.requests = append(f.requests, text)
			f.mu.Unlock()
			w.Header().Set("Content-Type", "text/event-stream")
			if f.play != nil {
				openaiResponsesAs("", func(_ string, offered []string, enum []any, answered bool, _ map[string]any) move {
					return f.play(text, offered, enum, answered)
				})(w, body)
				return
			}
			openaiResponsesAs(f.answerFor(text), decide)(w, body)
		}
	default:
		http.Error(w, `{"error":{"message":"unexpected path"}}`, http.StatusNotFound)
	}
}

// reply streams text as a Responses API answer.
func (f *fakeMemoryAPI) reply(w http.ResponseWriter, text string, body map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	openaiResponsesAs(text, func(answer string, _ []string, _ []any, _ bool, _ map[string]any) move {
		return move{text: answer}
	})(w, body)
}

func (f *fakeMemoryAPI) embed(w http.ResponseWriter, in []string, shape func([][]float32) any) {
	f.mu.Lock()
	f.embedded = append(f.embedded, in...)
	fail := f.failEmbeddings
	f.mu.Unlock()
	if fail {
		http.Error(w, `{"error":{"message":"embedding model overloaded"}}`, http.StatusInternalServerError)
		return
	}
	vecs := make([][]float32, len(in))
	for i, s := range in {
		vecs[i] = wordVector(s)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(shape(vecs))
}

// wordVector is a deterministic embedding: each word adds to one of 64 dimensions, so texts
// that share words are near.
func wordVector(s string) []float32 {
	v := make([]float32, 64)
	for _, word := range strings.Fields(strings.ToLower(s)) {
		h := 0
		for _, r := range strings.Trim(word, ".,?!:'\"") {
			h = h*31 + int(r)
		}
		v[(h%63+63)%63]++
	}
	v[63] = 0.01
	return v
}

func (f *fakeMemoryAPI) snapshot() (requests, extracts, summaries, embedded []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.requests...), append([]string(nil), f.extracts...),
		append([]string(nil), f.summaries...), append([]string(nil), f.embedded...)
}

func memoryTeam(url, extra string) string {
	return fmt.Sprintf(`
agents:
  - id: keeper
    backend: {type: openai, model: gpt-5-mini, base_url: %s/v1}
timeout_settings: {agent_timeout_seconds: 20, orchestrator_timeout_seconds: 120}
%s`, url, extra)
}
