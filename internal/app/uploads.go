package app

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"strings"
	"time"

	"massgen/internal/config"
	"massgen/internal/engine"
	"massgen/internal/event"
	"massgen/internal/media"
	"massgen/internal/provider"
	"massgen/internal/provider/anthropic"
	"massgen/internal/provider/chat"
	"massgen/internal/provider/gemini"
	"massgen/internal/provider/openai"
	"massgen/internal/redact"
)

// upload_files for a session: every agent's files are read before anything starts (a bad
// entry is a config error), each model call carries them (attaching), and an OpenAI agent's
// documents go into a vector store made for the session, deleted when it ends however it
// ends: success, failure, timeout or Ctrl-C.

// cleanupWait bounds the deletion of the vector stores and files once the session is over.
const cleanupWait = 60 * time.Second

// loadUploads reads the files of every agent that has upload_files and checks them against
// its backend, by agent index. roots are the folders (or files) an agent's local files may
// be read from.
func loadUploads(ctx context.Context, cfg *config.Config, roots func(config.Backend) []string) (map[int][]provider.Attachment, error) {
	out := map[int][]provider.Attachment{}
	for i, a := range cfg.Agents {
		b := a.Backend
		if len(b.Uploads) == 0 {
			continue
		}
		files, err := media.LoadUploads(ctx, media.UploadOptions{Uploads: b.Uploads, MaxBytes: int64(b.UploadLimitMB()) << 20,
			ConfigFile: cfg.Path, Roots: roots(b)})
		if err == nil {
			err = checkAttachments(b, files)
		}
		if err != nil {
			code := ExitConfig
			if ctx.Err() != nil {
				code = ExitInterrupted
			}
			return nil, errorf(code, "agent %s: %v", a.ID, err)
		}
		out[i] = files
	}
	return out, nil
}

// checkAttachments asks the backend's package what its API takes.
func checkAttachments(b config.Backend, files []provider.Attachment) error {
	switch config.BackendTypes[b.Type].Protocol {
	case config.ProtocolResponses:
		return openai.CheckAttachments(files)
	case config.ProtocolChat:
		return chat.CheckAttachments(b.Type, files)
	case config.ProtocolMessages:
		return anthropic.CheckAttachments(b.Type, files)
	case config.ProtocolGemini:
		return gemini.CheckAttachments(b.Type, files)
	}
	return fmt.Errorf("backend type %s sends no files (upload_files)", b.Type)
}

// sessionUploads are the vector stores made for a session and what was said about them.
type sessionUploads struct {
	searches []agentSearch
	// statuses are published when the session starts: which files each agent sends.
	statuses []event.Payload
}

type agentSearch struct {
	agent string
	fs    *openai.FileSearch
}

// start readies each agent's files: an OpenAI agent's documents are uploaded into a vector
// store of its own, and every agent's provider is wrapped to send its files with each call.
// keys and froms are the agents' keys and where they came from, by index. What it made is in
// the result even when it fails, for cleanup to delete.
func startUploads(ctx context.Context, cfg *config.Config, agents []engine.Agent, files map[int][]provider.Attachment,
	keys, froms []string, red *redact.Redactor) (*sessionUploads, error) {
	up := &sessionUploads{}
	for i, a := range cfg.Agents {
		fs, ok := files[i]
		if !ok {
			continue
		}
		var inline, docs []provider.Attachment
		for _, f := range fs {
			if f.Kind == provider.AttachDocument && config.BackendTypes[a.Backend.Type].Protocol == config.ProtocolResponses {
				docs = append(docs, f)
			} else {
				inline = append(inline, f)
			}
		}
		var stores []string
		detail := sentFiles(inline)
		if len(docs) > 0 {
			search := openai.NewFileSearch(providerOptions(a.Backend, keys[i], froms[i]))
			up.searches = append(up.searches, agentSearch{agent: a.ID, fs: search})
			store, err := search.Upload(ctx, storeName(a.ID), docs)
			if err != nil {
				code := ExitExecution
				if ctx.Err() != nil {
					code = ExitInterrupted
				}
				return up, errorf(code, "agent %s: %v", a.ID, red.Error(err))
			}
			stores = append(stores, store)
			detail = strings.TrimPrefix(detail+"; ", "; ") + fmt.Sprintf("%s in vector store %s for file_search (%s)", count(len(docs), "document"), store, names(docs))
		}
		up.statuses = append(up.statuses, event.ToolServerStatus{Server: event.ServerUploads, Status: "ready", Detail: a.ID + ": " + detail})
		agents[i].Provider = attaching{p: agents[i].Provider, files: inline, stores: stores}
	}
	return up, nil
}

