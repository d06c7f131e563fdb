package media

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"massgen/internal/filetool"
	"massgen/internal/tool"
)

// Default prompts (MassGen's, in substance).
const (
	promptImage = "What's in this image? Describe it in detail."
	promptAudio = "Transcribe this audio. Identify the speakers if there are several."
	promptVideo = "What happens in this video? Describe its content, the actions and any important details."
	promptFile  = "Analyze this file: its content, purpose and structure."
)

// load reads a file of the wanted kind ("" takes any media kind) through the workspace.
func (ts *toolset) load(path, want string) (part, string, error) {
	kind, mime, ok := kindOf(path)
	ext := strings.ToLower(filepath.Ext(path))
	switch {
	case strings.TrimSpace(path) == "":
		return part{}, "", fmt.Errorf("the path is empty: give a file in your workspace or a context path")
	case officeExt[ext]:
		return part{}, "", fmt.Errorf("%s: %s documents are not read here; convert it to PDF or text first (for example with a command, if you have execute_command)", path, ext)
	case !ok || (want != "" && kind != want):
		w := want
		if w == "" {
			return part{}, "", fmt.Errorf("unsupported file type %q for %s: images (%s), audio (%s) or video (%s)",
				ext, path, supported(kindImage), supported(kindAudio), supported(kindVideo))
		}
		return part{}, "", fmt.Errorf("%s is not %s%s file: use one of %s", path, article(w), w, supported(w))
	}
	if want == "" && kind == kindFile {
		return part{}, "", fmt.Errorf("%s is a document; read_media takes images, audio and video (understand_file reads documents)", path)
	}
	abs, data, err := filetool.ReadBytes(ts.o.Workspace, path, maxInput[kind])
	if err != nil {
		return part{}, abs, err
	}
	if mime, err = sniff(path, kind, mime, data); err != nil {
		return part{}, abs, err
	}
	return part{kind: kind, mime: mime, name: filepath.Base(abs), data: data}, abs, nil
}

// understand sends the files of one kind with prompt to the chosen provider.
func (ts *toolset) understand(ctx context.Context, kind, backend, model, prompt string, parts []part) (string, Backend, string, error) {
	b, m, err := ts.choose(kind, backend, model)
	if err != nil {
		return "", b, m, err
	}
	if kind == kindAudio && b.Name == "openai" {
		// OpenAI transcribes; its transcription endpoint takes no instructions (as in MassGen).
		var texts []string
		for _, p := range parts {
			t, err := ts.transcribeOpenAI(ctx, b, m, p)
			if err != nil {
				return "", b, m, err
			}
			texts = append(texts, t)
		}
		return strings.Join(texts, "\n\n"), b, m, nil
	}
	text, err := ts.ask(ctx, b, m, prompt, parts)
	return text, b, m, err
}

func (ts *toolset) understandImageTool() tool.Tool {
	return tool.Tool{Spec: spec("understand_image",
		"Analyze one image, or several together, with a vision model and return its answer. Give image_path for one image, or images "+
			"(names to paths) to compare several; name them in the prompt. PNG, JPEG, WebP, GIF or BMP, at most 18 MiB each, "+
			"from your workspace or a context path.",
		schema(map[string]any{
			"image_path": str("The image, relative to your workspace or absolute."),
			"images": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"},
				"description": `Several images by name, e.g. {"before": "a.png", "after": "b.png"}; instead of image_path.`},
			"prompt": str("The question about the image(s). Default: a detailed description."),
			"model":  str("The model to ask (default: your own, when it sees images, else the provider's default)."),
		})), Run: func(ctx context.Context, args string) tool.Result {
		var in struct {
			ImagePath string            `json:"image_path"`
			Images    map[string]string `json:"images"`
			Prompt    string            `json:"prompt"`
			Model     string            `json:"model"`
		}
		const op = "understand_image"
		if err := decode(op, args, &in, `{"image_path": "chart.png", "prompt": "What does the chart show?"}`); err != nil {
			return failure(op, err)
		}
		out, err := ts.understandImages(ctx, in.ImagePath, in.Images, in.Prompt, in.Model)
		if err != nil {
			return failure(op, err)
		}
		return result(op, out)
	}}
}

