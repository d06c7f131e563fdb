package config

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// upload is a one-agent config of backend type typ with the given backend lines (indented 6).
func upload(typ, lines string) string {
	return "agents:\n  - id: a\n    backend:\n      type: " + typ + "\n      model: m\n" + lines
}

func TestUploads_Rules(t *testing.T) {
	cases := []struct {
		name, yaml string
		want       []string
	}{
		{"image and document on openai", upload("openai", "      upload_files:\n        - image_path: https://example.com/a.png\n        - file_path: https://example.com/a.pdf\n"), nil},
		{"every kind on gemini", upload("gemini", "      upload_files: [{image_path: \"https://x.test/a.png\"}, {audio_path: \"https://x.test/a.wav\"}, "+
			"{video_path: \"https://x.test/a.mp4\"}, {file_path: \"https://x.test/a.pdf\"}]\n"), nil},
		{"audio on openai", upload("openai", "      upload_files: [{audio_path: \"https://x.test/a.wav\"}]\n"),
			[]string{"E 6:22 agents[0].backend.upload_files[0] | `audio_path` is not supported on backend type `openai` | chatcompletion"}},
		{"video on claude", upload("claude", "      upload_files: [{video_path: \"https://x.test/a.mp4\"}]\n"),
			[]string{"E 6:22 agents[0].backend.upload_files[0] | `video_path` is not supported on backend type `claude` | gemini"}},
		{"document on chat", upload("groq", "      upload_files: [{file_path: \"https://x.test/a.pdf\"}]\n"),
			[]string{"E 6:22 agents[0].backend.upload_files[0] | `file_path` is not supported on backend type `groq` | file search"}},
		{"coding-agent CLI", upload("codex", "      upload_files: [{image_path: \"https://x.test/a.png\"}]\n"),
			[]string{"E 6:22 agents[0].backend.upload_files[0] | `image_path` is not supported on backend type `codex` | sends no files"}},
		{"two files in one entry", upload("gemini", "      upload_files: [{image_path: \"https://x.test/a.png\", audio_path: \"https://x.test/a.wav\"}]\n"),
			[]string{"E 6:59 agents[0].backend.upload_files[0].audio_path | names one file | one entry per file"}},
		{"no file", upload("gemini", "      upload_files: [{image_url: \"https://x.test/a.png\"}]\n"),
			[]string{"E 6:22 agents[0].backend.upload_files[0] | names no file",
				"E 6:23 agents[0].backend.upload_files[0].image_url | unknown upload_files key `image_url` | use image_path, which takes an http(s) URL too"}},
		{"not a mapping", upload("gemini", "      upload_files: [a.png]\n"),
			[]string{"E 6:22 agents[0].backend.upload_files[0] | must be a mapping, not a string | image_path"}},
		{"bad scheme", upload("gemini", "      upload_files: [{image_path: \"ftp://x.test/a.png\"}]\n"),
			[]string{"E 6:35 agents[0].backend.upload_files[0].image_path | not an http(s) URL"}},
		{"credentials", upload("gemini", "      upload_files: [{image_path: \"https://u:p@x.test/a.png\"}]\n"),
			[]string{"E 6:35 agents[0].backend.upload_files[0].image_path | holds credentials"}},
		{"empty", upload("gemini", "      upload_files: [{image_path: \" \"}]\n"),
			[]string{"E 6:35 agents[0].backend.upload_files[0].image_path | image_path is empty"}},
		{"missing here", upload("gemini", "      upload_files: [{image_path: no/such/file.png}]\n"),
			[]string{"W 6:22 agents[0].backend.upload_files[0] | upload file `no/such/file.png` does not exist here | must exist when massgen runs"}},
		{"size limit", upload("gemini", "      media_max_file_size_mb: 0\n      upload_files: [{image_path: \"https://x.test/a.png\"}]\n"),
			[]string{"E 6:31 agents[0].backend.media_max_file_size_mb | media_max_file_size_mb 0 is out of range | 1 to 512"}},
		{"size limit too large", upload("gemini", "      media_max_file_size_mb: 513\n"),
			[]string{"E 6:31 agents[0].backend.media_max_file_size_mb | out of range"}},
		{"too many", upload("gemini", "      upload_files: ["+strings.Repeat("{image_path: \"https://x.test/a.png\"}, ", MaxUploads)+"{image_path: \"https://x.test/b.png\"}]\n"),
			[]string{fmt.Sprintf("E 6:21 agents[0].backend.upload_files | upload_files lists %d files | at most %d", MaxUploads+1, MaxUploads)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, rep := Parse("c.yaml", []byte(tc.yaml))
			checkIssues(t, rep, tc.want)
		})
	}
}