// cleanup deletes every vector store and uploaded file, after the session, with a context of
// its own: the session's may be cancelled (Ctrl-C) or past its deadline. A failure is a
// warning in the log, never the session's failure; the files expire by themselves anyway.
func (up *sessionUploads) cleanup(ctx context.Context, bus *event.Bus, red *redact.Redactor) {
	if up == nil || len(up.searches) == 0 {
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupWait)
	defer cancel()
	for _, s := range up.searches {
		store, files := s.fs.Made()
		if store == "" && len(files) == 0 {
			continue
		}
		nStores, nFiles, err := s.fs.Delete(cctx)
		p := event.ToolServerStatus{Server: event.ServerUploads, Status: "deleted",
			Detail: fmt.Sprintf("%s: %s and %s", s.agent, count(nStores, "vector store"), count(nFiles, "uploaded file"))}
		if store != "" && nStores == 1 {
			p.Detail = fmt.Sprintf("%s: vector store %s and %s", s.agent, store, count(nFiles, "uploaded file"))
		}
		if err != nil {
			p.Status = "cleanup failed"
			p.Detail = fmt.Sprintf("%s: %v; delete what is left at https://platform.openai.com/storage (it expires by itself within 2 days)",
				s.agent, red.Error(err))
		}
		bus.Publish(p)
	}
}

// providerOptions are the provider.Options NewProvider builds backend b with.
func providerOptions(b config.Backend, key, keyEnv string) provider.Options {
	return provider.Options{Type: b.Type, Model: b.Model, APIKey: key, KeyEnv: keyEnv, BaseURL: b.BaseURL, Params: b.Params,
		WebSearch: b.Hosted.WebSearch, CodeExecution: b.Hosted.CodeExecution,
		APIVersion: cmp.Or(b.APIVersion, config.BackendTypes[b.Type].DefaultAPIVersion)}
}

// storeName names an agent's vector store as MassGen does, so that one left behind is
// recognisable in OpenAI's storage page.
func storeName(agent string) string {
	if len(agent) > 64 {
		agent = agent[:64]
	}
	return fmt.Sprintf("massgen_file_search_%s_%s", agent, time.Now().UTC().Format("20060102_150405"))
}

// sentFiles says which files go inline with every call.
func sentFiles(files []provider.Attachment) string {
	if len(files) == 0 {
		return ""
	}
	return fmt.Sprintf("%s sent with the task (%s)", count(len(files), "file"), names(files))
}

func names(files []provider.Attachment) string {
	var out []string
	for _, f := range files {
		out = append(out, f.Kind+" "+f.Name+", "+provider.MB(int64(len(f.Data))))
	}
	return strings.Join(out, "; ")
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// attaching sends an agent's files (and the vector stores of its documents) with every call.
type attaching struct {
	p      provider.Provider
	files  []provider.Attachment
	stores []string
}

func (a attaching) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Chunk, error] {
	req.Attachments, req.FileSearch = a.files, a.stores
	return a.p.Stream(ctx, req)
}

// startFiles loads the upload_files of a local session, from the folders the validator
// confined them to; a remote session's are read by the worker that holds it (BuildTeam).
func startFiles(ctx context.Context, cfg *config.Config, o Options) (map[int][]provider.Attachment, error) {
	if o.Remote != nil {
		return nil, nil
	}
	return loadUploads(ctx, cfg, localRoots(cfg))
}

// localRoots are the folders the validator confines a local session's files to: the working
// folder, the config's, the context paths.
func localRoots(cfg *config.Config) func(config.Backend) []string {
	return func(b config.Backend) []string {
		return config.UploadRoots(cfg.Path, b.Tools.ContextPaths, cfg.Orchestrator.ContextPaths)
	}
}
