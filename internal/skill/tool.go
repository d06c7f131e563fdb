package skill

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"massgen/internal/tool"
)

// ToolName is the tool that loads a skill.
const ToolName = "read_skill"

// Prompt is the skills section of an agent's system prompt, in MassGen's <skills_system>
// layout: each skill's name, description and folder. commands says whether the agent can run
// a skill's scripts.
func (s *Set) Prompt(commands bool) string {
	var b strings.Builder
	b.WriteString("<skills_system priority=\"1\">\n\n## Available Skills\n\n")
	b.WriteString("Skills are instructions and files for particular tasks. When a task matches a skill's description, call " + ToolName +
		" with its name first and follow what it says. Its files are in its folder, read-only")
	if commands {
		b.WriteString("; run its scripts with execute_command by their full path (for example `python3 FOLDER/scripts/x.py`), writing any output in your workspace")
	}
	b.WriteString(".\n\n<available_skills>\n")
	for _, k := range s.Skills {
		fmt.Fprintf(&b, "\n<skill>\n<name>%s</name>\n<description>%s</description>\n<location>%s</location>\n</skill>\n",
			k.Name, escape(k.Description), escape(k.Dir))
	}
	b.WriteString("\n</available_skills>\n\n</skills_system>")
	return b.String()
}

var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

func escape(s string) string { return escaper.Replace(s) }

// Tool is read_skill: a skill's SKILL.md and the list of its files, from the copy Load made
// when the run started; the skill's files are read with the file tools or commands.
func (s *Set) Tool() tool.Tool {
	names := make([]string, len(s.Skills))
	for i, k := range s.Skills {
		names[i] = k.Name
	}
	return tool.Tool{
		Spec: tool.Spec(ToolName, "Load a skill: its instructions (SKILL.md) and the list of its files, in its folder; with file, one of those files instead. The available skills are listed in your instructions.",
			map[string]any{
				"name": map[string]any{"type": "string", "enum": names, "description": "The skill's name."},
				"file": map[string]any{"type": "string", "description": "A file of the skill, relative to its folder (for example reference.md); leave out for its SKILL.md."},
			}, "name"),
		Run: func(_ context.Context, args string) tool.Result {
			var in struct {
				Name string `json:"name"`
				File string `json:"file"`
			}
			if r, ok := tool.Decode(args, &in, `{"name": "`+names[0]+`"}`); !ok {
				return r
			}
			k, ok := s.Find(strings.TrimSpace(in.Name))
			if !ok {
				return tool.Errorf(fmt.Sprintf("there is no skill %s; the skills are %s", tool.Quote(in.Name), strings.Join(names, ", ")))
			}
			if f := strings.TrimSpace(in.File); f != "" && f != FileName {
				return readFile(k, f)
			}
			var b strings.Builder
			fmt.Fprintf(&b, "Skill %s, in the folder %s (read-only).\n\n%s\n\nFiles of the skill (relative to its folder):\n", k.Name, k.Dir, strings.TrimRight(k.Body, "\n"))
			for _, f := range k.Files {
				fmt.Fprintf(&b, "- %s\n", f)
			}
			if k.More > 0 {
				fmt.Fprintf(&b, "- ... and %d more\n", k.More)
			}
			return tool.Result{Content: strings.TrimRight(b.String(), "\n")}
		},
	}
}

// readFile is one file of the skill k, through a root on its folder: a name that leads out
// of it is refused.
func readFile(k Skill, name string) tool.Result {
	root, err := os.OpenRoot(k.Dir)
	if err != nil {
		return tool.Errorf(fmt.Sprintf("skill %s: %v", k.Name, err))
	}
	defer root.Close()
	f, err := root.Open(filepath.FromSlash(name))
	if err != nil {
		return tool.Errorf(fmt.Sprintf("skill %s has no file %s inside its folder; its files are listed by %s with only the name", k.Name, tool.Quote(name), ToolName))
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return tool.Errorf(fmt.Sprintf("%s is not a file of skill %s", tool.Quote(name), k.Name))
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxSkillFile+1))
	if err != nil && !errors.Is(err, io.EOF) {
		return tool.Errorf(fmt.Sprintf("skill %s: %s: %v", k.Name, name, err))
	}
	note := ""
	if len(data) > MaxSkillFile {
		data, note = data[:MaxSkillFile], fmt.Sprintf("\n[cut at %d KiB; read the rest from %s]", MaxSkillFile>>10, filepath.Join(k.Dir, name))
		if i := lastStart(data); !utf8.FullRune(data[i:]) { // the cut split a character
			data = data[:i]
		}
	}
	if !utf8.Valid(data) {
		return tool.Errorf(fmt.Sprintf("%s of skill %s is not text; run or read it with execute_command from %s", tool.Quote(name), k.Name, k.Dir))
	}
	return tool.Result{Content: string(data) + note}
}

// lastStart is the index of the last rune's first byte in data.
func lastStart(data []byte) int {
	for i := len(data) - 1; i >= 0 && i >= len(data)-utf8.UTFMax; i-- {
		if utf8.RuneStart(data[i]) {
			return i
		}
	}
	return len(data)
}
