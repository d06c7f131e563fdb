package durable

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"massgen/internal/config"
)

// upload_files reach the workers: a local file as the absolute path this machine's loader
// finds for it (here next to the config, outside the folder the test runs in), a URL as
// written. The worker reads the same entries back.
func TestEncodeConfig_CarriesUploads(t *testing.T) {
	dir := t.TempDir()
	doc := filepath.Join(dir, "doc.pdf")
	if err := os.WriteFile(doc, []byte("%PDF-1.4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "team.yaml")
	yaml := `
agents:
  - id: reader
    backend:
      type: openai
      model: gpt-5-nano
      media_max_file_size_mb: 8
      upload_files:
        - file_path: doc.pdf
        - image_path: "https://example.com/a.png"
`
	if err := os.WriteFile(conf, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, rep := config.Load(conf)
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	if err := Supported(cfg); err != nil {
		t.Fatalf("Supported = %v", err)
	}
	wire, err := Encode(cfg)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	var sent struct {
		Agents []struct {
			Backend struct {
				Uploads []map[string]string `json:"upload_files"`
			} `json:"backend"`
		} `json:"agents"`
	}
	if err := json.Unmarshal([]byte(wire), &sent); err != nil {
		t.Fatal(err)
	}
	want := []map[string]string{{"file_path": doc}, {"image_path": "https://example.com/a.png"}}
	if got := sent.Agents[0].Backend.Uploads; !reflect.DeepEqual(got, want) {
		t.Errorf("sent upload_files %v, want %v", got, want)
	}
	back, err := DecodeConfig(wire)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	b := back.Agents[0].Backend
	if wantUp := []config.Upload{{Kind: config.UploadFile, Path: doc}, {Kind: config.UploadImage, Path: "https://example.com/a.png"}}; !reflect.DeepEqual(b.Uploads, wantUp) || b.UploadLimitMB() != 8 {
		t.Errorf("received uploads %+v (limit %d MB)", b.Uploads, b.UploadLimitMB())
	}
}

// A session sent by hand (anyone who may start workflows writes it) that names a local file by
// a relative path is refused by the worker's loader, by name.
func TestDecodeConfig_RefusesRelativeUploads(t *testing.T) {
	_, err := DecodeConfig(`{"agents":[{"id":"a","backend":{"type":"openai","model":"m","upload_files":[{"file_path":"doc.pdf"}]}}]}`)
	if err == nil || !strings.Contains(err.Error(), "upload file `doc.pdf` is not an absolute path") {
		t.Errorf("err = %v, want a refusal of the relative path", err)
	}
}
