package media

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strings"
	"unicode"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"massgen/internal/config"
	"massgen/internal/filetool"
	"massgen/internal/tool"
)

// OpenAI's built-in voices and speech formats (its speech endpoint's lists).
var (
	voices       = []string{"alloy", "ash", "ballad", "coral", "echo", "fable", "onyx", "nova", "sage", "shimmer", "verse", "marin", "cedar"}
	audioFormats = []string{"mp3", "opus", "aac", "flac", "wav", "pcm"}
)

// Default generation models. MassGen's generate_media asks gpt-5 through the Responses API's
// image_generation tool; the Images API with gpt-image-1 makes the same images without a chat
// model in between. A Responses model named in the config or the call still goes that way.
const (
	defaultImageModel  = "gpt-image-1"
	defaultSpeechModel = "gpt-4o-mini-tts"
)

type generateArgs struct {
	Prompt       string   `json:"prompt"`
	Mode         string   `json:"mode"`
	Prompts      []string `json:"prompts"`
	InputImages  []string `json:"input_images"`
	StoragePath  string   `json:"storage_path"`
	BackendType  string   `json:"backend_type"`
	Model        string   `json:"model"`
	Quality      string   `json:"quality"`
	Size         string   `json:"size"`
	Voice        string   `json:"voice"`
	AudioFormat  string   `json:"audio_format"`
	Instructions string   `json:"instructions"`
	Speed        float64  `json:"speed"`
	// Video: aspect_ratio and duration (MassGen's; OpenAI's image and speech endpoints ignore them).
	AspectRatio string  `json:"aspect_ratio"`
	Duration    seconds `json:"duration"`
	MaxConc     int     `json:"max_concurrent"`
}

func (ts *toolset) generateMediaTool(modes []string) tool.Tool {
	desc := "Generate media from a text prompt and save it in your workspace: "
	var what []string
	if slices.Contains(modes, "image") {
		what = append(what, `images with OpenAI (mode "image": PNG; input_images edits or combines existing ones)`)
	}
	if slices.Contains(modes, "audio") {
		what = append(what, `speech with OpenAI (mode "audio": prompt is the literal text to speak, at most 4096 characters; voice, audio_format, instructions)`)
	}
	if slices.Contains(modes, "video") {
		what = append(what, `videos (mode "video": MP4 from Gemini's Veo or OpenAI's Sora; duration, aspect_ratio; it takes minutes and costs per second of video)`)
	}
	desc += strings.Join(what, "; ") + fmt.Sprintf(". Give prompts instead of prompt to make up to %d in parallel (%d videos). The result names the saved file.",
		maxBatch, maxVideoBatch)
	if !slices.Contains(modes, "video") {
		desc += " Video generation is not offered here."
	}
	return tool.Tool{Spec: spec("generate_media", desc, schema(map[string]any{
		"prompt":         str("What to generate (for speech: the text to say)."),
		"mode":           map[string]any{"type": "string", "enum": modes, "description": "What to make (default " + modes[0] + ")."},
		"prompts":        map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "Batch: several prompts, one file each; instead of prompt."},
		"input_images":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "Images to start from (PNG or JPEG, at most 4 MiB each; image mode, one prompt)."},
		"storage_path":   str("Folder in your workspace to save into (default: the workspace itself)."),
		"backend_type":   str("Provider: openai (or auto); videos: gemini (Veo) or openai (Sora)."),
		"model":          str("The model (default: gpt-image-1 for images, gpt-4o-mini-tts for speech, " + defaultVeoModel + " or " + defaultSoraModel + " for videos)."),
		"quality":        str("Image quality: low, medium, high or auto."),
		"size":           str("Image size, e.g. 1024x1024, 1536x1024, 1024x1536 or auto; video size on OpenAI: 1280x720, 720x1280, 1792x1024 or 1024x1792."),
		"voice":          map[string]any{"type": "string", "enum": voices, "description": "Speech voice (default alloy)."},
		"audio_format":   map[string]any{"type": "string", "enum": audioFormats, "description": "Speech file format (default mp3)."},
		"instructions":   str("How to speak: tone, pace, style (gpt-4o-mini-tts)."),
		"speed":          map[string]any{"type": "number", "description": "Speech speed, 0.25 to 4 (default 1)."},
		"aspect_ratio":   str("Video aspect ratio: 16:9 or 9:16. Images are sized by size instead."),
		"duration":       map[string]any{"type": "integer", "description": "Video length in seconds (default: Sora 4, Veo 8; Sora takes 4, 8 or 12, Veo 4 to 8)."},
		"max_concurrent": map[string]any{"type": "integer", "description": "Batch items made at once (default 4, at most 4)."},
	})), Run: func(ctx context.Context, args string) tool.Result { return ts.generate(ctx, args, modes) }}
}

