package web

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const wizardTeam = `agents:
  - id: scripted_1
    backend:
      type: scripted
      answers: ["Paris."]
  - id: scripted_2
    backend:
      type: scripted
      answers: ["Paris, France."]
`

func TestSetup_ProvidersShowWhetherAKeyIsSetNeverTheKey(t *testing.T) {
	const key = "sk-test-wizard-0123456789"
	e := newEnv(t, func(o *Options) {
		o.Getenv = func(k string) string {
			if k == "OPENAI_API_KEY" {
				return key
			}
			return ""
		}
	})
	r := e.get("/api/setup")
	if strings.Contains(string(r.body), key) {
		t.Fatal("the setup answer holds the key")
	}
	s := decode[struct {
		Providers []providerInfo
		Examples  []exampleInfo
		CanSave   bool `json:"can_save"`
	}](t, r)
	if len(s.Providers) == 0 || s.Providers[0].Type != "openai" || !s.Providers[0].KeyFound {
		t.Errorf("providers: the one with a key comes first: %+v", s.Providers)
	}
	for _, p := range s.Providers {
		if p.Type == "claude" && p.KeyFound {
			t.Error("claude has no key here")
		}
	}
	if s.CanSave || len(s.Examples) == 0 {
		t.Errorf("can_save %v without a setup dir, %d examples", s.CanSave, len(s.Examples))
	}
	ex := decode[struct{ Name, YAML string }](t, e.get("/api/examples/demo"))
	if ex.Name != "demo" || !strings.Contains(ex.YAML, "agents:") {
		t.Errorf("example: %+v", ex)
	}
	wantError(t, e.get("/api/examples/nope"), http.StatusNotFound, "example_not_found")
	wantError(t, e.post("/api/setup/save", map[string]string{"name": "x", "yaml": wizardTeam}), http.StatusForbidden, "saving_disabled")
}

func TestSetup_ValidateIsTheValidatorOfValidate(t *testing.T) {
	e := newEnv(t, nil)
	var ok struct{ Report json.RawMessage }
	ok = decode[struct{ Report json.RawMessage }](t, e.post("/api/setup/validate", map[string]string{"yaml": wizardTeam}))
	if !strings.Contains(string(ok.Report), `"valid":true`) {
		t.Errorf("valid team reported as %s", ok.Report)
	}
	bad := decode[struct{ Report json.RawMessage }](t, e.post("/api/setup/validate", map[string]string{"yaml": "agents:\n  - id: a\n    backend:\n      type: nosuch\n"}))
	if !strings.Contains(string(bad.Report), `"valid":false`) || !strings.Contains(string(bad.Report), `"line":4`) {
		t.Errorf("invalid team reported as %s", bad.Report)
	}
	wantError(t, e.post("/api/setup/validate", "not json"), http.StatusBadRequest, "invalid_json")
	r := e.do(t.Context(), http.MethodPost, "/api/setup/validate", "yaml: x", "Content-Type", "text/plain")
	wantError(t, r, http.StatusUnsupportedMediaType, "unsupported_media_type")
	wantError(t, e.post("/api/setup/validate", map[string]string{"yaml": strings.Repeat("#", maxConfigBody)}), http.StatusRequestEntityTooLarge, "request_too_large")
}

func TestSetup_SaveWritesOnlyNAMEyamlInTheSetupDirAndServesIt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "configs")
	e := newEnv(t, func(o *Options) { o.SetupDir = dir })
	for _, name := range []string{"../evil", "/tmp/evil", "a/b", "..", "", ".hidden", "x\\y", strings.Repeat("a", 65), "demo"} {
		r := e.post("/api/setup/save", map[string]string{"name": name, "yaml": wizardTeam})
		if r.status == http.StatusCreated {
			t.Errorf("saved under the name %q", name)
		}
	}
	if r := e.post("/api/setup/save", map[string]string{"name": "broken", "yaml": "agents: 3\n"}); r.status != http.StatusUnprocessableEntity {
		t.Errorf("an invalid config: %d %s", r.status, r.body)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Fatalf("files written by refused saves: %v", entries)
	}
	r := e.post("/api/setup/save", map[string]string{"name": "wizard_team", "yaml": wizardTeam})
	if r.status != http.StatusCreated {
		t.Fatalf("save: %d %s", r.status, r.body)
	}
	b, err := os.ReadFile(filepath.Join(dir, "wizard_team.yaml"))
	if err != nil || string(b) != wizardTeam {
		t.Fatalf("saved file %q, %v", b, err)
	}
	// The name is taken now, as a team and as a file.
	wantError(t, e.post("/api/setup/save", map[string]string{"name": "wizard_team", "yaml": wizardTeam}), http.StatusConflict, "name_taken")
	mustWrite(t, filepath.Join(dir, "onfile.yaml"), "keep me")
	wantError(t, e.post("/api/setup/save", map[string]string{"name": "onfile", "yaml": wizardTeam}), http.StatusConflict, "file_exists")
	if b, _ := os.ReadFile(filepath.Join(dir, "onfile.yaml")); string(b) != "keep me" {
		t.Error("a save overwrote a file")
	}
	// A symlink named like the file is not written through.
	outside := filepath.Join(t.TempDir(), "target.yaml")
	mustLink(t, outside, filepath.Join(dir, "linked.yaml"))
	if r := e.post("/api/setup/save", map[string]string{"name": "linked", "yaml": wizardTeam}); r.status == http.StatusCreated {
		t.Error("saved through a symlink")
	}
	if _, err := os.Stat(outside); err == nil {
		t.Error("a save wrote outside the setup dir")
	}

	teams := decode[struct{ Teams []teamInfo }](t, e.get("/api/teams"))
	found := false
	for _, tm := range teams.Teams {
		found = found || tm.Name == "wizard_team" && len(tm.Agents) == 2
	}
	if !found {
		t.Fatalf("the saved team is not served: %+v", teams.Teams)
	}
	run := decode[struct{ ID string }](t, e.post("/api/runs", map[string]string{"team": "wizard_team", "question": "Capital of France?"}))
	e.waitIdle()
	if lastEnd(t, e.turnEvents(run.ID)).ExitCode != 0 {
		t.Errorf("the saved team's run failed")
	}
}

// Every studio endpoint sits behind the token and the origin check of the rest of the API.
func TestStudio_EndpointsNeedTheTokenAndTheOrigin(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Token = "studio-token"; o.SetupDir = t.TempDir() })
	id := "/api/sessions/log_20250101_000000/turn_1"
	gets := []string{"/api/setup", "/api/examples/demo", id + "/files", id + "/file?path=final/a/answer.txt"}
	posts := []string{"/api/setup/validate", "/api/setup/save", id + "/messages", id + "/answer-now", id + "/agents/a/stop", id + "/followup", id + "/cancel"}
	for _, p := range gets {
		wantError(t, e.get(p), http.StatusUnauthorized, "invalid_api_key")
	}
	body := map[string]string{"name": "x", "yaml": wizardTeam, "text": "hi", "question": "q"}
	for _, p := range posts {
		wantError(t, e.post(p, body), http.StatusUnauthorized, "invalid_api_key")
		wantError(t, e.post(p, body, "Authorization", "Bearer studio-token", "Origin", "https://evil.example"), http.StatusForbidden, "cross_origin")
	}
	if r := e.get("/api/setup", "Authorization", "Bearer studio-token"); r.status != http.StatusOK {
		t.Errorf("with the token: %d", r.status)
	}
}