func TestUploads_Parsed(t *testing.T) {
	cfg, rep := Parse("c.yaml", []byte(upload("openai", "      media_max_file_size_mb: 100\n      upload_files:\n"+
		"        - image_path: \"https://x.test/a.png\"\n        - file_path: \"https://x.test/doc.pdf\"\n")))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	b := cfg.Agents[0].Backend
	want := []Upload{{Kind: UploadImage, Path: "https://x.test/a.png"}, {Kind: UploadFile, Path: "https://x.test/doc.pdf"}}
	if !reflect.DeepEqual(b.Uploads, want) || b.UploadLimitMB() != 100 {
		t.Errorf("uploads %+v, limit %d", b.Uploads, b.UploadLimitMB())
	}
	if _, ok := b.Params["media_max_file_size_mb"]; ok {
		t.Error("media_max_file_size_mb reached the provider's params")
	}
	if (Backend{}).UploadLimitMB() != DefaultUploadMB {
		t.Error("no default limit")
	}
}

// A local file is read only from the folder massgen runs in, the config's folder or a context
// path, after its symbolic links are resolved: the validator refuses the others by name.
func TestUploads_Confined(t *testing.T) {
	confDir, outside := t.TempDir(), t.TempDir()
	write := func(p string) string {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write(filepath.Join(confDir, "in.png"))
	secret := write(filepath.Join(outside, "secret.pdf"))
	if err := os.Symlink(secret, filepath.Join(confDir, "link.pdf")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	conf := filepath.Join(confDir, "team.yaml")
	cases := []struct {
		name, lines, err string
	}{
		{"in the config's folder", "      upload_files: [{image_path: in.png}]\n", ""},
		{"absolute, outside", fmt.Sprintf("      upload_files: [{file_path: %q}]\n", secret), "outside the folders upload_files may read"},
		{"a link out", "      upload_files: [{file_path: link.pdf}]\n", "a link to " + secret},
		{"dot-dot out", fmt.Sprintf("      upload_files: [{file_path: %q}]\n", filepath.Join("..", filepath.Base(outside), "secret.pdf")), "outside the folders"},
		{"granted by a context path", fmt.Sprintf("      context_paths: [{path: %q}]\n      upload_files: [{file_path: %q}]\n", outside, secret), ""},
		{"granted by the orchestrator", fmt.Sprintf("      upload_files: [{file_path: link.pdf}]\norchestrator: {context_paths: [{path: %q}]}\n", secret), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, rep := Parse(conf, []byte(upload("claude", tc.lines)))
			if tc.err == "" {
				if !rep.OK() || len(rep.Warnings) > 0 {
					t.Fatalf("refused:\n%s", rep.Text())
				}
				return
			}
			if rep.OK() || !strings.Contains(rep.Text(), tc.err) || !strings.Contains(rep.Text(), "context_paths") {
				t.Fatalf("want an error with %q:\n%s", tc.err, rep.Text())
			}
		})
	}
}

// A config received from another machine names its local files by absolute path, which the
// receiver checks when it reads them: a file outside this machine's folders (or missing here)
// is not refused by the validator, a relative path is.
func TestUploads_Received(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "doc.pdf")
	if err := os.WriteFile(outside, []byte("%PDF-1.4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, lines, err string
	}{
		{"absolute, outside this machine's folders", fmt.Sprintf("      upload_files: [{file_path: %q}]\n", outside), ""},
		{"absolute, missing here", "      upload_files: [{file_path: /no/such/doc.pdf}]\n", ""},
		{"a URL", "      upload_files: [{file_path: \"https://x.test/a.pdf\"}]\n", ""},
		{"relative", "      upload_files: [{file_path: docs/a.pdf}]\n", "upload file `docs/a.pdf` is not an absolute path"},
		{"still what the backend takes", fmt.Sprintf("      upload_files: [{audio_path: %q}]\n", outside), "`audio_path` is not supported"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, rep := ParseReceived("session.json", []byte(upload("claude", tc.lines)))
			if tc.err == "" {
				if !rep.OK() || len(rep.Warnings) > 0 {
					t.Fatalf("refused:\n%s", rep.Text())
				}
				if len(cfg.Agents[0].Backend.Uploads) != 1 {
					t.Fatalf("uploads %+v", cfg.Agents[0].Backend.Uploads)
				}
				return
			}
			if rep.OK() || !strings.Contains(rep.Text(), tc.err) {
				t.Fatalf("want an error with %q:\n%s", tc.err, rep.Text())
			}
		})
	}
	// The same absolute file from a config file on this machine is confined as ever.
	if _, rep := Parse("c.yaml", []byte(upload("claude", fmt.Sprintf("      upload_files: [{file_path: %q}]\n", outside)))); rep.OK() {
		t.Error("Parse accepted a file outside the folders upload_files may read")
	}
}