func (ts *toolset) generate(ctx context.Context, args string, modes []string) tool.Result {
	const op = "generate_media"
	var in generateArgs
	if err := decode(op, args, &in, `{"prompt": "a lighthouse at dawn", "mode": "image"}`); err != nil {
		return failure(op, err)
	}
	if in.Mode == "" {
		in.Mode = modes[0]
	}
	if err := ts.checkGenerate(&in, modes); err != nil {
		return failure(op, err)
	}
	prompts := in.Prompts
	if in.Prompt != "" {
		prompts = []string{in.Prompt}
	}
	if in.Mode == "video" {
		return ts.generateVideos(ctx, in, prompts)
	}
	b, ok := ts.o.Backends["openai"]
	if !ok {
		return failure(op, fmt.Errorf("generate_media makes %s with OpenAI: set OPENAI_API_KEY", map[string]string{"image": "images", "audio": "speech"}[in.Mode]))
	}
	model := in.Model
	if model == "" {
		model = ts.o.Media.Generate[in.Mode].Model
	}
	if model == "" {
		model = map[string]string{"image": defaultImageModel, "audio": defaultSpeechModel}[in.Mode]
	}
	var inputs []part
	for _, p := range in.InputImages {
		pt, _, err := ts.load(p, kindImage)
		switch {
		case err != nil:
			return failure(op, fmt.Errorf("input_images: %w", err))
		case pt.mime != "image/png" && pt.mime != "image/jpeg":
			return failure(op, fmt.Errorf("input_images: %s is %s; use PNG or JPEG", p, pt.mime))
		case len(pt.data) > 4<<20:
			return failure(op, fmt.Errorf("input_images: %s is larger than 4 MiB", p))
		}
		inputs = append(inputs, pt)
	}
	if len(inputs) > 0 && imagesAPI(model) {
		return failure(op, fmt.Errorf("input_images go through the Responses API: give a Responses model such as model: gpt-5, not %s", model))
	}
	stamp := ts.o.Now().Format("20060102_150405")
	items := make([]map[string]any, len(prompts))
	workers := maxConcurrent
	if in.MaxConc > 0 {
		workers = min(in.MaxConc, maxConcurrent)
	}
	eachBounded(ctx, len(prompts), workers, func(i int) {
		p := prompts[i]
		name := stamp + "_" + cleanName(p)
		if len(prompts) > 1 {
			name = fmt.Sprintf("%s_%02d_%s", stamp, i, cleanName(p))
		}
		items[i] = ts.generateOne(ctx, b, model, in, p, name, inputs)
	}, func(i int, err error) {
		items[i] = map[string]any{"prompt": prompts[i], "success": false, "error": err.Error()}
	})
	if len(prompts) == 1 {
		it := items[0]
		if it["success"] != true {
			return failure(op, fmt.Errorf("%s", it["error"]))
		}
		delete(it, "success")
		delete(it, "prompt")
		it["mode"] = in.Mode
		return result(op, it)
	}
	return batchResult(op, items, map[string]any{"mode": in.Mode})
}

