package durable

import (
	"massgen/internal/config"
)

// An agent's upload_files as they travel to the workers: URLs as written, local files as the
// absolute paths this machine's loader finds for them (the config's folder is not the
// worker's). The worker that holds the session reads those paths on its own machine, and
// only when it trusts its sessions (trust.OnMachine lists them).

// uploadsDoc adds b's upload_files to its backend document out.
func uploadsDoc(out obj, b config.Backend, configFile string) {
	if len(b.Uploads) == 0 {
		return
	}
	ups := make([]any, len(b.Uploads))
	for i, u := range sentUploads(b.Uploads, configFile) {
		ups[i] = obj{u.Kind + "_path": u.Path}
	}
	out["upload_files"] = ups
}

// sentUploads are uploads as the workers receive them, local paths made absolute.
func sentUploads(uploads []config.Upload, configFile string) []config.Upload {
	if len(uploads) == 0 {
		return nil
	}
	out := make([]config.Upload, len(uploads))
	for i, u := range uploads {
		if !u.IsURL() {
			u.Path, _ = config.FindUploadFile(u.Path, configFile)
		}
		out[i] = u
	}
	return out
}
