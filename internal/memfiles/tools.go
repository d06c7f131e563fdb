package memfiles

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"massgen/internal/tool"
)

// The tools' names, MassGen's.
const (
	ToolCreate = "create_memory"
	ToolUpdate = "update_memory"
	ToolRemove = "remove_memory"
	ToolLoad   = "load_memory"
)

// Tools are the memory tools of agent me. team gives every agent as it is at the time of a
// call (load_memory reads the others' memories); now stamps created and updated.
func Tools(me Owner, team func() []Owner, now func() time.Time) tool.Set {
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	name := str("The memory's name: letters, digits, '-' and '_' (for example user_preferences).")
	t := &tools{me: me, team: team, now: now}
	return tool.Set{
		{Spec: tool.Spec(ToolCreate, "Save a new memory in your workspace (memory/<tier>/<name>.md). Every agent of the team reads it: a short_term memory in full at the start of each of its turns (keep those few and short), a long_term one as a line of a table, to load with load_memory.",
			map[string]any{"name": name, "description": str("One or two sentences on what it holds."), "content": str("The memory itself; Markdown is fine."),
				"tier": map[string]any{"type": "string", "enum": Tiers, "description": "short_term (the default) or long_term."}},
			"name", "description", "content"), Run: t.create},
		{Spec: tool.Spec(ToolUpdate, "Replace the content (and, when given, the description) of one of your memories.",
			map[string]any{"name": name, "content": str("The new content."), "description": str("A new description; leave out to keep it.")},
			"name", "content"), Run: t.update},
		{Spec: tool.Spec(ToolRemove, "Delete one of your memories.", map[string]any{"name": name}, "name"), Run: t.remove},
		{Spec: tool.Spec(ToolLoad, "Read a memory in full: yours, or another agent's (long-term memories are listed by name only).", map[string]any{"name": name}, "name"), Run: t.load},
	}
}

type tools struct {
	me   Owner
	team func() []Owner
	now  func() time.Time
}

type reply struct {
	Success   bool    `json:"success"`
	Operation string  `json:"operation"`
	Memory    *shown  `json:"memory,omitempty"`
	Content   *string `json:"content,omitempty"`
}

// shown is a memory as the tools return it.
type shown struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Tier        string `json:"tier"`
	Agent       string `json:"agent_id"`
	Created     string `json:"created"`
	Updated     string `json:"updated"`
}

func ok(op string, m Memory, withContent bool) tool.Result {
	r := reply{Success: true, Operation: op, Memory: &shown{m.Name, m.Description, m.Tier, m.Agent,
		m.Created.UTC().Format(time.RFC3339), m.Updated.UTC().Format(time.RFC3339)}}
	if withContent {
		r.Content = &m.Content
	}
	b, _ := json.Marshal(r)
	return tool.Result{Content: string(b)}
}

func (t *tools) create(_ context.Context, args string) tool.Result {
	var in struct{ Name, Description, Content, Tier string }
	if r, good := tool.Decode(args, &in, `{"name": "user_preferences", "description": "What the user prefers", "content": "- short answers", "tier": "short_term"}`); !good {
		return r
	}
	m := Memory{Name: strings.TrimSpace(in.Name), Description: oneLine(in.Description, maxDescription), Content: strings.TrimSpace(in.Content),
		Tier: cmp.Or(strings.TrimSpace(in.Tier), ShortTerm), Agent: t.me.Label}
	if err := check(m); err != nil {
		return tool.Errorf(err.Error())
	}
	mine, _ := Read(t.me)
	for _, have := range mine {
		if have.Name == m.Name {
			return tool.Errorf(fmt.Sprintf("you already have a memory %s (%s): change it with update_memory, or remove it first", m.Name, have.Tier))
		}
	}
	if len(mine) >= MaxPerAgent {
		return tool.Errorf(fmt.Sprintf("you have %d memories, the most an agent keeps: remove one you no longer need first", len(mine)))
	}
	m.Created = t.now().UTC()
	m.Updated = m.Created
	if err := write(t.me.Dir, m, true); err != nil {
		return tool.Errorf("the memory was not saved: " + err.Error())
	}
	return ok(ToolCreate, m, false)
}

