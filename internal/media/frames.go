package media

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"massgen/internal/lazy"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"massgen/internal/childproc"
	"massgen/internal/config"
)

// Frame extraction, for the providers that take images but not video (OpenAI, Claude), as
// MassGen's understand_video does with OpenCV: num_frames frames evenly spaced over the video,
// scaled to fit the vision APIs and encoded as JPEG. Here ffprobe reads the duration and
// ffmpeg seeks to each frame, so that a long video costs little more than a short one.
const (
	defaultNumFrames = 8                     // MassGen's
	maxNumFrames     = config.MaxVideoFrames // MassGen allows 60; 32 keeps a request well under the providers' caps
	maxFrameBytes    = 3 << 20
	framesPerRun     = 8 // frames one ffmpeg takes: one decoder each
	// maxFramesBytes caps the frames of one request: base64 makes it about 20 MB, under
	// Claude's 32 MB request limit.
	maxFramesBytes = 15 << 20
	maxProbeOutput = 64 << 10
	maxPacketList  = 8 << 20 // ffprobe's packet list, read when a video states no duration
	maxToolMessage = 600     // the end of ffmpeg's error output, in an error
)

// frameTimeout bounds taking the frames of one video (a variable: tests shorten it).
var frameTimeout = 2 * time.Minute

// frameScale fits a frame in 2000x768 (landscape) or 768x2000 (portrait) without enlarging
// it: MassGen's limits for OpenAI's vision input, which Claude's also allow.
const frameScale = `scale=w=min(iw\,if(gte(iw\,ih)\,2000\,768)):h=min(ih\,if(gte(iw\,ih)\,768\,2000)):force_original_aspect_ratio=decrease`

// demuxers fixes ffmpeg's input format by extension: a file cannot then be probed as a playlist
// or a concat script, formats that open other files or URLs.
var demuxers = map[string]string{".mp4": "mov", ".mov": "mov", ".avi": "avi", ".mkv": "matroska", ".webm": "matroska"}

// ffAddress is the "[mov,mp4,m4a,3gp,3g2,mj2 @ 0x55d0c0ffee00] " ffmpeg starts messages with.
var ffAddress = lazy.Regexp(`\[[^\]]* @ 0x[0-9a-f]+\] `)

// frame is one extracted frame.
type frame struct {
	at   float64 // seconds from the start of the video
	jpeg []byte
}

// videoInfo is what ffprobe says of a video's first video stream.
type videoInfo struct {
	duration float64 // seconds
	fps      float64 // 0: unknown
	frames   int     // 0: unknown
}

// frameTools finds ffmpeg and ffprobe.
func (ts *toolset) frameTools() (ffmpeg, ffprobe string, err error) {
	find := func(set, name string) (string, error) {
		if set == "" {
			set = name
		}
		p, err := exec.LookPath(set)
		if err != nil {
			return "", fmt.Errorf("%s was not found (%v)", name, errors.Unwrap(err))
		}
		return p, nil
	}
	ffmpeg, err1 := find(ts.o.FFmpeg, "ffmpeg")
	ffprobe, err2 := find(ts.o.FFprobe, "ffprobe")
	return ffmpeg, ffprobe, errors.Join(err1, err2)
}

// numFrames checks understand_video's num_frames; nil is the default.
func numFrames(n *int) (int, error) {
	switch {
	case n == nil:
		return defaultNumFrames, nil
	case *n < 1 || *n > maxNumFrames:
		return 0, fmt.Errorf("num_frames %d is out of range: use 1 to %d (default %d)", *n, maxNumFrames, defaultNumFrames)
	}
	return *n, nil
}

