package media

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"massgen/internal/tool"
)

func (ts *toolset) understandVideoTool() tool.Tool {
	return tool.Tool{Spec: spec("understand_video",
		"Analyze a video (mp4, mov, avi, mkv, webm; at most 20 MiB) from your workspace or a context path. Gemini takes the video whole, "+
			"sound included; OpenAI and Claude get num_frames still frames evenly spaced over it (taken with ffmpeg), without the sound. "+
			"The provider is backend_type's, else your configuration's, else your own, else the first with a key of Gemini "+
			"(GEMINI_API_KEY or GOOGLE_API_KEY), OpenAI and Claude.",
		schema(map[string]any{
			"video_path": str("The video."),
			"prompt":     str("The question about the video (default: describe it)."),
			"num_frames": map[string]any{"type": "integer", "minimum": 1, "maximum": maxNumFrames,
				"description": fmt.Sprintf("Still frames sent to OpenAI or Claude, evenly spaced over the video (default %d, 1 to %d; a video with "+
					"fewer frames gives them all). Gemini takes the whole video instead.", defaultNumFrames, maxNumFrames)},
			"model": str("The model (default: your own when your provider is chosen, else " + defaultModels["gemini"][kindVideo] + ", " +
				defaultModels["openai"][kindVideo] + " or " + defaultModels["claude"][kindVideo] + ")."),
			"backend_type": str("Preferred provider: gemini (the whole video), openai or claude (frames)."),
		}, "video_path")), Run: func(ctx context.Context, args string) tool.Result {
		var in struct {
			VideoPath   string `json:"video_path"`
			Prompt      string `json:"prompt"`
			NumFrames   *int   `json:"num_frames"`
			Model       string `json:"model"`
			BackendType string `json:"backend_type"`
		}
		const op = "understand_video"
		if err := decode(op, args, &in, `{"video_path": "demo.mp4"}`); err != nil {
			return failure(op, err)
		}
		out, err := ts.understandVideo(ctx, in.VideoPath, in.Prompt, in.Model, in.BackendType, in.NumFrames)
		if err != nil {
			return failure(op, err)
		}
		return result(op, out)
	}}
}

// understandVideo is understand_video, shared with read_media: the video goes whole to
// Gemini, or as frames to the providers that take images only.
func (ts *toolset) understandVideo(ctx context.Context, path, prompt, model, backend string, nFrames *int) (map[string]any, error) {
	if err := errors.Join(checkText("prompt", prompt, maxPrompt), checkText("model", model, maxModelName)); err != nil {
		return nil, err
	}
	if conf := ts.o.Media.Understand[kindVideo].NumFrames; nFrames == nil && conf > 0 {
		nFrames = &conf // multimodal_config.video.num_frames, when the call names none
	}
	n, err := numFrames(nFrames)
	if err != nil {
		return nil, err
	}
	if prompt == "" {
		prompt = promptVideo
	}
	p, abs, err := ts.load(path, kindVideo)
	if err != nil {
		return nil, err
	}
	b, m, err := ts.choose(kindVideo, backend, model)
	if err != nil {
		return nil, err
	}
	if b.Name != "gemini" {
		if b, m, err = ts.withoutFFmpeg(b, m, backend, model); err != nil {
			return nil, err
		}
	}
	out := map[string]any{"video_path": abs, "prompt": prompt, "frames_extracted": 0, "frame_extraction_performed": false,
		"frame_extraction_reason": "native_backend"}
	var text string
	if b.Name == "gemini" {
		text, err = ts.ask(ctx, b, m, prompt, []part{p})
	} else {
		var frames []frame
		var info videoInfo
		if frames, info, err = ts.extractFrames(ctx, p, n); err != nil {
			return nil, err
		}
		parts := make([]part, len(frames))
		at := make([]float64, len(frames))
		for i, f := range frames {
			parts[i] = part{kind: kindImage, mime: "image/jpeg", name: fmt.Sprintf("frame-%02d.jpg", i+1), data: f.jpeg}
			at[i] = math.Round(f.at*100) / 100
		}
		text, err = ts.ask(ctx, b, m, framesPrompt(p.name, info.duration, at, prompt), parts)
		out["frames_extracted"], out["frame_extraction_performed"], out["frame_extraction_reason"] = len(frames), true, "frame_sampling"
		out["extraction_mode"], out["frame_timestamps"], out["video_duration"] = "uniform", at, math.Round(info.duration*100)/100
	}
	if err != nil {
		return nil, err
	}
	out["model"], out["backend"], out["response"] = m, b.Name, text
	return out, nil
}

// withoutFFmpeg keeps provider b when ffmpeg is there to take frames for it. Without ffmpeg,
// a provider nobody asked for gives way to Gemini, which takes the video whole, as before
// frames were taken; otherwise the error says how to get ffmpeg.
func (ts *toolset) withoutFFmpeg(b Backend, m, wantBackend, wantModel string) (Backend, string, error) {
	_, _, err := ts.frameTools()
	if err == nil {
		return b, m, nil
	}
	conf := ts.o.Media.Understand[kindVideo]
	_, haveGemini := ts.o.Backends["gemini"]
	asked := (wantBackend != "" && wantBackend != "auto") || wantModel != "" || conf.Backend != "" || conf.Model != ""
	if haveGemini && !asked {
		return ts.choose(kindVideo, "gemini", "")
	}
	alt := ", or set GEMINI_API_KEY (or GOOGLE_API_KEY): Gemini takes the video whole, without ffmpeg"
	if haveGemini {
		alt = `, or pass backend_type "gemini": Gemini takes the video whole, without ffmpeg`
	}
	return b, m, fmt.Errorf("%s takes a video as still frames, and taking them needs ffmpeg and ffprobe: %v. Install ffmpeg "+
		"(Debian or Ubuntu: apt-get install ffmpeg; macOS: brew install ffmpeg)%s", b.Name, err, alt)
}

// framesPrompt tells the model what the images are, then asks the question.
func framesPrompt(name string, duration float64, at []float64, prompt string) string {
	times := make([]string, len(at))
	for i, t := range at {
		times[i] = fmt.Sprintf("%.2f s", t)
	}
	what := fmt.Sprintf("The %d images are frames of one video, %s (%.2f s long), in time order, taken at %s.", len(at), name, duration,
		strings.Join(times, ", "))
	if len(at) == 1 {
		what = fmt.Sprintf("The image is a frame of a video, %s (%.2f s long), taken at %s.", name, duration, times[0])
	}
	return what + " The video's sound is not included.\n\n" + prompt
}