// understandImages is understand_image, shared with read_media.
func (ts *toolset) understandImages(ctx context.Context, one string, named map[string]string, prompt, model string) (map[string]any, error) {
	switch {
	case one != "" && len(named) > 0:
		return nil, fmt.Errorf("give image_path or images, not both")
	case one == "" && len(named) == 0:
		return nil, fmt.Errorf(`give image_path (one image) or images ({"name": "path", ...})`)
	case len(named) > maxImagesPerAsk:
		return nil, fmt.Errorf("%d images; at most %d go in one call", len(named), maxImagesPerAsk)
	}
	if err := checkText("prompt", prompt, maxPrompt); err != nil {
		return nil, err
	}
	if err := checkText("model", model, maxModelName); err != nil {
		return nil, err
	}
	if prompt == "" {
		prompt = promptImage
	}
	var parts []part
	out := map[string]any{"prompt": prompt}
	if one != "" {
		p, abs, err := ts.load(one, kindImage)
		if err != nil {
			return nil, err
		}
		parts, out["image_path"] = []part{p}, abs
	} else {
		names := make([]string, 0, len(named))
		for n := range named {
			names = append(names, n)
		}
		slices.Sort(names)
		paths := map[string]string{}
		var list strings.Builder
		list.WriteString("Images provided:\n")
		for _, n := range names {
			if len(n) > maxNameLen {
				return nil, fmt.Errorf("the image name %q is longer than %d bytes", clip(n, 40), maxNameLen)
			}
			p, abs, err := ts.load(named[n], kindImage)
			if err != nil {
				return nil, fmt.Errorf("image %q: %w", n, err)
			}
			parts = append(parts, p)
			paths[n] = abs
			fmt.Fprintf(&list, "- %s: %s\n", n, p.name)
		}
		out["images"] = paths
		if len(parts) > 1 {
			prompt = list.String() + "\n" + prompt
		}
	}
	text, b, m, err := ts.understand(ctx, kindImage, "", model, prompt, parts)
	if err != nil {
		return nil, err
	}
	out["model"], out["backend"], out["response"] = m, b.Name, text
	return out, nil
}

func (ts *toolset) understandAudioTool() tool.Tool {
	return tool.Tool{Spec: spec("understand_audio",
		"Transcribe or analyze audio files (mp3, wav, m4a, ogg, flac, aac, opus; at most 25 MiB each) from your workspace or a context path. "+
			"Gemini follows the prompt; OpenAI transcribes.",
		schema(map[string]any{
			"audio_paths":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "The audio files."},
			"prompt":       str("What to do with the audio (default: transcribe, naming speakers)."),
			"model":        str("The model (default: the provider's)."),
			"backend_type": str("Preferred provider: gemini or openai (default: the first with a key)."),
		}, "audio_paths")), Run: func(ctx context.Context, args string) tool.Result {
		var in struct {
			AudioPaths  []string `json:"audio_paths"`
			Prompt      string   `json:"prompt"`
			Model       string   `json:"model"`
			BackendType string   `json:"backend_type"`
		}
		const op = "understand_audio"
		if err := decode(op, args, &in, `{"audio_paths": ["talk.mp3"]}`); err != nil {
			return failure(op, err)
		}
		out, err := ts.understandAudio(ctx, in.AudioPaths, in.Prompt, in.Model, in.BackendType)
		if err != nil {
			return failure(op, err)
		}
		return result(op, out)
	}}
}

func (ts *toolset) understandAudio(ctx context.Context, paths []string, prompt, model, backend string) (map[string]any, error) {
	switch {
	case len(paths) == 0:
		return nil, fmt.Errorf(`audio_paths is empty: give at least one file, e.g. {"audio_paths": ["talk.mp3"]}`)
	case len(paths) > maxAudioFiles:
		return nil, fmt.Errorf("%d audio files; at most %d go in one call", len(paths), maxAudioFiles)
	}
	if err := errors.Join(checkText("prompt", prompt, maxPrompt), checkText("model", model, maxModelName)); err != nil {
		return nil, err
	}
	if prompt == "" {
		prompt = promptAudio
	}
	var transcriptions []map[string]any
	var files []string
	var b Backend
	var m string
	for _, p := range paths {
		pt, abs, err := ts.load(p, kindAudio)
		if err != nil {
			return nil, err
		}
		var text string
		text, b, m, err = ts.understand(ctx, kindAudio, backend, model, prompt, []part{pt})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		transcriptions = append(transcriptions, map[string]any{"file": abs, "transcription": text})
		files = append(files, abs)
	}
	return map[string]any{"transcriptions": transcriptions, "audio_files": files, "model": m, "backend": b.Name}, nil
}