// extractFrames takes n frames out of video p, evenly spaced (frameTimes). The video goes to
// ffmpeg as a private copy that is removed afterwards.
func (ts *toolset) extractFrames(ctx context.Context, p part, n int) ([]frame, videoInfo, error) {
	ffmpeg, ffprobe, err := ts.frameTools()
	if err != nil {
		return nil, videoInfo{}, err
	}
	ext := strings.ToLower(filepath.Ext(p.name))
	demuxer, ok := demuxers[ext]
	if !ok {
		return nil, videoInfo{}, fmt.Errorf("%s: frames are taken from %s files only", p.name, supported(kindVideo))
	}
	dir, err := os.MkdirTemp("", "massgen-frames-")
	if err != nil {
		return nil, videoInfo{}, fmt.Errorf("a folder for the video's frames: %w", err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	input := "video" + ext
	if err := os.WriteFile(filepath.Join(dir, input), p.data, 0o600); err != nil {
		return nil, videoInfo{}, fmt.Errorf("a private copy of the video: %w", err)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, frameTimeout, fmt.Errorf("it took more than %v: ask for fewer num_frames", frameTimeout))
	defer cancel()
	r := ffRunner{dir: dir, input: input, name: p.name}
	// The format is fixed and only local files may be opened: a crafted file cannot make ffmpeg
	// read anything but itself.
	in := []string{"-protocol_whitelist", "file", "-f", demuxer}
	info, err := r.probe(ctx, ffprobe, in)
	if err != nil {
		if ctx.Err() == nil {
			err = fmt.Errorf("%w (is its extension, %s, right?)", err, ext)
		}
		return nil, info, err
	}
	times := frameTimes(info, n)
	var frames []frame
	total := 0
	for first := 0; first < len(times); first += framesPerRun {
		batch := times[first:min(first+framesPerRun, len(times))]
		if err := r.takeFrames(ctx, ffmpeg, in, info.fps, first, batch); err != nil {
			return nil, info, err
		}
		for i, at := range batch {
			out, err := r.readFrame(first + i)
			if err != nil {
				return nil, info, err
			}
			if out == nil {
				continue // no frame decoded there (a variable frame rate's end): MassGen skips it too
			}
			if total += len(out); total > maxFramesBytes {
				return nil, info, fmt.Errorf("the frames of %s take more than %d MiB, the most sent in one request: ask for fewer num_frames",
					p.name, maxFramesBytes>>20)
			}
			frames = append(frames, frame{at: at, jpeg: out})
		}
	}
	if len(frames) == 0 {
		return nil, info, fmt.Errorf("ffmpeg decoded no frame of %s", p.name)
	}
	return frames, info, nil
}

// takeFrames runs one ffmpeg for the frames at times, numbered from first: the video is
// opened once per frame, each seeking to its time, since starting ffmpeg costs more than
// decoding a frame.
func (r ffRunner) takeFrames(ctx context.Context, ffmpeg string, in []string, fps float64, first int, times []float64) error {
	args := []string{"-nostdin", "-loglevel", "error", "-y"}
	for _, at := range times {
		// Half a frame early: ffmpeg returns the first frame at or after the seek. One decoding
		// thread each keeps the memory of framesPerRun decoders small.
		seek := at
		if fps > 0 {
			seek = math.Max(0, at-0.5/fps)
		}
		args = append(append(append(args, "-threads", "1"), in...), "-ss", strconv.FormatFloat(seek, 'f', 4, 64), "-i", "file:"+r.input)
	}
	for i := range times {
		args = append(args, "-map", strconv.Itoa(i)+":v:0", "-frames:v", "1", "-vf", frameScale, "-c:v", "mjpeg", "-q:v", "3",
			"-f", "image2", "-update", "1", frameFile(first+i))
	}
	_, err := r.run(ctx, ffmpeg, 0, args...)
	return err
}

func frameFile(i int) string { return fmt.Sprintf("frame-%02d.jpg", i) }

// readFrame reads frame i, nil when ffmpeg found none at its time.
func (r ffRunner) readFrame(i int) ([]byte, error) {
	p := filepath.Join(r.dir, frameFile(i))
	st, err := os.Lstat(p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("a frame of %s: %w", r.name, err)
	case !st.Mode().IsRegular():
		return nil, fmt.Errorf("a frame of %s is not a file", r.name)
	case st.Size() > maxFrameBytes:
		return nil, fmt.Errorf("a frame of %s takes %d KiB, more than the %d KiB one frame may", r.name, st.Size()>>10, maxFrameBytes>>10)
	case st.Size() == 0:
		return nil, nil
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("a frame of %s: %w", r.name, err)
	}
	if !bytes.HasPrefix(b, []byte{0xFF, 0xD8}) {
		return nil, fmt.Errorf("ffmpeg did not make a JPEG frame of %s", r.name)
	}
	return b, nil
}

// frameTimes are the times of n frames, evenly spaced: the middle of each of n equal spans
// (MassGen starts at the first frame, which is often black). With a known frame rate they are
// frames' own times, n different frames, or all of them when the video has fewer.
func frameTimes(info videoInfo, n int) []float64 {
	if info.frames > 0 {
		n = min(n, info.frames)
	}
	slots, rate := 0, info.fps
	if info.fps > 0 {
		slots = frameSlots(info)
		n = min(n, slots)
		if float64(slots) < math.Round(info.duration*info.fps) {
			rate = float64(slots) / info.duration // bounded: as if at a lower rate
		}
	}
	at := make([]float64, n)
	for i := range n {
		mid := (float64(i) + 0.5) / float64(n)
		if slots > 0 {
			at[i] = math.Floor(mid*float64(slots)) / rate
		} else {
			at[i] = mid * info.duration
		}
	}
	return at
}

// frameSlots is how many frames the duration holds at the frame rate (bounded: both come
// from the file).
func frameSlots(info videoInfo) int {
	return max(1, int(math.Min(math.Round(info.duration*info.fps), 1e9)))
}

// ffRunner runs ffmpeg and ffprobe on one private copy of a video.
type ffRunner struct {
	dir, input string
	name       string // the video's own name, for messages
}

// probe reads the duration, frame rate and frame count of the first video stream.
func (r ffRunner) probe(ctx context.Context, ffprobe string, in []string) (videoInfo, error) {
	args := append([]string{"-v", "error"}, in...)
	args = append(args, "-select_streams", "v:0", "-show_entries", "stream=avg_frame_rate,nb_frames,duration:format=duration",
		"-of", "json", "file:"+r.input)
	out, err := r.run(ctx, ffprobe, maxProbeOutput, args...)
	if err != nil {
		return videoInfo{}, err
	}
	var got struct {
		Streams []struct {
			AvgFrameRate string `json:"avg_frame_rate"`
			NbFrames     string `json:"nb_frames"`
			Duration     string `json:"duration"`
		} `json:"streams"`
		Format struct {
			Duration string `json:"duration"`
		} `json:"format"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		return videoInfo{}, fmt.Errorf("ffprobe's description of %s is not JSON: %w", r.name, err)
	}
	if len(got.Streams) == 0 {
		return videoInfo{}, fmt.Errorf("%s has no video stream (sound only?): use understand_audio for sound", r.name)
	}
	s := got.Streams[0]
	var info videoInfo
	if num, den, ok := strings.Cut(s.AvgFrameRate, "/"); ok {
		a, _ := strconv.ParseFloat(num, 64)
		b, _ := strconv.ParseFloat(den, 64)
		if a > 0 && b > 0 {
			info.fps = a / b
		}
	}
	info.duration = positive(got.Format.Duration)
	if info.duration == 0 {
		info.duration = positive(s.Duration)
	}
	if info.duration == 0 {
		// Streams recorded live (a browser's MediaRecorder webm) state no duration: the
		// packets' timestamps give it.
		if info.duration, err = r.packetSpan(ctx, ffprobe, in); err != nil {
			return info, err
		}
	}
	if info.duration == 0 {
		return info, fmt.Errorf("%s has no duration ffprobe can read (empty, or only its header?), so frames cannot be spaced over it", r.name)
	}
	if f, err := strconv.Atoi(s.NbFrames); err == nil && f > 0 {
		info.frames = f
	} else if info.fps > 0 {
		info.frames = frameSlots(info)
	}
	return info, nil
}

// packetSpan is the time from the first video packet's start to the last one's end.
func (r ffRunner) packetSpan(ctx context.Context, ffprobe string, in []string) (float64, error) {
	args := append([]string{"-v", "error"}, in...)
	args = append(args, "-select_streams", "v:0", "-show_entries", "packet=pts_time,duration_time", "-of", "csv=p=0", "file:"+r.input)
	out, err := r.run(ctx, ffprobe, maxPacketList, args...)
	if err != nil {
		return 0, err
	}
	first, last := math.Inf(1), math.Inf(-1)
	for line := range strings.Lines(string(out)) {
		pts, dur, _ := strings.Cut(strings.TrimSpace(line), ",")
		t, err := strconv.ParseFloat(pts, 64)
		if err != nil || math.IsNaN(t) || math.IsInf(t, 0) {
			continue // N/A
		}
		first, last = math.Min(first, t), math.Max(last, t+positive(strings.TrimSuffix(dur, ",")))
	}
	if last <= first {
		return 0, nil
	}
	return last - first, nil
}

// run runs bin with args in the private folder, confined and without any environment (the
// keys are in massgen's), and returns its standard output, at most limit bytes. The tree ends
// with the call: when ctx is done, and when the output is too large.
func (r ffRunner) run(ctx context.Context, bin string, limit int64, args ...string) ([]byte, error) {
	name := filepath.Base(bin)
	cmd := childproc.Command(ctx, childproc.Confined, bin, args...)
	cmd.Dir = r.dir
	pp, err := cmd.StartPiped(false)
	if err != nil {
		if ctx.Err() != nil { // the time ran out while it started: say so, not how starting failed
			return nil, fmt.Errorf("taking frames of %s was cut off: %w", r.name, context.Cause(ctx))
		}
		return nil, fmt.Errorf("cannot start %s: %w", name, err)
	}
	tail := make(chan string, 1)
	go func() {
		var lines []string
		childproc.ReadLines(pp.Stderr, maxToolMessage, func(s string) {
			if s = strings.TrimSpace(s); s != "" {
				lines = append(lines[max(0, len(lines)-3):], s)
			}
		})
		tail <- strings.Join(lines, "; ")
	}()
	out, readErr := io.ReadAll(io.LimitReader(pp.Stdout, limit+1))
	tooLarge := int64(len(out)) > limit
	if tooLarge || readErr != nil {
		cmd.Kill()
	}
	_ = pp.Stdout.Close()
	st := cmd.Wait()
	msg := <-tail // the tree has ended: nothing holds stderr open
	_ = pp.Stderr.Close()
	// ffmpeg names the input as it was given, and its parts by address; the model knows the
	// video by its own name.
	msg = clipText(strings.ReplaceAll(ffAddress().ReplaceAllString(msg, ""), "file:"+r.input, r.name), maxToolMessage)
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("taking frames of %s was cut off: %w", r.name, context.Cause(ctx))
	case tooLarge:
		return nil, fmt.Errorf("%s wrote more than %d KiB for %s", name, limit>>10, r.name)
	case readErr != nil:
		return nil, fmt.Errorf("reading %s's output: %w", name, readErr)
	case !st.Success():
		if msg == "" {
			msg = "no message"
		}
		return nil, fmt.Errorf("%s could not read %s as a video (%s): %s", name, r.name, st, msg)
	}
	return out, nil
}

// positive parses a duration ffprobe printed; "N/A", garbage and non-positive values are 0.
func positive(s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f <= 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0
	}
	return f
}
