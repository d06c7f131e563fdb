package providertest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// OpenAIFiles is a fake of OpenAI's Files and Vector Stores endpoints, in their wire format:
// a multipart upload to /files, JSON to /vector_stores and its file_batches, the batch's
// status polled until it is no longer in_progress, and DELETEs. It checks the bearer key and
// the assistants=v2 header the vector store endpoints require. Serve answers a request to one
// of its endpoints (under /v1) and reports whether it did, so that a test server can pass the
// others (/v1/responses) on.
type OpenAIFiles struct {
	// Key is the bearer key every request must carry ("" accepts any).
	Key string
	// PendingPolls is how many looks at a batch answer in_progress before it completes;
	// Hang keeps it in_progress for ever. Failed files fail to index.
	PendingPolls int
	Hang         bool
	Failed       int
	// DeleteStatus, when set, answers every DELETE with that status and an error.
	DeleteStatus int

	mu      sync.Mutex
	seq     int
	files   map[string]FakeFile
	stores  map[string]*FakeStore
	polls   int
	deleted []string
	// Started is closed at the first batch poll, for tests that cancel while indexing runs.
	Started chan struct{}
}

// FakeFile is an uploaded file as the fake received it.
type FakeFile struct {
	Name, Purpose, ContentType string
	Data                       []byte
	// Form holds the other multipart fields (expires_after[...]).
	Form map[string]string
}

// FakeStore is a vector store as the fake received it.
type FakeStore struct {
	Name     string
	Body     map[string]any // the creation request
	FileIDs  []string
	batches  map[string]int // batch id -> polls seen
	batchIDs []string
}

// NewOpenAIFiles returns an empty fake.
func NewOpenAIFiles(key string) *OpenAIFiles {
	return &OpenAIFiles{Key: key, files: map[string]FakeFile{}, stores: map[string]*FakeStore{}, Started: make(chan struct{})}
}

// Files are the files uploaded and not deleted, by id.
func (f *OpenAIFiles) Files() map[string]FakeFile {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]FakeFile{}
	for k, v := range f.files {
		out[k] = v
	}
	return out
}

// Stores are the vector stores made and not deleted, by id.
func (f *OpenAIFiles) Stores() map[string]FakeStore {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]FakeStore{}
	for k, v := range f.stores {
		out[k] = *v
	}
	return out
}

// Deleted lists the ids deleted, in order.
func (f *OpenAIFiles) Deleted() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.deleted...)
}

// Polls counts the looks at batches.
func (f *OpenAIFiles) Polls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.polls
}

func (f *OpenAIFiles) id(prefix string) string {
	f.seq++
	return fmt.Sprintf("%s%d", prefix, f.seq)
}

// Serve answers r when it is for one of the fake's endpoints.
func (f *OpenAIFiles) Serve(w http.ResponseWriter, r *http.Request) bool {
	p := strings.TrimPrefix(r.URL.Path, "/v1")
	parts := strings.Split(strings.Trim(p, "/"), "/")
	if len(parts) == 0 || (parts[0] != "files" && parts[0] != "vector_stores") {
		return false
	}
	if f.Key != "" && r.Header.Get("Authorization") != "Bearer "+f.Key {
		apiError(w, http.StatusUnauthorized, "Incorrect API key provided.")
		return true
	}
	if parts[0] == "vector_stores" && r.Header.Get("OpenAI-Beta") != "assistants=v2" {
		apiError(w, http.StatusBadRequest, "You must provide the 'OpenAI-Beta' header to access the Assistants API.")
		return true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && p == "/files":
		f.upload(w, r)
	case r.Method == http.MethodDelete && len(parts) == 2 && parts[0] == "files":
		f.remove(w, parts[1], "file", func() bool { _, ok := f.files[parts[1]]; delete(f.files, parts[1]); return ok })
	case r.Method == http.MethodPost && p == "/vector_stores":
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			apiError(w, http.StatusBadRequest, "bad json")
			return true
		}
		id := f.id("vs_")
		name, _ := body["name"].(string)
		f.stores[id] = &FakeStore{Name: name, Body: body, batches: map[string]int{}}
		writeJSON(w, map[string]any{"id": id, "object": "vector_store", "created_at": 1, "name": name, "usage_bytes": 0,
			"file_counts": counts(0, 0, 0), "status": "completed", "expires_after": body["expires_after"], "expires_at": nil,
			"last_active_at": 1, "metadata": body["metadata"]})
	case r.Method == http.MethodDelete && len(parts) == 2:
		f.remove(w, parts[1], "vector_store.deleted", func() bool { _, ok := f.stores[parts[1]]; delete(f.stores, parts[1]); return ok })
	case r.Method == http.MethodPost && len(parts) == 3 && parts[2] == "file_batches":
		f.newBatch(w, r, parts[1])
	case r.Method == http.MethodGet && len(parts) == 4 && parts[2] == "file_batches":
		f.poll(w, parts[1], parts[3])
	default:
		apiError(w, http.StatusNotFound, "Invalid URL ("+r.Method+" "+r.URL.Path+")")
	}
	return true
}

