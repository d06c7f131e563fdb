package provider

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// What a HostedToolChunk's Result shows is for people (the model already has the whole
// result), so every backend summarises the same way.

// MaxHostedOutput bounds the output of a hosted code run in a HostedToolChunk.
const MaxHostedOutput = 2048

// Source is one web source a hosted search used; either field may be empty.
type Source struct{ Title, URL string }

// sourcesShown is how many sources a search summary names.
const sourcesShown = 3

// SearchSummary says how many sources a hosted search used and names the first few, one per
// line: "4 sources:\n- Title <url>\n- ...\n- and 1 more".
func SearchSummary(sources []Source) string {
	if len(sources) == 0 {
		return "no sources"
	}
	var b strings.Builder
	if len(sources) == 1 {
		b.WriteString("1 source:")
	} else {
		fmt.Fprintf(&b, "%d sources:", len(sources))
	}
	for _, s := range sources[:min(len(sources), sourcesShown)] {
		b.WriteString("\n- ")
		if s.Title != "" && s.URL != "" {
			b.WriteString(s.Title + " <" + s.URL + ">")
		} else {
			b.WriteString(s.Title + s.URL)
		}
	}
	if n := len(sources) - sourcesShown; n > 0 {
		fmt.Fprintf(&b, "\n- and %d more", n)
	}
	return b.String()
}

// Clip cuts s to at most n bytes on a rune boundary, saying how much was left out.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s\n... (%d more bytes)", s[:cut], len(s)-cut)
}

// HostedArgs encodes what a hosted call was asked, for HostedToolChunk.Call.Arguments. HTML
// escaping is off so that code reads as written ("a < b", not "a \u003c b").
func HostedArgs(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "{}" // callers pass maps and structs of strings
	}
	return strings.TrimSuffix(b.String(), "\n")
}