func (ts *toolset) understandFileTool() tool.Tool {
	return tool.Tool{Spec: spec("understand_file",
		"Analyze a document with a model and return its answer: a PDF (at most 20 MiB, sent as a document) or a text file (code, "+
			"Markdown, JSON, CSV, logs...; its first max_chars characters). Office files (docx, xlsx, pptx) are refused: convert them first. "+
			"For images, audio and video use read_media.",
		schema(map[string]any{
			"file_path": str("The file, relative to your workspace or absolute."),
			"prompt":    str("The question about the file (default: its content, purpose and structure)."),
			"model":     str("The model (default: your own when it reads documents, else the provider's)."),
			"max_chars": map[string]any{"type": "integer", "description": "Characters of a text file to send (default 50000, at most 200000)."},
		}, "file_path")), Run: func(ctx context.Context, args string) tool.Result {
		var in struct {
			FilePath string `json:"file_path"`
			Prompt   string `json:"prompt"`
			Model    string `json:"model"`
			MaxChars int    `json:"max_chars"`
		}
		const op = "understand_file"
		if err := decode(op, args, &in, `{"file_path": "report.pdf", "prompt": "Summarize it."}`); err != nil {
			return failure(op, err)
		}
		out, err := ts.understandFile(ctx, in.FilePath, in.Prompt, in.Model, in.MaxChars)
		if err != nil {
			return failure(op, err)
		}
		return result(op, out)
	}}
}

func (ts *toolset) understandFile(ctx context.Context, path, prompt, model string, maxChars int) (map[string]any, error) {
	switch {
	case maxChars < 0 || maxChars > maxMaxChars:
		return nil, fmt.Errorf("max_chars %d is out of range: use 1 to %d (default %d)", maxChars, maxMaxChars, defaultMaxChars)
	case maxChars == 0:
		maxChars = defaultMaxChars
	}
	if err := checkText("prompt", prompt, maxPrompt); err != nil {
		return nil, err
	}
	if prompt == "" {
		prompt = promptFile
	}
	out := map[string]any{"prompt": prompt}
	var parts []part
	if kind, _, ok := kindOf(path); ok && kind != kindFile {
		return nil, fmt.Errorf("%s is %s%s file; use read_media for images, audio and video", path, article(kind), kind)
	} else if ok {
		p, abs, err := ts.load(path, kindFile)
		if err != nil {
			return nil, err
		}
		parts = []part{p}
		out["file_path"], out["file_name"], out["file_type"], out["file_size"] = abs, p.name, "pdf", len(p.data)
	} else {
		if officeExt[strings.ToLower(filepath.Ext(path))] {
			_, _, err := ts.load(path, kindFile)
			return nil, err
		}
		abs, data, err := filetool.ReadBytes(ts.o.Workspace, path, maxTextFileScan)
		if err != nil {
			return nil, err
		}
		if !utf8.Valid(data) || strings.IndexByte(string(data), 0) >= 0 {
			return nil, fmt.Errorf("%s is binary, not text; understand_file reads PDFs and text files", path)
		}
		text, truncated := string(data), false
		if n := utf8.RuneCountInString(text); n > maxChars {
			text, truncated = string([]rune(text)[:maxChars]), true
		}
		prompt = fmt.Sprintf("File: %s\n\n<file>\n%s\n</file>\n\n%s", filepath.Base(abs), text, prompt)
		out["file_path"], out["file_name"], out["file_type"], out["file_size"] = abs, filepath.Base(abs), "text", len(data)
		out["chars_read"], out["truncated"] = utf8.RuneCountInString(text), truncated
	}
	text, b, m, err := ts.understand(ctx, kindFile, "", model, prompt, parts)
	if err != nil {
		return nil, err
	}
	out["model"], out["backend"], out["response"] = m, b.Name, text
	return out, nil
}

// checkText refuses a string argument longer than max bytes.
func checkText(name, s string, max int) error {
	if len(s) > max {
		return fmt.Errorf("%s is %d bytes long; the limit is %d", name, len(s), max)
	}
	return nil
}

