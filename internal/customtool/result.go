package customtool

import (
	"encoding/json"
	"fmt"
	"strings"
)

// emptyResult is what the model gets from a tool that returned nothing, as in MassGen.
const emptyResult = "Tool executed successfully"

// block is one piece of a result in the protocol.
type block struct {
	Type string `json:"type"`
	Text string `json:"text"`
	// Size is the length of an image's or audio's data; Ref its path or URL when it has one.
	Size int    `json:"size"`
	Ref  string `json:"ref"`
	// MimeType is an image's or audio's type, when a program says.
	MimeType string `json:"mime_type"`
}

// render turns a call's result into the model's text: a string as it is, {"content": [blocks]}
// as their text with a note for each image or audio (tool results carry text only here), any
// other JSON as compact JSON. The text is capped at OutputLimit.
func render(res json.RawMessage) string {
	var text string
	var s string
	var c struct {
		Content *[]block `json:"content"`
	}
	switch {
	case len(res) == 0 || string(res) == "null":
	case json.Unmarshal(res, &s) == nil:
		text = s
	case json.Unmarshal(res, &c) == nil && c.Content != nil:
		var b strings.Builder
		for _, bl := range *c.Content {
			switch bl.Type {
			case "text", "":
				b.WriteString(bl.Text)
			default:
				b.WriteString(mediaNote(bl))
			}
		}
		text = b.String()
	default:
		text = string(res)
	}
	if strings.TrimSpace(text) == "" {
		return emptyResult
	}
	if len(text) > OutputLimit {
		text = fmt.Sprintf("%s\n[output cut: the tool returned %d bytes; the first %d are shown]", cutAt(text, OutputLimit), len(text), OutputLimit)
	}
	return text
}

// mediaNote stands for an image or audio block, which this build does not pass to models.
func mediaNote(b block) string {
	what := b.Type
	if b.MimeType != "" {
		what += " (" + b.MimeType + ")"
	}
	if b.Ref != "" {
		return fmt.Sprintf("\n[%s at %s: tool results reach the model as text only, so it is not shown]\n", what, b.Ref)
	}
	return fmt.Sprintf("\n[%s of %d characters of data: tool results reach the model as text only, so it is not shown]\n", what, b.Size)
}

// cutAt shortens s to at most n bytes on a rune boundary.
func cutAt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