// checkGenerate refuses bad arguments before anything is sent.
func (ts *toolset) checkGenerate(in *generateArgs, modes []string) error {
	have := config.GenerationBackends[in.Mode]
	switch {
	case !slices.Contains(modes, in.Mode):
		return fmt.Errorf("mode %q is not offered here: use %s", clip(in.Mode, 20), strings.Join(modes, " or "))
	case in.Prompt != "" && len(in.Prompts) > 0:
		return fmt.Errorf("give prompt or prompts, not both")
	case in.Prompt == "" && len(in.Prompts) == 0:
		return fmt.Errorf(`give prompt, e.g. {"prompt": "a lighthouse at dawn", "mode": "%s"}`, in.Mode)
	case len(in.Prompts) > maxBatch:
		return fmt.Errorf("%d prompts; at most %d go in one call", len(in.Prompts), maxBatch)
	case in.BackendType != "" && in.BackendType != "auto" && !slices.Contains(have, config.MediaBackendName(in.BackendType)):
		return fmt.Errorf("backend_type %q: %s generation is built for %s only", clip(in.BackendType, 40), in.Mode, strings.Join(have, " and "))
	case in.Mode == "video" && len(in.Prompts) > maxVideoBatch:
		return fmt.Errorf("%d prompts; at most %d videos go in one call", len(in.Prompts), maxVideoBatch)
	case in.Duration < 0 || int(in.Duration) > maxVideoSeconds:
		return fmt.Errorf("duration %d is out of range: 1 to %d seconds (Sora takes 4, 8 or 12, Veo 4 to 8)", in.Duration, maxVideoSeconds)
	case len(in.Size) > maxVideoFieldText || len(in.AspectRatio) > maxVideoFieldText:
		return fmt.Errorf("size and aspect_ratio are short values such as 1280x720 and 16:9")
	case len(in.InputImages) > 0 && (in.Mode != "image" || len(in.Prompts) > 1):
		return fmt.Errorf("input_images are for one prompt in image mode")
	case len(in.InputImages) > maxImagesPerAsk:
		return fmt.Errorf("%d input_images; at most %d", len(in.InputImages), maxImagesPerAsk)
	case len(in.StoragePath) > maxStoragePath:
		return fmt.Errorf("storage_path is longer than %d bytes", maxStoragePath)
	case len(in.Model) > maxModelName:
		return fmt.Errorf("model is longer than %d bytes", maxModelName)
	case len(in.Instructions) > maxPrompt:
		return fmt.Errorf("instructions are longer than %d bytes", maxPrompt)
	case in.Mode == "audio" && in.Voice != "" && !slices.Contains(voices, in.Voice):
		return fmt.Errorf("voice %q is not one of OpenAI's: %s", clip(in.Voice, 40), strings.Join(voices, ", "))
	case in.Mode == "audio" && in.AudioFormat != "" && !slices.Contains(audioFormats, in.AudioFormat):
		return fmt.Errorf("audio_format %q: use %s", clip(in.AudioFormat, 20), strings.Join(audioFormats, ", "))
	case in.Speed != 0 && (in.Speed < 0.25 || in.Speed > 4):
		return fmt.Errorf("speed %g is out of range: 0.25 to 4", in.Speed)
	}
	for i, p := range append([]string{in.Prompt}, in.Prompts...) {
		limit := maxPrompt
		if in.Mode == "audio" {
			limit = maxSpeechInput
		}
		if len([]rune(p)) > limit {
			return fmt.Errorf("prompt %d is %d characters long; the limit is %d", i, len([]rune(p)), limit)
		}
		if i > 0 && strings.TrimSpace(p) == "" {
			return fmt.Errorf("prompts[%d] is empty", i-1)
		}
	}
	return nil
}

