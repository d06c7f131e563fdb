package openai

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"

	"massgen/internal/provider"
	"massgen/internal/redact"
)

// FileSearch is the vector store of one agent's documents for one session, as MassGen's
// Responses backend makes it for upload_files' file_path entries: each document is uploaded
// through the Files API, the store is created and the files attached in one batch, and once
// they are indexed the file_search tool (Request.FileSearch) reads the store. Delete removes
// the store and the files when the session ends. Both ask for expiry too (the files 2 days
// after upload, the store after a day unused), so that a process killed before Delete does
// not leave them for good.
type FileSearch struct {
	o      provider.Options
	files  sdk.FileService
	stores sdk.VectorStoreService
	red    *redact.Redactor
	// PollInterval is the wait between two looks at the batch's indexing; 0 takes the
	// server's suggestion, else the SDK's default (1 s).
	PollInterval time.Duration

	mu      sync.Mutex
	storeID string
	fileIDs []string
}

// Expiry of what FileSearch makes, should Delete never run.
const (
	fileExpirySeconds = 2 * 24 * 60 * 60
	storeExpiryDays   = 1
	// indexWait bounds the wait for the documents to be indexed.
	indexWait = 10 * time.Minute
)

// NewFileSearch readies the Files and Vector Stores services for o's endpoint and key. Like
// New it reads nothing from the environment.
func NewFileSearch(o provider.Options) *FileSearch {
	if o.Type == "" {
		o.Type = "openai"
	}
	opts := requestOptions(o)
	return &FileSearch{o: o, files: sdk.NewFileService(opts...), stores: sdk.NewVectorStoreService(opts...), red: o.Redactor()}
}

// Upload uploads docs, creates a vector store called name holding them, and waits until they
// are indexed; it returns the store's id. What it made is recorded as soon as it exists, so
// that Delete removes it whether Upload succeeded, failed or was cancelled.
func (f *FileSearch) Upload(ctx context.Context, name string, docs []provider.Attachment) (string, error) {
	if len(docs) == 0 {
		return "", errors.New("upload_files: no documents to search")
	}
	var ids []string
	for _, d := range docs {
		obj, err := f.files.New(ctx, sdk.FileNewParams{
			File:         sdk.File(bytes.NewReader(d.Data), d.Name, d.MIME),
			Purpose:      sdk.FilePurposeAssistants,
			ExpiresAfter: sdk.FileNewParamsExpiresAfter{Seconds: fileExpirySeconds},
		})
		if err != nil {
			return "", f.fail("upload "+d.Name, err)
		}
		f.mu.Lock()
		f.fileIDs = append(f.fileIDs, obj.ID)
		f.mu.Unlock()
		ids = append(ids, obj.ID)
	}
	store, err := f.stores.New(ctx, sdk.VectorStoreNewParams{
		Name:         param.NewOpt(name),
		Metadata:     map[string]string{"created_by": "massgen"},
		ExpiresAfter: sdk.VectorStoreNewParamsExpiresAfter{Days: storeExpiryDays},
	})
	if err != nil {
		return "", f.fail("create the vector store", err)
	}
	f.mu.Lock()
	f.storeID = store.ID
	f.mu.Unlock()
	wctx, cancel := context.WithTimeout(ctx, indexWait)
	defer cancel()
	batch, err := f.stores.FileBatches.NewAndPoll(wctx, store.ID, sdk.VectorStoreFileBatchNewParams{FileIDs: ids},
		int(f.PollInterval.Milliseconds()))
	switch {
	case err != nil && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		return "", fmt.Errorf("upload_files: the documents were not indexed within %v: try again, or send fewer", indexWait)
	case err != nil:
		return "", f.fail("index the documents", err)
	case batch.Status != sdk.VectorStoreFileBatchStatusCompleted:
		return "", fmt.Errorf("upload_files: indexing the documents in vector store %s ended %s", store.ID, batch.Status)
	case batch.FileCounts.Failed > 0 || batch.FileCounts.Cancelled > 0:
		return "", fmt.Errorf("upload_files: %d of %d documents could not be indexed for file search (an empty, scanned or unsupported file?)",
			batch.FileCounts.Failed+batch.FileCounts.Cancelled, len(ids))
	}
	return store.ID, nil
}

// Made lists what Upload has made so far: the store ("" before it exists) and the files.
func (f *FileSearch) Made() (store string, files []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.storeID, append([]string(nil), f.fileIDs...)
}

// Delete removes the vector store, then the uploaded files. Something already gone counts
// as deleted. It returns how many of each it removed and what it could not remove; it may be
// called again, and only retries what is left.
func (f *FileSearch) Delete(ctx context.Context) (stores, files int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var errs []error
	if f.storeID != "" {
		if _, derr := f.stores.Delete(ctx, f.storeID); derr != nil && !notFound(derr) {
			errs = append(errs, f.fail("delete vector store "+f.storeID, derr))
		} else {
			stores++
			f.storeID = ""
		}
	}
	left := f.fileIDs[:0]
	for _, id := range f.fileIDs {
		if _, derr := f.files.Delete(ctx, id); derr != nil && !notFound(derr) {
			errs = append(errs, f.fail("delete file "+id, derr))
			left = append(left, id)
			continue
		}
		files++
	}
	f.fileIDs = left
	return stores, files, errors.Join(errs...)
}

func notFound(err error) bool {
	var ae *sdk.Error
	return errors.As(err, &ae) && ae.StatusCode == http.StatusNotFound
}

// fail words a failed Files or Vector Stores request like a failed model call: a rejected
// key names its variable, and nothing of the key reaches the message.
func (f *FileSearch) fail(what string, err error) error {
	var ae *sdk.Error
	if errors.As(err, &ae) {
		e := provider.StatusError(f.o, ae.StatusCode, f.red.Message(apiDetail(ae)))
		return fmt.Errorf("upload_files: %s: %w", what, e)
	}
	return fmt.Errorf("upload_files: %s: %s", what, f.red.Message(err.Error()))
}
