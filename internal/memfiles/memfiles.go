// Package memfiles is MassGen's filesystem memory mode (coordination.
// enable_memory_filesystem_mode): memories are Markdown files with YAML front matter that an
// agent keeps in its workspace, under memory/short_term and memory/long_term, through four
// tools (create_memory, update_memory, remove_memory, load_memory) or its own file tools.
// Every agent reads every agent's memories: short-term ones in full, long-term ones as a
// table to load on demand (Section). An agent's memories are the files in its own workspace
// that name it as their agent; copies of other agents' memories there (a workspace carried
// over from the previous turn's winner) are not read as its own. Gather puts every agent's
// memories into the winner's workspace at the end of a turn, so that the next turn, which
// starts from a copy of it, keeps them.
package memfiles

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml"

	"massgen/internal/frontmatter"
	"massgen/internal/workspace"
)

// Dir is the memory folder in a workspace; the tiers are its subfolders.
const (
	Dir       = "memory"
	ShortTerm = "short_term"
	LongTerm  = "long_term"
)

// Tiers are the two tiers, short-term first.
var Tiers = []string{ShortTerm, LongTerm}

// Caps on what an agent, or a file in its workspace, puts into every agent's context.
const (
	maxName        = 64
	maxDescription = 300
	MaxContent     = 16 << 10 // one memory's content
	maxFile        = MaxContent + 4<<10
	MaxPerAgent    = 50       // memories of one agent that are read
	maxShortTerm   = 24 << 10 // short-term content of all agents in one section
)

// Memory is one memory file.
type Memory struct {
	Name        string    `yaml:"name"`
	Description string    `yaml:"description"`
	Tier        string    `yaml:"tier"`
	Agent       string    `yaml:"agent_id"`
	Created     time.Time `yaml:"created"`
	Updated     time.Time `yaml:"updated"`
	Content     string    `yaml:"-"`
	rel         string    // its file, relative to the workspace; "" for one not saved yet
}

// Owner is an agent as memories name it (its anonymous label) and its workspace folder.
type Owner struct {
	Label string
	Dir   string
}

// file is where m lives in a workspace: the file it was read from, else its name's file.
// Another agent's memory of the same name may hold that file (the workspace of a turn's
// winner, which holds every agent's memories): place finds a free one then.
func (m Memory) file() string {
	if m.rel != "" {
		return m.rel
	}
	return path.Join(Dir, m.Tier, m.Name+".md")
}

// place gives m, not read from root, a file of its own there: its name's file, unless
// another agent's memory holds it, then NAME--AGENT.md.
func place(root *os.Root, m Memory) Memory {
	m.rel = ""
	if have, err := readFile(root, m.file(), m.Name); err == nil && have.Agent != m.Agent {
		m.rel = path.Join(Dir, m.Tier, m.Name+"--"+m.Agent+".md")
	}
	return m
}

// Markdown is m as its file holds it.
func (m Memory) Markdown() []byte {
	front, _ := yaml.Marshal(m)
	return []byte("---\n" + string(front) + "---\n\n" + strings.TrimRight(m.Content, "\n") + "\n")
}

// Parse reads a memory file; name is its file name without .md, used when the front matter
// names none.
func Parse(data []byte, name string) (Memory, error) {
	var m Memory
	body, err := frontmatter.Split(data, &m)
	if err != nil {
		return Memory{}, err
	}
	m.Content = strings.TrimSpace(body)
	if m.Name == "" {
		m.Name, _, _ = strings.Cut(name, "--")
	}
	if err := checkName(m.Name); err != nil {
		return Memory{}, err
	}
	if !slices.Contains(Tiers, m.Tier) {
		return Memory{}, fmt.Errorf("tier %q: use short_term or long_term", m.Tier)
	}
	m.Description = oneLine(m.Description, maxDescription)
	return m, nil
}

// checkName accepts what MassGen calls filesystem-safe: letters, digits, '-' and '_'.
func checkName(s string) error {
	if s == "" || len(s) > maxName || strings.Trim(s, "-_") == "" {
		return fmt.Errorf("name %q: use 1 to %d letters, digits, '-' and '_'", s, maxName)
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("name %q: use only letters, digits, '-' and '_'", s)
		}
	}
	return nil
}

// Read returns the memories o created, from its workspace, newest first by update, at most
// MaxPerAgent; files it cannot read (too large, not a memory, a link out, a special file)
// are reported in errs and skipped.
func Read(o Owner) (out []Memory, errs []error) {
	root, err := os.OpenRoot(o.Dir)
	if err != nil {
		return nil, []error{err}
	}
	defer root.Close()
	all, errs := readAll(root)
	for _, m := range all {
		if m.Agent == o.Label {
			out = append(out, m)
		}
	}
	slices.SortStableFunc(out, func(a, b Memory) int { return b.Updated.Compare(a.Updated) })
	if len(out) > MaxPerAgent {
		errs = append(errs, fmt.Errorf("%d memories: only the %d updated last are read", len(out), MaxPerAgent))
		out = out[:MaxPerAgent]
	}
	return out, errs
}

