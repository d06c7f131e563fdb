package media

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"massgen/internal/config"
	"massgen/internal/provider"
	"massgen/internal/tool"
)

// generateVideos is generate_media's mode video: one video per prompt, saved as MP4 in the
// workspace, its cost in the result and in tool.Result.Spent.
func (ts *toolset) generateVideos(ctx context.Context, in generateArgs, prompts []string) tool.Result {
	const op = "generate_media"
	b, model, err := ts.chooseVideo(in.BackendType, in.Model)
	if err != nil {
		return failure(op, err)
	}
	spec, err := videoShape(b.Name, videoSpec{model: model, seconds: int(in.Duration)}, in.Size, in.AspectRatio)
	if err != nil {
		return failure(op, err)
	}
	stamp := ts.o.Now().Format("20060102_150405")
	items := make([]map[string]any, len(prompts))
	spent := make([]provider.Usage, len(prompts))
	eachBounded(ctx, len(prompts), maxVideoBatch, func(i int) {
		name := stamp + "_" + cleanName(prompts[i])
		if len(prompts) > 1 {
			name = fmt.Sprintf("%s_%02d_%s", stamp, i, cleanName(prompts[i]))
		}
		v := spec
		v.prompt = prompts[i]
		var it map[string]any
		it, spent[i] = ts.videoItem(ctx, b, v, in.StoragePath, name)
		items[i] = it
	}, func(i int, err error) {
		items[i] = map[string]any{"prompt": prompts[i], "success": false, "error": err.Error()}
	})
	var total provider.Usage
	for _, u := range spent {
		total = total.Add(u)
	}
	var res tool.Result
	if len(prompts) == 1 {
		it := items[0]
		if it["success"] != true {
			res = failure(op, fmt.Errorf("%s", it["error"]))
		} else {
			delete(it, "success")
			delete(it, "prompt")
			it["mode"] = "video"
			res = result(op, it)
		}
	} else {
		res = batchResult(op, items, map[string]any{"mode": "video"})
	}
	res.Spent = total
	return res
}

// videoItem makes and saves one video: generate_media's result for it, and what it cost.
func (ts *toolset) videoItem(ctx context.Context, b Backend, v videoSpec, dir, name string) (map[string]any, provider.Usage) {
	made, spent, err := ts.makeVideo(ctx, b, v)
	if err != nil {
		return map[string]any{"prompt": v.prompt, "success": false, "error": err.Error()}, spent
	}
	abs, err := ts.save(dir, name, "mp4", made.data)
	if err != nil {
		return map[string]any{"prompt": v.prompt, "success": false, "error": err.Error()}, spent
	}
	meta := map[string]any{"seconds": made.seconds, "job": made.id}
	if made.size != "" {
		meta["size"] = made.size
	}
	costFields(meta, v.model, spent)
	return map[string]any{"prompt": v.prompt, "success": true, "file_path": abs, "filename": path.Base(abs), "backend": b.Name,
		"model": v.model, "file_size": len(made.data), "metadata": meta}, spent
}

// costFields tells the model what a video cost, or that its price is unknown.
func costFields(m map[string]any, model string, spent provider.Usage) {
	if spent.Unknown {
		m["cost"] = "unknown: no list price for " + model
		return
	}
	m["cost_usd"] = math.Round(spent.CostUSD*1e4) / 1e4
}

// chooseVideo picks the provider and model for a video: the call's backend_type, else the
// family of the call's model (sora: OpenAI, veo: Gemini), else video_generation_backend (or
// its model's family), else the agent's own provider, else the first of Gemini and OpenAI
// with a key. The model is the call's, else video_generation_model when it suits the provider,
// else the provider's default.
func (ts *toolset) chooseVideo(wantBackend, wantModel string) (Backend, string, error) {
	conf := ts.o.Media.Generate["video"]
	name := ""
	switch {
	case wantBackend != "" && wantBackend != "auto":
		name = config.MediaBackendName(wantBackend)
	case videoFamily(wantModel) != "":
		name = videoFamily(wantModel)
	case conf.Backend != "":
		name = conf.Backend
	case videoFamily(conf.Model) != "":
		name = videoFamily(conf.Model)
	}
	order := []string{name}
	if name == "" {
		order = []string{"gemini", "openai"}
		if own := config.MediaBackendName(ts.o.Own); slices.Contains(config.GenerationBackends["video"], own) {
			order = append([]string{own}, order...)
		}
	}
	for _, n := range order {
		b, ok := ts.o.Backends[n]
		if !ok {
			continue
		}
		model := wantModel
		if model == "" && conf.Model != "" && (conf.Backend == "" || conf.Backend == n) && slices.Contains([]string{"", n}, videoFamily(conf.Model)) {
			model = conf.Model
		}
		if model == "" {
			model = map[string]string{"openai": defaultSoraModel, "gemini": defaultVeoModel}[n]
		}
		if f := videoFamily(model); f != "" && f != n {
			return Backend{}, "", fmt.Errorf("%s is a %s model; %s makes videos with %s", clip(model, 60), f, n,
				map[string]string{"openai": "sora-2 or sora-2-pro", "gemini": "veo models such as " + defaultVeoModel}[n])
		}
		return b, model, nil
	}
	if name != "" {
		return Backend{}, "", fmt.Errorf("videos through %s need a key: set %s", name, keyVars[name])
	}
	return Backend{}, "", fmt.Errorf("no provider for videos: set %s (Veo) or %s (Sora)", keyVars["gemini"], keyVars["openai"])
}