func (f *OpenAIFiles) upload(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseMultipartForm(64 << 20); err != nil {
		apiError(w, http.StatusBadRequest, "not a multipart upload: "+err.Error())
		return
	}
	file, hdr, err := r.FormFile("file")
	if err != nil {
		apiError(w, http.StatusBadRequest, "'file' is a required property")
		return
	}
	defer file.Close()
	data, _ := io.ReadAll(file)
	purpose := r.FormValue("purpose")
	if purpose == "" {
		apiError(w, http.StatusBadRequest, "'purpose' is a required property")
		return
	}
	form := map[string]string{}
	for k, v := range r.MultipartForm.Value {
		if k != "purpose" && len(v) > 0 {
			form[k] = v[0]
		}
	}
	id := f.id("file-")
	f.files[id] = FakeFile{Name: hdr.Filename, Purpose: purpose, ContentType: hdr.Header.Get("Content-Type"), Data: data, Form: form}
	writeJSON(w, map[string]any{"id": id, "object": "file", "bytes": len(data), "created_at": 1, "filename": hdr.Filename,
		"purpose": purpose, "status": "processed"})
}

func (f *OpenAIFiles) remove(w http.ResponseWriter, id, object string, del func() bool) {
	if f.DeleteStatus != 0 {
		apiError(w, f.DeleteStatus, "The server had an error while processing your request.")
		return
	}
	if !del() {
		apiError(w, http.StatusNotFound, "No such object: "+id)
		return
	}
	f.deleted = append(f.deleted, id)
	writeJSON(w, map[string]any{"id": id, "object": object, "deleted": true})
}

func (f *OpenAIFiles) newBatch(w http.ResponseWriter, r *http.Request, store string) {
	s, ok := f.stores[store]
	if !ok {
		apiError(w, http.StatusNotFound, "No vector store found with id '"+store+"'.")
		return
	}
	var body struct {
		FileIDs []string `json:"file_ids"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.FileIDs) == 0 {
		apiError(w, http.StatusBadRequest, "file_ids is required")
		return
	}
	for _, id := range body.FileIDs {
		if _, ok := f.files[id]; !ok {
			apiError(w, http.StatusNotFound, "No file found with id '"+id+"'.")
			return
		}
	}
	id := f.id("vsfb_")
	s.FileIDs = append(s.FileIDs, body.FileIDs...)
	s.batches[id] = 0
	s.batchIDs = append(s.batchIDs, id)
	writeJSON(w, batch(id, store, "in_progress", counts(len(body.FileIDs), 0, 0)))
}

func (f *OpenAIFiles) poll(w http.ResponseWriter, store, id string) {
	s, ok := f.stores[store]
	if !ok {
		apiError(w, http.StatusNotFound, "No vector store found with id '"+store+"'.")
		return
	}
	n, ok := s.batches[id]
	if !ok {
		apiError(w, http.StatusNotFound, "No batch found with id '"+id+"'.")
		return
	}
	if f.polls == 0 {
		close(f.Started)
	}
	f.polls++
	s.batches[id] = n + 1
	total := len(s.FileIDs)
	if f.Hang || n < f.PendingPolls {
		w.Header().Set("openai-poll-after-ms", "5")
		writeJSON(w, batch(id, store, "in_progress", counts(total, 0, 0)))
		return
	}
	failed := min(f.Failed, total)
	writeJSON(w, batch(id, store, "completed", counts(0, total-failed, failed)))
}

func counts(inProgress, completed, failed int) map[string]any {
	return map[string]any{"in_progress": inProgress, "completed": completed, "failed": failed, "cancelled": 0,
		"total": inProgress + completed + failed}
}

func batch(id, store, status string, c map[string]any) map[string]any {
	return map[string]any{"id": id, "object": "vector_store.files_batch", "created_at": 1, "vector_store_id": store,
		"status": status, "file_counts": c}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func apiError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": nil, "code": nil}})
}
