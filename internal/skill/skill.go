// Package skill gives agents Agent Skills (MassGen's use_skills, the format Claude Code and
// openskills load): folders holding a SKILL.md whose YAML front matter names the skill and
// says when to use it. Load checks a skills directory and copies it into the run, where the
// agents read it and run its scripts with their commands, read-only; Prompt lists the skills
// in the agents' system prompts; Tool loads one on demand (read_skill).
package skill

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"massgen/internal/frontmatter"
	"massgen/internal/workspace"
)

// FileName is the file that makes a folder a skill.
const FileName = "SKILL.md"

// Caps on what a skills directory may hold: a model reads SKILL.md whole, and the run copies
// every skill's files.
const (
	MaxSkillFile   = 256 << 10 // one SKILL.md
	MaxSkills      = 200       // skills in the directory
	MaxFiles       = 5000      // files and folders of all skills
	MaxBytes       = 256 << 20 // bytes of all skills' files
	maxName        = 64
	maxDescription = 1024
	maxListed      = 200 // files read_skill lists per skill
)

// Skill is one skill of a Set.
type Skill struct {
	Name        string
	Description string
	// Dir is the skill's folder in the run's copy; Body is its SKILL.md as it was copied.
	Dir  string
	Body string
	// Files are the skill's files, slash-separated and relative to Dir, sorted (at most
	// maxListed; More counts the rest).
	Files []string
	More  int
}

// Set is the skills of one run, in name order.
type Set struct {
	Dir    string // the run's copy of the skills directory
	Skills []Skill
}

// Find returns the skill called name.
func (s *Set) Find(name string) (Skill, bool) {
	i := slices.IndexFunc(s.Skills, func(k Skill) bool { return k.Name == name })
	if i < 0 {
		return Skill{}, false
	}
	return s.Skills[i], true
}

// Load checks the skills directory src (skills_directory) and copies it into dst, a folder
// that must not exist yet, which it creates private. Every immediate folder of src holding a
// SKILL.md is a skill; other entries are copied but not listed. Errors name the file and say
// what to fix: src missing or holding no skill, a SKILL.md without front matter, without a
// description or over MaxSkillFile, two skills of one name, a symbolic link that leads out of
// its skill's folder, a special file, or more than the caps allow.
func Load(src, dst string) (*Set, error) {
	info, err := os.Stat(src)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("skills_directory %s does not exist: create it with one folder per skill, each holding a %s, or set skills_directory to where your skills are", src, FileName)
	case err != nil:
		return nil, fmt.Errorf("skills_directory %s: %w", src, err)
	case !info.IsDir():
		return nil, fmt.Errorf("skills_directory %s is not a folder: name the folder that holds one folder per skill", src)
	}
	root, err := os.OpenRoot(src)
	if err != nil {
		return nil, fmt.Errorf("skills_directory %s: %w", src, err)
	}
	defer root.Close()
	var skills []Skill
	if err := check(root, src, &skills); err != nil {
		return nil, err
	}
	if len(skills) == 0 {
		return nil, fmt.Errorf("skills_directory %s holds no skill: a skill is a folder with a %s (name and description in YAML front matter)", src, FileName)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return nil, fmt.Errorf("skills: %w", err)
	}
	if err := os.Mkdir(dst, 0o700); err != nil {
		return nil, fmt.Errorf("skills: %w", err)
	}
	out, err := os.OpenRoot(dst)
	if err != nil {
		return nil, fmt.Errorf("skills: %w", err)
	}
	defer out.Close()
	if _, err := workspace.CopyTree(context.Background(), root, ".", out, ".", true, nil); err != nil {
		return nil, fmt.Errorf("skills: copying %s: %w", src, err)
	}
	for i := range skills {
		skills[i].Dir = filepath.Join(dst, filepath.FromSlash(skills[i].Dir))
	}
	slices.SortFunc(skills, func(a, b Skill) int { return strings.Compare(a.Name, b.Name) })
	return &Set{Dir: dst, Skills: skills}, nil
}

// check walks the skills directory before anything is copied: the caps, the links, the
// special files, and each skill's SKILL.md.
func check(root *os.Root, src string, skills *[]Skill) error {
	var files int
	var bytes int64
	byName := map[string]string{}
	return fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("skills_directory %s: %w", src, err)
		}
		if p == "." {
			return nil
		}
		shown := filepath.Join(src, filepath.FromSlash(p))
		if files++; files > MaxFiles {
			return fmt.Errorf("skills_directory %s holds more than %d files and folders: keep only the skills agents need there", src, MaxFiles)
		}
		top, _, nested := strings.Cut(p, "/")
		switch t := d.Type(); {
		case t&fs.ModeSymlink != 0:
			return checkLink(root, p, top, shown)
		case d.IsDir():
			if !nested {
				return addSkill(root, p, shown, skills, byName)
			}
			return nil
		case !t.IsRegular():
			return fmt.Errorf("%s is not a regular file (a pipe, socket or device): remove it from the skills directory", shown)
		}
		info, err := d.Info()
		if err != nil {
			return fmt.Errorf("%s: %w", shown, err)
		}
		if bytes += info.Size(); bytes > MaxBytes {
			return fmt.Errorf("skills_directory %s holds more than %d MiB: keep only the skills agents need there", src, MaxBytes>>20)
		}
		return nil
	})
}