// readMediaTool is MassGen's read_media: the understand_* tool for the file's kind, one file
// or a batch.
func (ts *toolset) readMediaTool() tool.Tool {
	return tool.Tool{Spec: spec("read_media",
		"Understand an image, audio or video file with a multimodal model and get its answer as text: give file_path and a prompt "+
			"(ask critically when judging work: what is missing, broken or wrong?). Images: png, jpg, jpeg, webp, gif, bmp; audio: mp3, "+
			"wav, m4a, ogg, flac, aac, opus; video: mp4, mov, avi, mkv, webm (whole to Gemini; to OpenAI or Claude as 8 still frames, "+
			"without the sound). Or give inputs to analyze up to 8 items in parallel, each "+
			`{"files": {"name": "path", ...}, "prompt": "..."}; several images of one input are sent together. Files come from your `+
			"workspace or context paths.",
		schema(map[string]any{
			"file_path": str("One media file, relative to your workspace or absolute."),
			"prompt":    str("The question about the media (default: describe it)."),
			"inputs": map[string]any{"type": "array", "description": "Batch: items of {files: {name: path}, prompt}; instead of file_path.",
				"items": map[string]any{"type": "object", "properties": map[string]any{
					"files":  map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
					"prompt": map[string]any{"type": "string"}}, "required": []string{"files"}}},
			"max_concurrent": map[string]any{"type": "integer", "description": "Batch items analyzed at once (default 4, at most 4)."},
		})), Run: ts.readMedia}
}

type mediaInput struct {
	Files  map[string]string `json:"files"`
	Prompt string            `json:"prompt"`
}

func (ts *toolset) readMedia(ctx context.Context, args string) tool.Result {
	const op = "read_media"
	var in struct {
		FilePath      string       `json:"file_path"`
		Prompt        string       `json:"prompt"`
		Inputs        []mediaInput `json:"inputs"`
		MaxConcurrent int          `json:"max_concurrent"`
	}
	if err := decode(op, args, &in, `{"file_path": "screenshot.png", "prompt": "What is wrong with this page?"}`); err != nil {
		return failure(op, err)
	}
	switch {
	case in.FilePath != "" && len(in.Inputs) > 0:
		return failure(op, fmt.Errorf("give file_path or inputs, not both"))
	case in.FilePath == "" && len(in.Inputs) == 0:
		return failure(op, fmt.Errorf(`give file_path, e.g. {"file_path": "screenshot.png", "prompt": "..."}, or inputs for a batch`))
	case len(in.Inputs) > maxBatch:
		return failure(op, fmt.Errorf("%d inputs; at most %d go in one call", len(in.Inputs), maxBatch))
	case in.MaxConcurrent < 0:
		return failure(op, fmt.Errorf("max_concurrent must be 1 or more (default 4)"))
	}
	if in.FilePath != "" {
		opName, out, err := ts.readOne(ctx, map[string]string{"file": in.FilePath}, in.Prompt, true)
		if err != nil {
			return failure(opName, err)
		}
		return result(opName, out)
	}
	for i, inp := range in.Inputs {
		if len(inp.Files) == 0 {
			return failure(op, fmt.Errorf(`inputs[%d] has no files: give {"files": {"name": "path"}, "prompt": "..."}`, i))
		}
	}
	workers := min(max(in.MaxConcurrent, 1), maxConcurrent)
	if in.MaxConcurrent == 0 {
		workers = maxConcurrent
	}
	results := make([]map[string]any, len(in.Inputs))
	eachBounded(ctx, len(in.Inputs), workers, func(i int) {
		inp := in.Inputs[i]
		prompt := inp.Prompt
		if prompt == "" {
			prompt = in.Prompt
		}
		_, out, err := ts.readOne(ctx, inp.Files, prompt, false)
		if err != nil {
			results[i] = map[string]any{"input_index": i, "success": false, "error": err.Error()}
			return
		}
		out["input_index"], out["success"] = i, true
		results[i] = out
	}, func(i int, err error) {
		results[i] = map[string]any{"input_index": i, "success": false, "error": err.Error()}
	})
	return batchResult(op, results, nil)
}

// readOne analyzes one input of read_media: the kind of its first file decides; several
// images go together, audio files one after another, a video alone.
func (ts *toolset) readOne(ctx context.Context, files map[string]string, prompt string, single bool) (string, map[string]any, error) {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	first := files[names[0]]
	kind, _, ok := kindOf(first)
	if !ok || kind == kindFile {
		_, _, err := ts.load(first, "")
		return "read_media", nil, err
	}
	if prompt == "" {
		prompt = fmt.Sprintf("Analyze this %s and describe its contents.", kind)
	}
	switch kind {
	case kindImage:
		if single {
			out, err := ts.understandImages(ctx, first, nil, prompt, "")
			return "understand_image", out, err
		}
		out, err := ts.understandImages(ctx, "", files, prompt, "")
		return "understand_image", out, err
	case kindAudio:
		paths := make([]string, len(names))
		for i, n := range names {
			paths[i] = files[n]
		}
		out, err := ts.understandAudio(ctx, paths, prompt, "", "")
		return "understand_audio", out, err
	}
	out, err := ts.understandVideo(ctx, first, prompt, "", "", nil)
	return "understand_video", out, err
}