// videoShape puts the size the model asked for in the provider's terms: OpenAI takes a size
// (WxH), Gemini an aspect ratio and a resolution.
func videoShape(provider string, v videoSpec, size, aspect string) (videoSpec, error) {
	switch provider {
	case "openai":
		v.size = size
		if v.size == "" {
			v.size = map[string]string{"16:9": "1280x720", "9:16": "720x1280"}[aspect]
		}
		if v.size == "" && aspect != "" {
			return v, fmt.Errorf("aspect_ratio %q: OpenAI makes 16:9 or 9:16 videos (or give size: 1280x720, 720x1280, 1792x1024, 1024x1792)", clip(aspect, 20))
		}
	case "gemini":
		v.aspect = aspect
		if size != "" {
			w, h, ok := parseSize(size)
			if !ok {
				return v, fmt.Errorf("size %q: give WIDTHxHEIGHT such as 1280x720, or aspect_ratio (16:9 or 9:16) for Veo", clip(size, 20))
			}
			if v.aspect == "" {
				v.aspect = map[bool]string{true: "16:9", false: "9:16"}[w >= h]
			}
			v.resolution = map[bool]string{true: "1080p", false: "720p"}[min(w, h) >= 1080]
		}
	}
	return v, nil
}

// seconds is a whole number of seconds, as a number or a string of one: MassGen's
// text_to_video_generation passes seconds on as a string, and models copy that.
type seconds int

func (n *seconds) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		*n = 0
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v != math.Trunc(v) || math.Abs(v) > 1e6 {
		return fmt.Errorf("%s is not a whole number of seconds", clip(string(b), 20))
	}
	*n = seconds(v)
	return nil
}

func parseSize(s string) (w, h int, ok bool) {
	a, b, found := strings.Cut(strings.ToLower(s), "x")
	w, err1 := strconv.Atoi(a)
	h, err2 := strconv.Atoi(b)
	return w, h, found && err1 == nil && err2 == nil && w > 0 && h > 0
}

// textToVideoTool is MassGen v0.1.12's text_to_video_generation: a prompt, a model (OpenAI's
// sora-2 by default; a veo model goes to Gemini) and a length, saved in the workspace.
func (ts *toolset) textToVideoTool() tool.Tool {
	return tool.Tool{Spec: spec("text_to_video_generation",
		"Generate a video from a text prompt and save it (MP4) in your workspace. OpenAI's Sora by default (sora-2 or sora-2-pro, "+
			"needs OPENAI_API_KEY); a Veo model (e.g. "+defaultVeoModel+") goes to Gemini (GEMINI_API_KEY). It takes minutes and "+
			"costs per second of video. The result names the saved file.",
		schema(map[string]any{
			"prompt":       str("What the video shows: subject, action, setting, camera, style."),
			"model":        str("The model (default sora-2)."),
			"seconds":      map[string]any{"type": "integer", "description": "Length in seconds (default 4; Sora takes 4, 8 or 12, Veo 4 to 8)."},
			"storage_path": str("Folder in your workspace to save into, not a file name (default: the workspace itself)."),
		}, "prompt")), Run: ts.textToVideo}
}

func (ts *toolset) textToVideo(ctx context.Context, args string) tool.Result {
	const op = "generate_and_store_video_no_input_images"
	var in struct {
		Prompt      string   `json:"prompt"`
		Model       string   `json:"model"`
		Seconds     *seconds `json:"seconds"`
		StoragePath string   `json:"storage_path"`
	}
	if err := decode("text_to_video_generation", args, &in, `{"prompt": "a lighthouse at dawn, slow push-in", "seconds": 4}`); err != nil {
		return failure(op, err)
	}
	length := 4
	if in.Seconds != nil {
		length = int(*in.Seconds)
	}
	switch {
	case strings.TrimSpace(in.Prompt) == "":
		return failure(op, fmt.Errorf(`give prompt, e.g. {"prompt": "a lighthouse at dawn, slow push-in"}`))
	case length < 1 || length > maxVideoSeconds:
		return failure(op, fmt.Errorf("seconds %d is out of range: 1 to %d (Sora takes 4, 8 or 12)", length, maxVideoSeconds))
	}
	if err := errors.Join(checkText("prompt", in.Prompt, maxPrompt), checkText("model", in.Model, maxModelName),
		checkText("storage_path", in.StoragePath, maxStoragePath)); err != nil {
		return failure(op, err)
	}
	model := cmpOr(in.Model, defaultSoraModel)
	name := cmpOr(videoFamily(model), "openai")
	b, ok := ts.o.Backends[name]
	if !ok {
		if name == "openai" {
			return failure(op, fmt.Errorf("text_to_video_generation makes videos with OpenAI's Sora: set OPENAI_API_KEY, or give a Veo model "+
				"(model: %s) with %s", defaultVeoModel, keyVars["gemini"]))
		}
		return failure(op, fmt.Errorf("%s is a Veo model, made by Gemini: set %s", clip(model, 60), keyVars["gemini"]))
	}
	start := time.Now()
	made, spent, err := ts.makeVideo(ctx, b, videoSpec{prompt: in.Prompt, model: model, seconds: length})
	if err != nil {
		res := failure(op, err)
		res.Spent = spent
		return res
	}
	abs, err := ts.save(in.StoragePath, ts.o.Now().Format("20060102_150405")+"_"+cleanName(in.Prompt), "mp4", made.data)
	if err != nil {
		res := failure(op, err)
		res.Spent = spent
		return res
	}
	out := map[string]any{"video_path": abs, "filename": path.Base(abs), "size": len(made.data), "model": model, "prompt": in.Prompt,
		"duration": math.Round(time.Since(start).Seconds()*10) / 10, "backend": b.Name, "video_seconds": made.seconds}
	costFields(out, model, spent)
	res := result(op, out)
	res.Spent = spent
	return res
}
