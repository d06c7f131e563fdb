package media

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"massgen/internal/childproc/proctest"
	"massgen/internal/config"
)

// needFFmpeg skips a test without ffmpeg, except in CI, which installs it.
func needFFmpeg(t *testing.T) {
	t.Helper()
	for _, b := range []string{"ffmpeg", "ffprobe"} {
		if _, err := exec.LookPath(b); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is missing: .ci/run installs ffmpeg", b)
			}
			t.Skipf("%s is not installed: apt-get install ffmpeg", b)
		}
	}
}

// makeVideo writes a video made by ffmpeg (args between the lavfi source and the output) to
// name in the agent's workspace.
func makeVideo(t *testing.T, s setup, name, src string, args ...string) []byte {
	t.Helper()
	p := filepath.Join(s.ts.o.Workspace.Dir(), name)
	cmd := exec.Command("ffmpeg", append(append([]string{"-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", src}, args...), p)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, out)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// clip4 is a 4 s video of 40 frames whose brightness grows with time, so that frames show
// their order; made once per test, copied into each workspace.
func clip4(t *testing.T) func(*testing.T, setup) []byte {
	t.Helper()
	var data []byte
	return func(t *testing.T, s setup) []byte {
		t.Helper()
		if data == nil {
			data = makeVideo(t, s, "clip4.mp4", ramp("64x48", 10, 4), mpeg4...)
			return data
		}
		if err := os.WriteFile(filepath.Join(s.ts.o.Workspace.Dir(), "clip4.mp4"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		return data
	}
}

// ramp is a lavfi source whose luma is 50 per second.
func ramp(size string, rate int, seconds float64) string {
	return fmt.Sprintf("color=c=black:s=%s:r=%d:d=%g,geq=lum='16+T*50':cb=128:cr=128", size, rate, seconds)
}

var mpeg4 = []string{"-c:v", "mpeg4", "-q:v", "2", "-pix_fmt", "yuv420p"}

// sentImages are the images of the last request f received, with its text, in the order
// sent, for OpenAI's Responses and Claude's Messages.
func sentImages(t *testing.T, f *fakeProviders) (imgs []image.Image, text string) {
	t.Helper()
	var req struct {
		Input []struct {
			Content []struct {
				Type, Text string
				ImageURL   string `json:"image_url"`
			}
		}
		Messages []struct {
			Content []struct {
				Type, Text string
				Source     struct{ MediaType, Data string } `json:"source"`
			}
		}
	}
	if err := json.Unmarshal(f.last().Body, &req); err != nil {
		t.Fatal(err)
	}
	var b64 []string
	for _, in := range req.Input {
		for _, c := range in.Content {
			switch c.Type {
			case "input_text":
				text += c.Text
			case "input_image":
				d, ok := strings.CutPrefix(c.ImageURL, "data:image/jpeg;base64,")
				if !ok {
					t.Fatalf("not a JPEG data URL: %.60s", c.ImageURL)
				}
				b64 = append(b64, d)
			}
		}
	}
	for _, m := range req.Messages {
		for _, c := range m.Content {
			switch c.Type {
			case "text":
				text += c.Text
			case "image":
				b64 = append(b64, c.Source.Data)
			}
		}
	}
	for _, d := range b64 {
		raw, err := base64.StdEncoding.DecodeString(d)
		if err != nil {
			t.Fatal(err)
		}
		img, err := jpeg.Decode(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("a frame is not a JPEG: %v", err)
		}
		imgs = append(imgs, img)
	}
	return imgs, text
}

func meanLuma(img image.Image) float64 {
	y, ok := img.(*image.YCbCr)
	if !ok {
		return -1
	}
	sum := 0
	for _, v := range y.Y {
		sum += int(v)
	}
	return float64(sum) / float64(len(y.Y))
}

// TestUnderstandVideo_Frames: OpenAI and Claude receive exactly num_frames JPEG frames of the
// video (all of them when it has fewer), evenly spaced and in time order, with the question
// and a note of what they are; Gemini still receives the whole video.
func TestUnderstandVideo_Frames(t *testing.T) {
	needFFmpeg(t)
	four := clip4(t)
	for _, tc := range []struct {
		name       string
		providers  []string
		own        string
		video      func(*testing.T, setup) []byte
		file       string
		args       map[string]any
		read       bool // through read_media
		wantFrames int
		wantTimes  []float64
		wantMaxDim int
		slow       bool // skipped with -short: the test takes over 5 s with them
		confFrames int  // multimodal_config.video.num_frames
	}{
		{name: "multimodal_config's num_frames when the call names none", providers: []string{"openai"}, video: four, file: "clip4.mp4",
			confFrames: 3, wantFrames: 3},
		{name: "the call's num_frames over multimodal_config's", providers: []string{"claude"}, video: four, file: "clip4.mp4",
			confFrames: 3, args: map[string]any{"num_frames": 2}, wantFrames: 2},
		{name: "openai, default 8", providers: []string{"openai"}, video: four, file: "clip4.mp4", wantFrames: 8,
			wantTimes: []float64{0.2, 0.7, 1.2, 1.7, 2.2, 2.7, 3.2, 3.7}},
		{name: "claude, 3 frames", providers: []string{"claude"}, video: four, file: "clip4.mp4", args: map[string]any{"num_frames": 3},
			wantFrames: 3, wantTimes: []float64{0.6, 2, 3.3}},
		{name: "openai, 1 frame", providers: []string{"openai"}, video: four, file: "clip4.mp4", args: map[string]any{"num_frames": 1},
			wantFrames: 1, wantTimes: []float64{2}},
		{name: "claude, 32 frames", providers: []string{"claude"}, video: four, file: "clip4.mp4", args: map[string]any{"num_frames": 32}, wantFrames: 32,
			slow: true},
		{name: "openai chosen over claude; backend_type picks claude", providers: []string{"openai", "claude"}, video: four, file: "clip4.mp4",
			args: map[string]any{"backend_type": "claude", "num_frames": 2}, wantFrames: 2},
		{name: "fewer frames than asked: all of them", providers: []string{"openai"}, file: "short.mp4", args: map[string]any{"num_frames": 12},
			video:      func(t *testing.T, s setup) []byte { return makeVideo(t, s, "short.mp4", ramp("64x48", 5, 1), mpeg4...) },
			wantFrames: 5, wantTimes: []float64{0, 0.2, 0.4, 0.6, 0.8}, slow: true},
		{name: "a live recording without a duration", providers: []string{"claude"}, file: "live.mkv", args: map[string]any{"num_frames": 4},
			video: func(t *testing.T, s setup) []byte {
				t.Helper()
				cmd := exec.Command("ffmpeg", append(append([]string{"-nostdin", "-loglevel", "error", "-f", "lavfi", "-i", ramp("64x48", 10, 2)}, mpeg4...),
					"-f", "matroska", "pipe:1")...)
				out, err := cmd.Output()
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(s.ts.o.Workspace.Dir(), "live.mkv"), out, 0o644); err != nil {
					t.Fatal(err)
				}
				return out
			}, wantFrames: 4, wantTimes: []float64{0.2, 0.7, 1.2, 1.7}},
		{name: "large frames are scaled to 2000x768", providers: []string{"openai"}, file: "wide.webm", args: map[string]any{"num_frames": 2},
			video: func(t *testing.T, s setup) []byte {
				return makeVideo(t, s, "wide.webm", ramp("2400x600", 2, 1), "-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8")
			}, wantFrames: 2, wantMaxDim: 2000, slow: true},
		{name: "read_media sends 8 frames", providers: []string{"openai"}, video: four, file: "clip4.mp4", read: true, wantFrames: 8},
		{name: "gemini takes the video whole", providers: []string{"gemini", "openai", "claude"}, own: "openai", video: four, file: "clip4.mp4",
			args: map[string]any{"backend_type": "gemini", "num_frames": 4}},
		{name: "gemini first without an own provider", providers: []string{"openai", "gemini"}, video: four, file: "clip4.mp4", read: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.slow && testing.Short() {
				t.Skip("slow: runs without -short")
			}
			own := tc.own
			if own == "" {
				own = "scripted"
			}
			m := allOn
			if tc.confFrames > 0 {
				m.Understand = map[string]config.MediaChoice{"video": {NumFrames: tc.confFrames}}
			}
			s := newSetup(t, own, "", m, tc.providers...)
			data := tc.video(t, s)
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			args := map[string]any{"video_path": tc.file, "prompt": "Does it get brighter?"}
			for k, v := range tc.args {
				args[k] = v
			}
			tl := s.ts.understandVideoTool()
			if tc.read {
				tl, args = s.ts.readMediaTool(), map[string]any{"file_path": tc.file, "prompt": "Does it get brighter?"}
			}
			res, out := run(t, tl, args)
			if res.IsError {
				t.Fatalf("error: %s", res.Content)
			}
			if s.f.count() != 1 {
				t.Fatalf("%d provider calls, want 1", s.f.count())
			}
			requireEmpty(t, tmp)
			if tc.wantFrames == 0 {
				c := s.f.last()
				want := `"inlineData":{"data":"` + base64.StdEncoding.EncodeToString(data) + `","mimeType":"video/mp4"}`
				if !strings.Contains(c.Path, ":generateContent") || !strings.Contains(string(c.Body), want) || strings.Contains(string(c.Body), "image/jpeg") {
					t.Fatalf("Gemini did not get the whole video: %s %.300s", c.Path, c.Body)
				}
				if out["backend"] != "gemini" || out["frame_extraction_performed"] != false || out["frames_extracted"] != 0.0 {
					t.Errorf("result: %s", res.Content)
				}
				return
			}
			imgs, text := sentImages(t, s.f)
			if len(imgs) != tc.wantFrames || out["frames_extracted"] != float64(tc.wantFrames) || out["frame_extraction_performed"] != true {
				t.Fatalf("%d frames sent, want %d; result %s", len(imgs), tc.wantFrames, res.Content)
			}
			if !strings.Contains(text, "Does it get brighter?") || !strings.Contains(text, fmt.Sprintf("of one video, %s", tc.file)) && tc.wantFrames > 1 {
				t.Errorf("the prompt: %q", text)
			}
			for i := 1; i < len(imgs); i++ {
				if a, b := meanLuma(imgs[i-1]), meanLuma(imgs[i]); !(b > a+2) {
					t.Errorf("frame %d (luma %.1f) is not after frame %d (luma %.1f): not in time order", i+1, b, i, a)
				}
			}
			var times []float64
			for _, v := range out["frame_timestamps"].([]any) {
				times = append(times, v.(float64))
			}
			if tc.wantTimes != nil {
				for i, w := range tc.wantTimes {
					if len(times) != len(tc.wantTimes) || math.Abs(times[i]-w) > 0.051 {
						t.Fatalf("timestamps %v, want %v", times, tc.wantTimes)
					}
				}
				for i, w := range times {
					if !strings.Contains(text, fmt.Sprintf("%.2f s", w)) {
						t.Errorf("the prompt does not give frame %d's time %.2f: %q", i+1, w, text)
					}
				}
			}
			for _, img := range imgs {
				if b := img.Bounds(); tc.wantMaxDim > 0 && (max(b.Dx(), b.Dy()) > tc.wantMaxDim || min(b.Dx(), b.Dy()) > 768) {
					t.Errorf("a frame is %dx%d", b.Dx(), b.Dy())
				}
			}
		})
	}
}

// TestUnderstandVideo_FrameErrors: a video the frames cannot come from, a bad num_frames and a
// missing ffmpeg are clear errors, and nothing is sent.
func TestUnderstandVideo_FrameErrors(t *testing.T) {
	needFFmpeg(t)
	noFFmpeg := func(t *testing.T, s setup) { s.ts.o.FFmpeg = filepath.Join(t.TempDir(), "ffmpeg") }
	for _, tc := range []struct {
		name      string
		providers []string
		prepare   func(*testing.T, setup)
		args      map[string]any
		want      []string
		wantOK    string // the backend, for a call that succeeds
	}{
		{name: "corrupt video", args: map[string]any{"video_path": "clip.mp4"},
			want: []string{"ffprobe could not read clip.mp4 as a video (exit status 1): moov atom not found; clip.mp4: Invalid data"}},
		{name: "another format than its extension says", prepare: func(t *testing.T, s setup) {
			makeVideo(t, s, "real.mp4", ramp("64x48", 10, 1), mpeg4...)
			if err := os.Rename(filepath.Join(s.ts.o.Workspace.Dir(), "real.mp4"), filepath.Join(s.ts.o.Workspace.Dir(), "named.mkv")); err != nil {
				t.Fatal(err)
			}
		}, args: map[string]any{"video_path": "named.mkv"}, want: []string{"ffprobe could not read named.mkv as a video", "(is its extension, .mkv, right?)"}},
		{name: "sound only", prepare: func(t *testing.T, s setup) {
			makeVideo(t, s, "sound.mp4", "sine=frequency=440:duration=1", "-c:a", "aac")
		}, args: map[string]any{"video_path": "sound.mp4"}, want: []string{"sound.mp4 has no video stream", "understand_audio"}},
		{name: "zero frames", args: map[string]any{"video_path": "clip.mp4", "num_frames": 0}, want: []string{"num_frames 0 is out of range: use 1 to 32 (default 8)"}},
		{name: "too many frames", args: map[string]any{"video_path": "clip.mp4", "num_frames": 33}, want: []string{"num_frames 33 is out of range"}},
		{name: "frames not a number", args: map[string]any{"video_path": "clip.mp4", "num_frames": "many"}, want: []string{"invalid arguments for understand_video"}},
		{name: "too large", prepare: func(t *testing.T, s setup) {
			if err := os.Truncate(filepath.Join(s.ts.o.Workspace.Dir(), "clip.mp4"), 21<<20); err != nil {
				t.Fatal(err)
			}
		}, args: map[string]any{"video_path": "clip.mp4"}, want: []string{"the limit is 20.0 MiB"}},
		{name: "no ffmpeg", prepare: noFFmpeg, args: map[string]any{"video_path": "clip.mp4"},
			want: []string{"openai takes a video as still frames, and taking them needs ffmpeg and ffprobe: ffmpeg was not found",
				"apt-get install ffmpeg", "or set GEMINI_API_KEY (or GOOGLE_API_KEY): Gemini takes the video whole"}},
		{name: "no ffprobe, claude asked for", providers: []string{"claude", "gemini"},
			prepare: func(t *testing.T, s setup) { s.ts.o.FFprobe = filepath.Join(t.TempDir(), "ffprobe") },
			args:    map[string]any{"video_path": "clip.mp4", "backend_type": "claude"},
			want:    []string{"claude takes a video as still frames", "ffprobe was not found", `or pass backend_type "gemini"`}},
		{name: "no ffmpeg: the default goes to Gemini", providers: []string{"openai", "gemini"}, prepare: noFFmpeg,
			args: map[string]any{"video_path": "clip.mp4"}, wantOK: "gemini"},
		{name: "no provider", providers: []string{}, args: map[string]any{"video_path": "clip.mp4"},
			want: []string{"no provider for video: set GEMINI_API_KEY (or GOOGLE_API_KEY) or OPENAI_API_KEY or ANTHROPIC_API_KEY"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			providers := tc.providers
			if providers == nil {
				providers = []string{"openai"}
			}
			// The agent's own provider is OpenAI: it is chosen for video when it has a key.
			s := newSetup(t, "openai", "gpt-5-mini", allOn, providers...)
			if tc.prepare != nil {
				tc.prepare(t, s)
			}
			res, out := run(t, s.ts.understandVideoTool(), tc.args)
			if tc.wantOK != "" {
				if res.IsError || out["backend"] != tc.wantOK || s.f.count() != 1 {
					t.Fatalf("want a call to %s: %s", tc.wantOK, res.Content)
				}
				return
			}
			msg, _ := out["error"].(string)
			for _, w := range tc.want {
				if !res.IsError || !strings.Contains(msg, w) {
					t.Errorf("got %s\nwant an error containing %q", res.Content, w)
				}
			}
			if n := s.f.count(); n != 0 {
				t.Errorf("%d provider calls, want none", n)
			}
		})
	}
}

// TestUnderstandVideo_CancelledMidExtraction: a call cancelled while ffmpeg runs, or running
// out of time, ends at once with an error, and leaves no process and no file behind.
func TestUnderstandVideo_CancelledMidExtraction(t *testing.T) {
	needFFmpeg(t)
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	ffmpeg, _ := exec.LookPath("ffmpeg")
	video := clip4(t)
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		want    string
	}{
		{name: "cancelled", want: "taking frames of clip4.mp4 was cut off: context canceled"},
		{name: "out of time", timeout: 500 * time.Millisecond, want: "taking frames of clip4.mp4 was cut off: it took more than 500ms: ask for fewer num_frames"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSetup(t, "openai", "", allOn, "openai")
			video(t, s)
			marker := proctest.Marker()
			// An ffmpeg that first hangs, in a child of its own, as a slow decode would.
			slow := filepath.Join(t.TempDir(), "ffmpeg")
			script := fmt.Sprintf("#!/bin/sh\n%s %s\nexec %s \"$@\"\n", sleep, marker, ffmpeg)
			if err := os.WriteFile(slow, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			s.ts.o.FFmpeg = slow
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tc.timeout > 0 {
				defer func(d time.Duration) { frameTimeout = d }(frameTimeout)
				frameTimeout = tc.timeout
			} else {
				watched := make(chan struct{})
				go func() {
					defer close(watched)
					proctest.Eventually(10*time.Second, func() bool { return ctx.Err() != nil || len(proctest.WithMarker(marker)) > 0 })
					cancel()
				}()
				defer func() { <-watched }()
			}
			start := time.Now()
			res := s.ts.understandVideoTool().Run(ctx, `{"video_path": "clip4.mp4"}`)
			if !res.IsError || !strings.Contains(res.Content, tc.want) {
				t.Errorf("got %s\nwant an error containing %q", res.Content, tc.want)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("the call took %v", d)
			}
			proctest.RequireNone(t, marker, 5*time.Second)
			if s.f.count() != 0 {
				t.Error("a provider was called")
			}
			requireEmpty(t, tmp)
		})
	}
}