// readAll reads every memory file under root's memory folder, whoever's it is.
func readAll(root *os.Root) (out []Memory, errs []error) {
	for _, tier := range Tiers {
		entries, err := fs.ReadDir(root.FS(), path.Join(Dir, tier))
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		for _, e := range entries {
			name, ok := strings.CutSuffix(e.Name(), ".md")
			if !ok || !e.Type().IsRegular() {
				continue
			}
			rel := path.Join(Dir, tier, e.Name())
			m, err := readFile(root, rel, name)
			switch {
			case err != nil:
				errs = append(errs, fmt.Errorf("%s: %w", rel, err))
			case m.Tier == tier:
				m.rel = rel
				out = append(out, m)
			}
		}
	}
	return out, errs
}

func readFile(root *os.Root, rel, name string) (Memory, error) {
	f, err := workspace.OpenRegular(root, rel, workspace.NoFollow)
	if err != nil {
		return Memory{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return Memory{}, err
	}
	if len(data) > maxFile {
		return Memory{}, fmt.Errorf("larger than %d KiB", maxFile>>10)
	}
	return Parse(data, name)
}

// write saves m in the workspace at dir, private as massgen's own trees are; fresh, m was
// not read from there and needs a file of its own.
func write(dir string, m Memory, fresh bool) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	if fresh {
		m = place(root, m)
	}
	if err := workspace.MkdirAll(root, path.Join(Dir, m.Tier), true); err != nil {
		return err
	}
	f, err := workspace.OpenWrite(root, m.file(), os.O_CREATE, workspace.NewFileMode(true))
	if err != nil {
		return err
	}
	_, err = f.Write(m.Markdown())
	return errors.Join(err, f.Close())
}

// remove deletes m's file from the workspace at dir.
func remove(dir string, m Memory) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	return root.Remove(m.file())
}

// Gather writes every owner's memories into the workspace at dst (the turn's winner's), so
// that the next turn, whose workspaces start as copies of it, keeps them all, each in a file
// of its own.
func Gather(dst string, all []Owner) error {
	root, err := os.OpenRoot(dst)
	if err != nil {
		return err
	}
	others := map[string]bool{}
	for _, o := range all {
		others[o.Label] = o.Dir != dst
	}
	// The copies of the others' memories that the winner's workspace carried from an earlier
	// turn go first: one they removed since must not come back.
	have, _ := readAll(root)
	_ = root.Close()
	var errs []error
	for _, m := range have {
		if others[m.Agent] {
			if err := remove(dst, m); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, o := range all {
		if o.Dir == dst {
			continue
		}
		ms, _ := Read(o)
		for _, m := range ms {
			if err := write(dst, m, true); err != nil {
				errs = append(errs, fmt.Errorf("%s's memory %s: %w", m.Agent, m.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// Stamp changes whenever a memory file of the owners' workspaces changes (name, size or
// modification time): a reader compares stamps before it reads the files again.
func Stamp(all []Owner) string {
	var b strings.Builder
	for _, o := range all {
		root, err := os.OpenRoot(o.Dir)
		if err != nil {
			continue
		}
		for _, tier := range Tiers {
			// Through the root, as Read: a link an agent made to a folder outside is not walked.
			entries, _ := fs.ReadDir(root.FS(), path.Join(Dir, tier))
			for _, e := range entries {
				if info, err := e.Info(); err == nil {
					fmt.Fprintf(&b, "%s/%s/%s %d %d\n", o.Label, tier, e.Name(), info.Size(), info.ModTime().UnixNano())
				}
			}
		}
		_ = root.Close()
	}
	return b.String()
}

// Section is what every agent reads of all agents' memories: the short-term ones in full
// (at most maxShortTerm bytes of them, newest first), the long-term ones as a table. "" when
// there are none.
func Section(all []Owner) string {
	var short, long []Memory
	for _, o := range all {
		ms, _ := Read(o)
		for _, m := range ms {
			if m.Tier == ShortTerm {
				short = append(short, m)
			} else {
				long = append(long, m)
			}
		}
	}
	if len(short)+len(long) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Memories of the team (memory filesystem mode; yours are in your workspace under memory/):\n")
	if len(short) > 0 {
		b.WriteString("\n## Short-term Memory (Always Available)\n")
		used, left := 0, 0
		for _, m := range short {
			if used+len(m.Content) > maxShortTerm {
				left++
				continue
			}
			used += len(m.Content)
			fmt.Fprintf(&b, "\n### %s [Agent: %s]\n*%s*\n\n%s\n\n---\n", m.Name, m.Agent, m.Description, m.Content)
		}
		if left > 0 {
			fmt.Fprintf(&b, "\n(%d more short-term memories are left out: together they pass %d KiB; load them with load_memory)\n", left, maxShortTerm>>10)
		}
	}
	if len(long) > 0 {
		b.WriteString("\n## Long-term Memory (Load as Needed)\n\n| Agent | Memory Name | Description |\n|---|---|---|\n")
		for _, m := range long {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", m.Agent, m.Name, strings.ReplaceAll(m.Description, "|", "\\|"))
		}
		b.WriteString("\nTo load one: load_memory(name=\"memory_name\").\n")
	}
	return b.String()
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}