// checkLink refuses a link that leads out of its skill's folder (top): the copy would not
// carry what it names, and a skill must not reach files beside it.
func checkLink(root *os.Root, p, top, shown string) error {
	link, err := root.Readlink(p)
	if err != nil {
		return fmt.Errorf("%s: %w", shown, err)
	}
	if p == top || filepath.IsAbs(link) || !strings.HasPrefix(path.Join(path.Dir(p), filepath.ToSlash(link))+"/", top+"/") {
		return fmt.Errorf("%s is a symbolic link to %s, outside its skill's folder: skills are copied into the run whole, so copy the file into the skill instead of linking to it", shown, link)
	}
	return nil
}

// addSkill reads the SKILL.md of the folder p, if it has one.
func addSkill(root *os.Root, p, shown string, skills *[]Skill, byName map[string]string) error {
	file := path.Join(p, FileName)
	info, err := root.Lstat(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil // a folder of something else: copied, not listed
	case err != nil:
		return fmt.Errorf("%s: %w", filepath.Join(shown, FileName), err)
	case !info.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file: a skill's %s must be the file itself, not a link", filepath.Join(shown, FileName), FileName)
	case info.Size() > MaxSkillFile:
		return fmt.Errorf("%s is %d KiB, more than the %d KiB a %s may hold: move the details into other files of the skill, which it names", filepath.Join(shown, FileName), info.Size()>>10, MaxSkillFile>>10, FileName)
	}
	body, err := root.ReadFile(file)
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(shown, FileName), err)
	}
	k, err := Parse(body, path.Base(p))
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(shown, FileName), err)
	}
	if other, ok := byName[k.Name]; ok {
		return fmt.Errorf("two skills are called %q (%s and %s): rename one in its front matter", k.Name, other, shown)
	}
	if len(*skills) >= MaxSkills {
		return fmt.Errorf("the skills directory holds more than %d skills: keep only those agents need there", MaxSkills)
	}
	byName[k.Name] = shown
	k.Dir = p
	k.Files, k.More = listFiles(root, p)
	*skills = append(*skills, k)
	return nil
}

// Parse reads a SKILL.md: YAML front matter between two --- lines with a name (else folder)
// and a description. The name is letters, digits, '-', '_' and '.'.
func Parse(body []byte, folder string) (Skill, error) {
	var meta map[string]any
	switch _, err := frontmatter.Split(body, &meta); {
	case errors.Is(err, frontmatter.ErrNone):
		return Skill{}, errors.New("it has no YAML front matter: start it with a --- line, then `name:` and `description:` lines, then a closing --- line")
	case err != nil:
		return Skill{}, fmt.Errorf("%v (after `name:` and `description:`)", err)
	}
	text := strings.ReplaceAll(string(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))), "\r\n", "\n")
	name, _ := meta["name"].(string)
	desc, _ := meta["description"].(string)
	name, desc = strings.TrimSpace(name), strings.Join(strings.Fields(desc), " ")
	if name == "" {
		name = folder
	}
	switch {
	case !validName(name):
		return Skill{}, fmt.Errorf("name %q: use at most %d letters, digits, '-', '_' or '.'", name, maxName)
	case desc == "":
		return Skill{}, errors.New("its front matter has no `description:`: say in one or two sentences what the skill does and when to use it")
	case len(desc) > maxDescription:
		return Skill{}, fmt.Errorf("its description is %d characters, more than %d: shorten it; details belong in the body", len(desc), maxDescription)
	}
	return Skill{Name: name, Description: desc, Body: text}, nil
}

func validName(s string) bool {
	if s == "" || len(s) > maxName || s == "." || s == ".." {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// listFiles lists the files of the skill folder p, relative to it.
func listFiles(root *os.Root, p string) (files []string, more int) {
	_ = fs.WalkDir(root.FS(), p, func(q string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if len(files) == maxListed {
			more++
			return nil
		}
		files = append(files, strings.TrimPrefix(q, p+"/"))
		return nil
	})
	slices.Sort(files)
	return files, more
}