// requireEmpty fails unless dir is empty: the video's private copy is gone.
func requireEmpty(t *testing.T, dir string) {
	t.Helper()
	if left, _ := os.ReadDir(dir); len(left) > 0 {
		t.Errorf("left in the temporary folder: %v", left)
	}
}

// TestFrameTimes: frames are evenly spaced, distinct, within the video, and no more than it
// has, whatever ffprobe said of it.
func TestFrameTimes(t *testing.T) {
	for _, tc := range []struct {
		name string
		info videoInfo
		n    int
		want []float64
	}{
		{name: "frame rate known", info: videoInfo{duration: 4, fps: 10, frames: 40}, n: 4, want: []float64{0.5, 1.5, 2.5, 3.5}},
		{name: "frame rate known: frames' own times", info: videoInfo{duration: 4, fps: 10, frames: 40}, n: 3, want: []float64{0.6, 2, 3.3}},
		{name: "frame rate unknown: span middles", info: videoInfo{duration: 4}, n: 4, want: []float64{0.5, 1.5, 2.5, 3.5}},
		{name: "fewer frames than asked", info: videoInfo{duration: 0.3, fps: 10, frames: 3}, n: 8, want: []float64{0, 0.1, 0.2}},
		{name: "a count without a rate", info: videoInfo{duration: 2, frames: 2}, n: 8, want: []float64{0.5, 1.5}},
		{name: "one frame, shorter than a frame", info: videoInfo{duration: 0.01, fps: 25}, n: 3, want: []float64{0}},
		{name: "absurd rate", info: videoInfo{duration: 1e12, fps: 1e12}, n: 2, want: []float64{2.5e11, 7.5e11}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := frameTimes(tc.info, tc.n)
			if len(got) != len(tc.want) {
				t.Fatalf("%v, want %v", got, tc.want)
			}
			for i := range got {
				if math.Abs(got[i]-tc.want[i]) > 1e-6*math.Max(1, tc.want[i]) {
					t.Fatalf("%v, want %v", got, tc.want)
				}
			}
		})
	}
}
