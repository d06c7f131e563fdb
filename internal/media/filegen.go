package media

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/openai/openai-go/v3"

	"massgen/internal/provider"
	"massgen/internal/tool"
	"massgen/internal/usage"
)

// MassGen v0.1.12's text_to_file_generation: an OpenAI model writes the content, which is
// saved as a file. txt and md are the text as written; pdf is laid out here (pdf.go); pptx is
// made by OpenAI itself, with python-pptx in its code interpreter (filecode.go), since no
// pure-Go writer of it is worth a dependency.

const (
	defaultFileModel = "gpt-4o" // MassGen's
	maxFileText      = 1 << 20  // the content the model writes, before it is laid out
	maxFileNameLen   = 100
	previewChars     = 500
)

var fileFormats = []string{"txt", "md", "pdf", "pptx"}

// otherFormats are formats people ask for that text_to_file_generation does not make, with
// what to do instead.
var otherFormats = map[string]string{
	"docx": "make md and convert it (pandoc report.md -o report.docx) with execute_command, if you have it",
	"doc":  "make md and convert it (pandoc report.md -o report.docx) with execute_command, if you have it",
	"xlsx": "write a csv with write_file; spreadsheets open it",
	"csv":  "write it with write_file",
	"html": "write it with write_file",
	"json": "write it with write_file",
}

type fileArgs struct {
	Prompt      string `json:"prompt"`
	FileFormat  string `json:"file_format"`
	Filename    string `json:"filename"`
	Model       string `json:"model"`
	StoragePath string `json:"storage_path"`
}

func (ts *toolset) textToFileTool() tool.Tool {
	return tool.Tool{Spec: spec("text_to_file_generation",
		"Have an OpenAI model write a document from your prompt and save it in your workspace as txt, md, pdf or pptx. For pdf, write "+
			"Markdown-style content (# headings, - bullets); for pptx, describe the slides (# Title per slide, - bullets, --- between "+
			"slides): OpenAI's code interpreter builds the deck. The result names the saved file and previews its content.",
		schema(map[string]any{
			"prompt":       str("What the document says: its content, structure and length. Give the full content to have it laid out as it is."),
			"file_format":  map[string]any{"type": "string", "enum": fileFormats, "description": "The file's format (default txt)."},
			"filename":     str("The file's name without extension (default: from the prompt and the time)."),
			"model":        str("The OpenAI model that writes it (default " + defaultFileModel + ")."),
			"storage_path": str("Folder in your workspace to save into, not a file name (default: the workspace itself)."),
		}, "prompt")), Run: ts.textToFile}
}

func (ts *toolset) textToFile(ctx context.Context, args string) tool.Result {
	const op = "generate_and_store_file"
	var in fileArgs
	if err := decode("text_to_file_generation", args, &in, `{"prompt": "a one-page project summary", "file_format": "pdf"}`); err != nil {
		return failure(op, err)
	}
	format, name, err := ts.checkFileArgs(&in)
	if err != nil {
		return failure(op, err)
	}
	b, ok := ts.o.Backends["openai"]
	if !ok {
		return failure(op, errors.New("text_to_file_generation writes with OpenAI: set OPENAI_API_KEY"))
	}
	model := cmpOr(in.Model, defaultFileModel)
	var data []byte
	var text string
	var spent provider.Usage
	if format == "pptx" {
		data, text, spent, err = ts.codeInterpreterFile(ctx, b, model, in.Prompt, name+"."+format)
	} else {
		text, spent, err = ts.writeText(ctx, b, model, in.Prompt, format)
		if err == nil {
			data = []byte(text)
			if format == "pdf" {
				data = writePDF(text)
			}
		}
	}
	fail := func(err error) tool.Result {
		res := failure(op, err)
		res.Spent = spent
		return res
	}
	if err != nil {
		return fail(err)
	}
	abs, err := ts.save(in.StoragePath, name, format, data)
	if err != nil {
		return fail(err)
	}
	out := map[string]any{"file_path": abs, "filename": path.Base(abs), "file_format": format, "content_preview": preview(text),
		"file_size": len(data), "model": model, "prompt": in.Prompt}
	costFields(out, model, spent)
	res := result(op, out)
	res.Spent = spent
	return res
}

