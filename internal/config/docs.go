package config

import (
	"fmt"
	"strings"
)

// KeysMarkdown renders the schema as the reference docs/config-keys.md: one table per section,
// with each key's status and the MassGen version that added it.
func KeysMarkdown() string {
	var b strings.Builder
	b.WriteString(`# Config keys

<!-- Generated from internal/config's schema: go test ./internal/config -run TestKeysMarkdown -update -->

Every key a config may hold: the keys of MassGen up to v0.1.97 and this port's own. Each is either
run, or refused by name with what to do instead; none is dropped silently.

- **implemented**: read and used.
- **refused**: any value is an error.
- **empty-only**: refused unless empty (null, ` + "`[]` or `{}`" + `).
- **off-only**: accepted only while off (false, 0, or the values listed); anything else is an error.
- **ignored**: accepted and checked, without effect: it gives the run MassGen would make, or it tunes a
  feature that is off ("tunes"; the key is refused along with that feature when the feature is on).
  Keys marked "warns" say so when set.

A value outside the supported ones of an implemented key is refused by name too. "MassGen" is the
release that added the key ("0.1.12": v0.1.12 or earlier; "0.1.9x": release not recorded; "port":
this port's own key). Backend keys not listed here are passed to the provider as request parameters.

`)
	for _, path := range sectionOrder() {
		s := sections()[path]
		fmt.Fprintf(&b, "## %s\n\n%s\n\n", heading(path), counts(s))
		b.WriteString("| Key | Type | Default | Status | MassGen | Description |\n|---|---|---|---|---|---|\n")
		for _, name := range s.names {
			k := s.keys[name]
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", k.Name, cell(typeText(k)), cell(k.Default),
				cell(statusText(k)), k.Since, cell(describe(k)))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// sectionOrder lists the sections in schema order.
func sectionOrder() []string {
	var out []string
	seen := map[string]bool{}
	for _, k := range schema() {
		if !seen[k.Section] {
			seen[k.Section] = true
			out = append(out, k.Section)
		}
	}
	return out
}

func heading(path string) string {
	if path == secRoot {
		return "Top level"
	}
	return "`" + path + "`"
}

// counts is a section's keys by what this build does with them.
func counts(s *section) string {
	var run, refused, ignored int
	for _, k := range s.keys {
		switch k.Status {
		case Implemented:
			run++
		case Ignored:
			ignored++
		default:
			refused++
		}
	}
	return fmt.Sprintf("%s: %d implemented, %d refused (refused, empty-only or off-only), %d ignored.",
		plural(len(s.keys), "key"), run, refused, ignored)
}

func typeText(k *Key) string {
	if k.Type == TypeEnum {
		return "enum: " + strings.Join(k.Enum, ", ")
	}
	return string(k.Type)
}

func statusText(k *Key) string {
	s := string(k.Status)
	switch {
	case k.Status == OffOnly && k.Accept != nil:
		s += " (accepts " + strings.Join(quoteAll(k.Accept), ", ") + ")"
	case k.Status == Implemented && k.Accept != nil:
		s += " (" + strings.Join(quoteAll(k.Accept), ", ") + "; other values refused)"
	case k.Status == Ignored && k.warn:
		s += ", warns"
	}
	return s
}

func describe(k *Key) string {
	d := k.Doc
	if k.Why != "" && k.Status != Implemented {
		d += " Not supported: " + k.Why + "."
	}
	if k.Needs != "" {
		d += " Tunes `" + k.Needs + "`."
	}
	if len(k.Types) > 0 {
		d += " Only for backend type " + quoteList(k.Types) + "."
	}
	if k.Param {
		d += " A value of the wrong type warns."
	}
	return d
}

func cell(s string) string {
	return strings.ReplaceAll(s, "|", `\|`)
}