func (t *tools) update(_ context.Context, args string) tool.Result {
	var in struct {
		Name, Content string
		Description   *string
	}
	if r, good := tool.Decode(args, &in, `{"name": "user_preferences", "content": "- short answers, in French"}`); !good {
		return r
	}
	m, r, found := t.mine(in.Name)
	if !found {
		return r
	}
	m.Content = strings.TrimSpace(in.Content)
	if in.Description != nil {
		m.Description = oneLine(*in.Description, maxDescription)
	}
	if err := check(m); err != nil {
		return tool.Errorf(err.Error())
	}
	m.Updated = t.now().UTC()
	if err := write(t.me.Dir, m, false); err != nil {
		return tool.Errorf("the memory was not saved: " + err.Error())
	}
	return ok(ToolUpdate, m, false)
}

func (t *tools) remove(_ context.Context, args string) tool.Result {
	var in struct{ Name string }
	if r, good := tool.Decode(args, &in, `{"name": "user_preferences"}`); !good {
		return r
	}
	m, r, found := t.mine(in.Name)
	if !found {
		return r
	}
	if err := remove(t.me.Dir, m); err != nil {
		return tool.Errorf("the memory was not removed: " + err.Error())
	}
	return ok(ToolRemove, m, false)
}

func (t *tools) load(_ context.Context, args string) tool.Result {
	var in struct{ Name string }
	if r, good := tool.Decode(args, &in, `{"name": "project_history"}`); !good {
		return r
	}
	name := strings.TrimSpace(in.Name)
	if m, _, found := t.mine(name); found {
		return ok(ToolLoad, m, true)
	}
	var best *Memory
	for _, o := range t.team() {
		if o.Label == t.me.Label {
			continue
		}
		ms, _ := Read(o)
		for _, m := range ms {
			if m.Name == name && (best == nil || m.Updated.After(best.Updated)) {
				best = &m
			}
		}
	}
	if best == nil {
		return tool.Errorf(fmt.Sprintf("no agent has a memory %s: the memories are listed at the start of your turn", tool.Quote(name)))
	}
	return ok(ToolLoad, *best, true)
}

// mine finds the agent's own memory called name, or the error to return.
func (t *tools) mine(name string) (Memory, tool.Result, bool) {
	name = strings.TrimSpace(name)
	mine, _ := Read(t.me)
	for _, m := range mine {
		if m.Name == name {
			return m, tool.Result{}, true
		}
	}
	for _, o := range t.team() {
		if o.Label == t.me.Label {
			continue
		}
		ms, _ := Read(o)
		for _, m := range ms {
			if m.Name == name {
				return Memory{}, tool.Errorf(fmt.Sprintf("memory %s is %s's: each agent changes only its own; create_memory makes one of yours", name, o.Label)), false
			}
		}
	}
	return Memory{}, tool.Errorf(fmt.Sprintf("you have no memory %s; create_memory makes one", tool.Quote(name))), false
}

// check validates what an agent asks to save.
func check(m Memory) error {
	if err := checkName(m.Name); err != nil {
		return err
	}
	switch {
	case m.Tier != ShortTerm && m.Tier != LongTerm:
		return fmt.Errorf("tier %q: use short_term or long_term", m.Tier)
	case m.Description == "":
		return fmt.Errorf("give a description: one or two sentences on what the memory holds")
	case m.Content == "":
		return fmt.Errorf("the content is empty: write what the memory should hold")
	case len(m.Content) > MaxContent:
		return fmt.Errorf("the content is %d bytes, more than %d: keep a memory short, or split it", len(m.Content), MaxContent)
	}
	return nil
}
