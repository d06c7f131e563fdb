package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"massgen/examples"
	"massgen/internal/config"
	"massgen/internal/private"
)

// The setup wizard and the config picker. The wizard builds a team in the page, has it checked
// here by the validator --validate uses (config.Parse), and saves it under the one folder
// serve was told it may write (--setup-dir), as NAME.yaml where NAME is a team name: a request
// never names a path. A saved config is served as team NAME at once.

const maxConfigBody = 256 << 10

type providerInfo struct {
	Type          string   `json:"type"`
	KeyEnv        []string `json:"key_env,omitempty"`
	KeyFound      bool     `json:"key_found"`
	Keyless       bool     `json:"keyless,omitempty"`
	DefaultModel  string   `json:"default_model,omitempty"`
	WebSearch     bool     `json:"web_search,omitempty"`
	CodeExecution bool     `json:"code_execution,omitempty"`
}

type exampleInfo struct {
	Name    string `json:"name"`
	Summary string `json:"summary"`
	Keys    string `json:"keys"`
}

// handleSetup tells the wizard what it can offer: the providers (whether a key is set, never
// the key), the embedded examples, and whether configs can be saved.
func (s *Server) handleSetup(w http.ResponseWriter, r *http.Request) {
	var providers []providerInfo
	for name, bt := range config.BackendTypes {
		if !bt.Implemented || bt.Refused {
			continue
		}
		p := providerInfo{Type: name, KeyEnv: bt.APIKeyEnv, Keyless: len(bt.APIKeyEnv) == 0 || bt.KeyOptional,
			WebSearch: bt.WebSearch, CodeExecution: bt.CodeExecution}
		if bt.DefaultModel != config.CustomModel {
			p.DefaultModel = bt.DefaultModel
		}
		for _, e := range bt.APIKeyEnv {
			if strings.TrimSpace(s.getenv(e)) != "" {
				p.KeyFound = true
			}
		}
		providers = append(providers, p)
	}
	// Providers with a key first, then those that need none, then the rest; the big four
	// first within each, then by name.
	rank := func(p providerInfo) int {
		switch {
		case p.KeyFound:
			return 0
		case p.Keyless:
			return 1
		}
		return 2
	}
	major := func(t string) int {
		if i := slices.Index(config.TeamTypes, t); i >= 0 {
			return i
		}
		if t == "scripted" {
			return len(config.TeamTypes)
		}
		return 99
	}
	slices.SortFunc(providers, func(a, b providerInfo) int {
		if d := rank(a) - rank(b); d != 0 {
			return d
		}
		if d := major(a.Type) - major(b.Type); d != 0 {
			return d
		}
		return strings.Compare(a.Type, b.Type)
	})
	exs := []exampleInfo{}
	for _, ex := range examples.List() {
		exs = append(exs, exampleInfo{Name: ex.Name, Summary: ex.Summary, Keys: ex.Keys})
	}
	writeJSON(w, http.StatusOK, map[string]any{"providers": providers, "examples": exs, "can_save": s.setupDir != ""})
}

// handleExample sends an embedded example's YAML, for the wizard to start from.
func (s *Server) handleExample(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	for _, ex := range examples.List() {
		if ex.Name == name {
			writeJSON(w, http.StatusOK, map[string]string{"name": ex.Name, "yaml": string(ex.Data)})
			return
		}
	}
	writeError(w, http.StatusNotFound, "invalid_request_error", "example_not_found", "", "no example "+name+": GET /api/setup lists them")
}

type configBody struct {
	Name string `json:"name"`
	YAML string `json:"yaml"`
}

// validate runs the --validate validator on body.YAML as if it were file path.
func validate(path, yaml string) (*config.Config, json.RawMessage) {
	cfg, rep := config.Parse(path, []byte(yaml))
	return cfg, rep.JSON()
}

// handleValidate checks {"yaml"} and answers the report --validate --json prints.
func (s *Server) handleValidate(w http.ResponseWriter, r *http.Request) {
	var body configBody
	if !readJSON(w, r, maxConfigBody, &body) {
		return
	}
	name := "wizard"
	if teamName().MatchString(body.Name) {
		name = body.Name
	}
	_, rep := validate(name+".yaml", body.YAML)
	writeJSON(w, http.StatusOK, map[string]any{"report": rep})
}

// handleSave validates {"name", "yaml"} and writes it to <setup dir>/<name>.yaml, never over
// an existing file, then serves it as team name.
func (s *Server) handleSave(w http.ResponseWriter, r *http.Request) {
	if s.setupDir == "" {
		writeError(w, http.StatusForbidden, "invalid_request_error", "saving_disabled", "",
			"this server saves no configs: start it with massgen serve --setup-dir DIR")
		return
	}
	var body configBody
	if !readJSON(w, r, maxConfigBody, &body) {
		return
	}
	if !teamName().MatchString(body.Name) {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_name", "name",
			"the name is 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit; it names the team and its file")
		return
	}
	if _, taken := s.team(body.Name); taken {
		writeError(w, http.StatusConflict, "invalid_request_error", "name_taken", "name", "a team is already called "+body.Name+": pick another name")
		return
	}
	if err := private.MkdirAll(s.setupDir); err != nil {
		writeError(w, http.StatusInternalServerError, "server_error", "setup_dir", "", fmt.Sprintf("cannot create the setup folder: %v", err))
		return
	}
	file := body.Name + ".yaml"
	path := filepath.Join(s.setupDir, file)
	cfg, rep := validate(path, body.YAML)
	if cfg == nil {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"error": map[string]string{
			"message": "the config is not valid: fix what the report lists", "type": "invalid_request_error", "code": "invalid_config"},
			"report": rep})
		return
	}
	root, err := os.OpenRoot(s.setupDir)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "server_error", "setup_dir", "", fmt.Sprintf("cannot open the setup folder: %v", err))
		return
	}
	defer root.Close()
	f, err := root.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, private.FileMode) // a config may hold keys
	if errors.Is(err, fs.ErrExist) {
		writeError(w, http.StatusConflict, "invalid_request_error", "file_exists", "name", file+" already exists in the setup folder: pick another name")
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "server_error", "save_failed", "", fmt.Sprintf("cannot save %s: %v", file, err))
		return
	}
	_, werr := f.WriteString(body.YAML)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		_ = root.Remove(file)
		writeError(w, http.StatusInternalServerError, "server_error", "save_failed", "", fmt.Sprintf("cannot save %s: %v", file, werr))
		return
	}
	if !s.addTeam(body.Name, cfg) {
		writeError(w, http.StatusConflict, "invalid_request_error", "name_taken", "name", "a team is already called "+body.Name+": pick another name")
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"team": body.Name, "file": file, "report": rep})
}
