package mcptool

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxToolNameLen is the longest exposed tool name; longer names are shortened (providers such
// as OpenAI and Anthropic accept at most 64 characters matching [A-Za-z0-9_-]).
const MaxToolNameLen = 64

// ToolName returns the name under which tool of server is offered to models:
// mcp__<server>__<tool>, each part stripped of leading and trailing "_-." and with characters
// outside [A-Za-z0-9_-] replaced by "_". A name longer than MaxToolNameLen keeps its start and
// ends with "_" and 8 hex digits of a hash of the original names. renamed reports whether the
// result differs from the plain mcp__<server>__<tool> form.
func ToolName(server, tool string) (name string, renamed bool) {
	s, t := namePart(server), namePart(tool)
	name = "mcp__" + s + "__" + t
	renamed = s != strings.Trim(server, "_-.") || t != strings.Trim(tool, "_-.")
	if len(name) > MaxToolNameLen {
		sum := sha256.Sum256([]byte(server + "\x00" + tool))
		name = name[:MaxToolNameLen-9] + "_" + hex.EncodeToString(sum[:4])
		renamed = true
	}
	return name, renamed
}

// namePart makes one part of a tool name safe for providers.
func namePart(s string) string {
	b := []byte(strings.Trim(s, "_-."))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if out := strings.Trim(string(b), "_-"); out != "" {
		return out
	}
	sum := sha256.Sum256([]byte(s))
	return "x" + hex.EncodeToString(sum[:3])
}

// toolFilter decides which of a server's tools an agent gets (features.md 3.4): the server's
// allow-list replaces the backend's when not empty; excludes are unioned. Entries match the
// server's own tool name or the exposed mcp__<server>__<tool> form.
type toolFilter struct {
	server             string
	allowed, excluded  []string
	serverAllowListSet bool
}

func newToolFilter(s Server, allowed, excluded []string) toolFilter {
	f := toolFilter{server: s.Name, allowed: allowed, excluded: slices.Concat(excluded, s.ExcludeTools)}
	if len(s.AllowedTools) > 0 {
		f.allowed, f.serverAllowListSet = s.AllowedTools, true
	}
	return f
}

func (f toolFilter) matches(list []string, tool string) bool {
	exposed, _ := ToolName(f.server, tool)
	return slices.ContainsFunc(list, func(e string) bool {
		return e == tool || e == exposed || e == "mcp__"+f.server+"__"+tool
	})
}

func (f toolFilter) keep(tool string) bool {
	if len(f.allowed) > 0 && !f.matches(f.allowed, tool) {
		return false
	}
	return !f.matches(f.excluded, tool)
}

// unmatched returns the server-level allow-list entries that name no tool, to catch typos.
func (f toolFilter) unmatched(tools []*mcp.Tool) []string {
	if !f.serverAllowListSet {
		return nil
	}
	var out []string
	for _, e := range f.allowed {
		if !slices.ContainsFunc(tools, func(t *mcp.Tool) bool { return f.matches([]string{e}, t.Name) }) {
			out = append(out, e)
		}
	}
	return out
}

// objectSchema returns a private copy of a tool's input schema as a JSON Schema object. A
// missing or non-object schema becomes an empty object schema; properties is always present.
func objectSchema(in any) map[string]any {
	var m map[string]any
	if b, err := json.Marshal(in); err == nil {
		_ = json.Unmarshal(b, &m) // a non-object leaves m nil
	}
	if m == nil {
		m = map[string]any{}
	}
	if t, ok := m["type"]; !ok || t != "object" {
		if ok { // an array or a scalar cannot describe named arguments
			m = map[string]any{}
		}
		m["type"] = "object"
	}
	if _, ok := m["properties"].(map[string]any); !ok {
		m["properties"] = map[string]any{}
	}
	return m
}

// resultText turns a tool result into text for the model: text parts joined by newlines, other
// content summarised, and the structured content as JSON when there is no text at all.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	hasText := false
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
			hasText = true
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image: %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio: %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data)))
		case *mcp.ResourceLink:
			s := fmt.Sprintf("[resource link: %s <%s>", c.Name, c.URI)
			if c.MIMEType != "" {
				s += ", " + c.MIMEType
			}
			if c.Description != "" {
				s += ": " + c.Description
			}
			parts = append(parts, s+"]")
		case *mcp.EmbeddedResource:
			parts = append(parts, embedded(c.Resource))
			hasText = hasText || (c.Resource != nil && c.Resource.Text != "")
		case nil:
		default:
			parts = append(parts, fmt.Sprintf("[%T content]", c))
		}
	}
	if !hasText && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	out := strings.Join(parts, "\n")
	if out == "" {
		if res.IsError {
			return "the tool reported an error without details"
		}
		return "(no output)"
	}
	return out
}

func embedded(r *mcp.ResourceContents) string {
	if r == nil {
		return "[resource: empty]"
	}
	if r.Text != "" {
		head := "[resource: " + r.URI
		if r.MIMEType != "" {
			head += ", " + r.MIMEType
		}
		return head + "]\n" + r.Text
	}
	return fmt.Sprintf("[resource: %s, %s, %d bytes]", r.URI, orUnknown(r.MIMEType), len(r.Blob))
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}