// generateOne makes one file and saves it.
func (ts *toolset) generateOne(ctx context.Context, b Backend, model string, in generateArgs, prompt, name string, inputs []part) map[string]any {
	fail := func(err error) map[string]any {
		return map[string]any{"prompt": prompt, "success": false, "error": err.Error()}
	}
	var data []byte
	var ext string
	meta := map[string]any{}
	var err error
	switch in.Mode {
	case "image":
		data, err = ts.makeImage(ctx, b, model, prompt, in, inputs)
		ext = "png"
		if err == nil {
			got := http.DetectContentType(data)
			if !strings.HasPrefix(got, "image/") {
				return fail(fmt.Errorf("openai (%s) sent data that is not an image (sniffed %s)", model, got))
			}
			ext = strings.TrimPrefix(got, "image/")
			if ext == "jpeg" {
				ext = "jpg"
			}
		}
		if len(inputs) > 0 {
			meta["input_images"] = in.InputImages
		}
	case "audio":
		ext = in.AudioFormat
		if ext == "" {
			ext = "mp3"
		}
		data, err = ts.makeSpeech(ctx, b, model, prompt, in, ext)
		meta["voice"], meta["format"], meta["text_length"] = cmpOr(in.Voice, "alloy"), ext, len([]rune(prompt))
	}
	if err != nil {
		return fail(err)
	}
	abs, err := ts.save(in.StoragePath, name, ext, data)
	if err != nil {
		return fail(err)
	}
	return map[string]any{"prompt": prompt, "success": true, "file_path": abs, "filename": path.Base(abs), "backend": "openai",
		"model": model, "file_size": len(data), "metadata": meta}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// save writes data under dir (in the workspace) as name.ext, or name_2.ext and so on when
// the name is taken.
func (ts *toolset) save(dir, name, ext string, data []byte) (string, error) {
	if dir == "" {
		dir = "."
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	var last error
	for n := 1; n <= 20; n++ {
		file := name + "." + ext
		if n > 1 {
			file = fmt.Sprintf("%s_%d.%s", name, n, ext)
		}
		abs, err := filetool.WriteNew(ts.o.Workspace, path.Join(dir, file), data)
		if err == nil {
			return abs, nil
		}
		if !strings.HasSuffix(err.Error(), "already exists") {
			return "", fmt.Errorf("cannot save the generated file: %w", err)
		}
		last = err
	}
	return "", fmt.Errorf("cannot save the generated file: %w", last)
}

// cleanName is the start of a prompt as a file name: letters, digits, - and _.
func cleanName(prompt string) string {
	var b strings.Builder
	for _, r := range prompt {
		if b.Len() >= maxFileNameText {
			break
		}
		switch {
		case unicode.IsLetter(r) && r < 128, unicode.IsDigit(r) && r < 128, r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('_')
		}
	}
	s := strings.Trim(b.String(), "_")
	if s == "" {
		return "media"
	}
	return s
}

// imagesAPI reports whether model is an image model (the Images API) rather than a Responses
// model that calls the image_generation tool.
func imagesAPI(model string) bool {
	for _, p := range []string{"gpt-image", "dall-e", "chatgpt-image"} {
		if strings.HasPrefix(model, p) {
			return true
		}
	}
	return false
}

func (ts *toolset) makeImage(ctx context.Context, b Backend, model, prompt string, in generateArgs, inputs []part) ([]byte, error) {
	var b64 string
	if imagesAPI(model) {
		p := openai.ImageGenerateParams{Prompt: prompt, Model: model, N: param.NewOpt[int64](1)}
		if in.Quality != "" {
			p.Quality = openai.ImageGenerateParamsQuality(in.Quality)
		}
		if in.Size != "" {
			p.Size = openai.ImageGenerateParamsSize(in.Size)
		}
		if strings.HasPrefix(model, "dall-e") {
			p.ResponseFormat = openai.ImageGenerateParamsResponseFormatB64JSON
		}
		svc := openai.NewImageService(ts.openaiOptions(b)...)
		resp, err := svc.Generate(ctx, p)
		if err != nil {
			return nil, ts.providerError(b, err)
		}
		billUnpriced(ctx) // images are billed per image and size, which the price list does not hold
		if len(resp.Data) == 0 || resp.Data[0].B64JSON == "" {
			return nil, fmt.Errorf("openai (%s) returned no image data", model)
		}
		b64 = resp.Data[0].B64JSON
	} else {
		content := responses.ResponseInputMessageContentListParam{{OfInputText: &responses.ResponseInputTextParam{Text: prompt}}}
		for _, p := range inputs {
			content = append(content, responses.ResponseInputContentUnionParam{OfInputImage: &responses.ResponseInputImageParam{
				Detail: responses.ResponseInputImageDetailAuto, ImageURL: param.NewOpt(dataURL(p.mime, p.data))}})
		}
		tool := responses.ToolImageGenerationParam{Quality: in.Quality, Size: in.Size}
		svc := responses.NewResponseService(ts.openaiOptions(b)...)
		resp, err := svc.New(ctx, responses.ResponseNewParams{Model: model,
			Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
				responses.ResponseInputItemParamOfMessage(content, responses.EasyInputMessageRoleUser)}},
			Tools: []responses.ToolUnionParam{{OfImageGeneration: &tool}}})
		if err != nil {
			return nil, ts.providerError(b, err)
		}
		billUnpriced(ctx)
		for _, o := range resp.Output {
			if o.Type == "image_generation_call" && o.Result != "" {
				b64 = o.Result
				break
			}
		}
		if b64 == "" {
			return nil, fmt.Errorf("openai (%s) returned no image_generation_call result", model)
		}
	}
	if len(b64) > maxGenerated*4/3+4 {
		return nil, fmt.Errorf("the generated image is larger than %d MiB", maxGenerated>>20)
	}
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("openai (%s) returned image data that is not base64: %v", model, err)
	}
	return data, nil
}

func (ts *toolset) makeSpeech(ctx context.Context, b Backend, model, prompt string, in generateArgs, format string) ([]byte, error) {
	p := openai.AudioSpeechNewParams{Input: prompt, Model: model,
		Voice:          openai.AudioSpeechNewParamsVoiceUnion{OfString: param.NewOpt(cmpOr(in.Voice, "alloy"))},
		ResponseFormat: openai.AudioSpeechNewParamsResponseFormat(format)}
	if in.Instructions != "" {
		p.Instructions = param.NewOpt(in.Instructions)
	}
	if in.Speed != 0 {
		p.Speed = param.NewOpt(in.Speed)
	}
	svc := openai.NewAudioSpeechService(ts.openaiOptions(b)...)
	resp, err := svc.New(ctx, p)
	if err != nil {
		return nil, ts.providerError(b, err)
	}
	billUnpriced(ctx) // speech is billed by the character or minute, not held in the price list
	defer resp.Body.Close()
	data, err := readAllCapped(resp.Body, maxGenerated)
	if err != nil {
		return nil, ts.providerError(b, err)
	}
	ct := resp.Header.Get("Content-Type")
	if len(data) == 0 || strings.HasPrefix(ct, "application/json") || strings.HasPrefix(ct, "text/") {
		return nil, fmt.Errorf("openai (%s) returned no audio (content type %q, %d bytes)", model, ct, len(data))
	}
	return data, nil
}