// checkFileArgs refuses bad arguments before anything is sent; it returns the format and the
// file's name without extension.
func (ts *toolset) checkFileArgs(in *fileArgs) (format, name string, err error) {
	format = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(cmpOr(in.FileFormat, "txt")), "."))
	if instead, ok := otherFormats[format]; ok {
		return "", "", fmt.Errorf("file_format %q is not made here: %s (formats: %s)", format, instead, strings.Join(fileFormats, ", "))
	}
	if !slices.Contains(fileFormats, format) {
		return "", "", fmt.Errorf("unsupported file_format %q: use %s", clip(format, 20), strings.Join(fileFormats, ", "))
	}
	if strings.TrimSpace(in.Prompt) == "" {
		return "", "", fmt.Errorf(`give prompt, e.g. {"prompt": "a one-page project summary", "file_format": "%s"}`, format)
	}
	if err := errors.Join(checkText("prompt", in.Prompt, maxPrompt), checkText("model", in.Model, maxModelName),
		checkText("storage_path", in.StoragePath, maxStoragePath)); err != nil {
		return "", "", err
	}
	name = ts.o.Now().Format("20060102_150405") + "_" + cleanName(in.Prompt)
	if in.Filename != "" {
		// MassGen drops the extension the model gives and uses the format's.
		n := strings.TrimSpace(in.Filename)
		if i := strings.LastIndexByte(n, '.'); i > 0 {
			n = n[:i]
		}
		switch {
		case len(n) > maxFileNameLen:
			return "", "", fmt.Errorf("filename is longer than %d bytes", maxFileNameLen)
		case n == "" || strings.ContainsAny(n, `/\`) || strings.HasPrefix(n, "."):
			return "", "", fmt.Errorf("filename %q is not a plain file name: give folders in storage_path", clip(in.Filename, 60))
		}
		name = n
	}
	return format, name, nil
}

// writeText has model write the document through Chat Completions, as MassGen does.
func (ts *toolset) writeText(ctx context.Context, b Backend, model, prompt, format string) (string, provider.Usage, error) {
	sys := map[string]string{
		"txt": "Write the document the user asks for as plain text, ready to save as a .txt file: no Markdown, no remarks about it.",
		"md":  "Write the document the user asks for in Markdown, ready to save as a .md file: no remarks about it.",
		"pdf": "Write the document the user asks for, ready to be laid out as a PDF: # and ## headings, - bullets, short paragraphs " +
			"separated by blank lines; no tables or images, no remarks about it.",
	}[format]
	svc := openai.NewChatCompletionService(ts.openaiOptions(b)...)
	resp, err := svc.New(ctx, openai.ChatCompletionNewParams{Model: model,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(sys), openai.UserMessage(prompt)}})
	if err != nil {
		return "", provider.Usage{}, ts.providerError(b, err)
	}
	u := provider.Usage{InputTokens: resp.Usage.PromptTokens, CachedInputTokens: resp.Usage.PromptTokensDetails.CachedTokens,
		OutputTokens: resp.Usage.CompletionTokens}
	text := ""
	if len(resp.Choices) > 0 {
		text = resp.Choices[0].Message.Content
	}
	if u.InputTokens == 0 && u.OutputTokens == 0 {
		// No usage reported: billed all the same, so estimated from the sizes.
		u = provider.Usage{InputTokens: usage.Tokens(len(sys) + len(prompt)), OutputTokens: usage.Tokens(len(text)), Estimated: true}
	}
	spent := tokenSpend(model, u, 0)
	if strings.TrimSpace(text) == "" {
		return "", spent, fmt.Errorf("openai (%s) wrote nothing", model)
	}
	return clipText(text, maxFileText), spent, nil
}

// tokenSpend is what an OpenAI model call of a tool cost, plus fee: its list price, else
// unknown. Only the cost is reported (tool.Result.Spent).
func tokenSpend(model string, u provider.Usage, fee float64) provider.Usage {
	if !usage.Known("openai", model) {
		return provider.Usage{Unknown: true, Estimated: u.Estimated, CostUSD: fee}
	}
	return provider.Usage{CostUSD: usage.Cost("openai", model, u) + fee, Estimated: u.Estimated}
}

func preview(s string) string {
	r := []rune(s)
	if len(r) <= previewChars {
		return s
	}
	return string(r[:previewChars]) + "..."
}
