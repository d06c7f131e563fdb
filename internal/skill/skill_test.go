package skill

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// writeTree writes files (slash paths relative to root) with their contents.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const pdfSkill = "---\nname: pdf\ndescription: Fill & merge <PDF> forms.\nlicense: MIT\n---\n\n# PDF\n\nRun scripts/merge.sh.\n"

// TestLoad_CopiesListsAndLoads: the skills are copied into the run, listed by name with their
// files, and read_skill returns a SKILL.md, a file of the skill, and refuses a path out of it.
func TestLoad_CopiesListsAndLoads(t *testing.T) {
	src, dst := filepath.Join(t.TempDir(), "skills"), filepath.Join(t.TempDir(), "run", ".skills")
	writeTree(t, src, map[string]string{
		"pdf/SKILL.md":           pdfSkill,
		"pdf/scripts/merge.sh":   "echo merged\n",
		"pdf/reference.md":       "Use qpdf.\n",
		"zeta/SKILL.md":          "---\ndescription: Folder name is the name.\n---\nBody\n",
		"notes/README.md":        "not a skill\n",
		"other/SKILL.md":         "---\nname: other\ndescription: Another.\n---\n",
		"other/secret-notes.txt": "x",
	})
	if err := os.Symlink("reference.md", filepath.Join(src, "pdf", "ref-link.md")); err != nil {
		t.Fatal(err)
	}
	set, err := Load(src, dst)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range set.Skills {
		names = append(names, k.Name)
	}
	if got := strings.Join(names, ","); got != "other,pdf,zeta" {
		t.Fatalf("skills %s, want other,pdf,zeta", got)
	}
	pdf, _ := set.Find("pdf")
	if pdf.Dir != filepath.Join(dst, "pdf") || strings.Join(pdf.Files, ",") != "SKILL.md,ref-link.md,reference.md,scripts/merge.sh" {
		t.Errorf("pdf = %+v", pdf)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "pdf", "scripts", "merge.sh")); err != nil || string(b) != "echo merged\n" {
		t.Errorf("copied script = %q, %v", b, err)
	}
	p := set.Prompt(true)
	for _, want := range []string{"<skills_system", "<name>pdf</name>", "Fill &amp; merge &lt;PDF&gt; forms.", "<location>" + pdf.Dir + "</location>", "execute_command"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
	if strings.Contains(set.Prompt(false), "execute_command") {
		t.Error("the prompt of an agent without commands tells it to run scripts")
	}
	tl := set.Tool()
	cases := []struct {
		args, want string
		isErr      bool
	}{
		{`{"name": "pdf"}`, "Run scripts/merge.sh.", false},
		{`{"name": "pdf"}`, "- scripts/merge.sh", false},
		{`{"name": "pdf", "file": "reference.md"}`, "Use qpdf.", false},
		{`{"name": "pdf", "file": "../other/SKILL.md"}`, "has no file", true},
		{`{"name": "pdf", "file": "/etc/passwd"}`, "has no file", true},
		{`{"name": "nope"}`, "the skills are other, pdf, zeta", true},
		{`{"name": 3}`, "", true},
	}
	for _, c := range cases {
		r := tl.Run(t.Context(), c.args)
		if r.IsError != c.isErr || !strings.Contains(r.Content, c.want) {
			t.Errorf("read_skill %s = %+v, want error %v containing %q", c.args, r, c.isErr, c.want)
		}
	}
}

// TestLoad_BadInput: every way a skills directory can be wrong stops with a message that names
// the file and says what to do.
func TestLoad_BadInput(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.txt")
	writeTree(t, filepath.Dir(outside), map[string]string{"secret.txt": "top secret"})
	tests := []struct {
		name  string
		files map[string]string
		setup func(t *testing.T, src string)
		want  []string
	}{
		{name: "missing directory", setup: func(t *testing.T, src string) { _ = os.RemoveAll(src) },
			want: []string{"does not exist", "one folder per skill"}},
		{name: "no skill", files: map[string]string{"notes/README.md": "x"}, want: []string{"holds no skill"}},
		{name: "no front matter", files: map[string]string{"a/SKILL.md": "# A\n\nname: a\n"},
			want: []string{"a/SKILL.md", "no YAML front matter", "start it with a --- line"}},
		{name: "front matter never ends", files: map[string]string{"a/SKILL.md": "---\nname: a\ndescription: d\n"},
			want: []string{"never ends"}},
		{name: "no description", files: map[string]string{"a/SKILL.md": "---\nname: a\n---\n"}, want: []string{"no `description:`"}},
		{name: "bad yaml", files: map[string]string{"a/SKILL.md": "---\nname: [a\n---\n"}, want: []string{"not valid YAML"}},
		{name: "bad name", files: map[string]string{"a/SKILL.md": "---\nname: a b/c\ndescription: d\n---\n"}, want: []string{`name "a b/c"`}},
		{name: "huge", files: map[string]string{"a/SKILL.md": "---\nname: a\ndescription: d\n---\n" + strings.Repeat("x", MaxSkillFile)},
			want: []string{"a/SKILL.md is 256 KiB", "more than the 256 KiB"}},
		{name: "two of one name", files: map[string]string{"a/SKILL.md": "---\nname: x\ndescription: d\n---\n", "b/SKILL.md": "---\nname: x\ndescription: d\n---\n"},
			want: []string{`two skills are called "x"`}},
		{name: "link out of the folder", files: map[string]string{"a/SKILL.md": pdfSkill},
			setup: func(t *testing.T, src string) { symlink(t, outside, filepath.Join(src, "a", "data.txt")) },
			want:  []string{"a/data.txt is a symbolic link to " + outside, "outside its skill's folder"}},
		{name: "relative link to another skill", files: map[string]string{"a/SKILL.md": pdfSkill, "b/SKILL.md": "---\nname: b\ndescription: d\n---\n"},
			setup: func(t *testing.T, src string) { symlink(t, "../b/SKILL.md", filepath.Join(src, "a", "b.md")) },
			want:  []string{"a/b.md is a symbolic link to ../b/SKILL.md"}},
		{name: "a skill folder that is a link", files: map[string]string{"notes/x": "x"},
			setup: func(t *testing.T, src string) { symlink(t, filepath.Dir(outside), filepath.Join(src, "evil")) },
			want:  []string{"evil is a symbolic link"}},
		{name: "SKILL.md a link", files: map[string]string{"a/real.md": pdfSkill},
			setup: func(t *testing.T, src string) { symlink(t, "real.md", filepath.Join(src, "a", "SKILL.md")) },
			want:  []string{"not a regular file"}},
		{name: "named pipe", files: map[string]string{"a/SKILL.md": pdfSkill},
			setup: func(t *testing.T, src string) {
				if err := syscall.Mkfifo(filepath.Join(src, "a", "pipe"), 0o644); err != nil {
					t.Skip(err)
				}
			},
			want: []string{"a/pipe is not a regular file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := filepath.Join(t.TempDir(), "skills")
			if err := os.MkdirAll(src, 0o755); err != nil {
				t.Fatal(err)
			}
			writeTree(t, src, tt.files)
			if tt.setup != nil {
				tt.setup(t, src)
			}
			dst := filepath.Join(t.TempDir(), ".skills")
			_, err := Load(src, dst)
			if err == nil {
				t.Fatal("Load succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if _, err := os.Stat(dst); err == nil {
				t.Error("a refused skills directory was copied")
			}
		})
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
