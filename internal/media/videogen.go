package media

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"google.golang.org/genai"

	"massgen/internal/provider"
	"massgen/internal/tool"
	"massgen/internal/usage"
)

// Video generation is a job of minutes on both providers: OpenAI's Sora (POST /videos, GET
// /videos/{id} until it is completed, GET /videos/{id}/content) and Gemini's Veo
// (models/{model}:predictLongRunning, GET of the operation until it is done, then the file).
// The job is polled every Options.PollEvery, for at most Options.VideoWait and maxVideoPolls
// checks, and never past the call's context.

const (
	defaultSoraModel  = "sora-2"
	defaultVeoModel   = "veo-3.1-fast-generate-preview"
	defaultPollEvery  = 5 * time.Second
	defaultVideoWait  = 10 * time.Minute
	maxVideoPolls     = 400
	maxVideo          = 60 << 20 // one downloaded video; below maxResponseBody, so this cap speaks first
	maxVideoBatch     = 4        // videos of one generate_media call: each costs dollars
	maxVideoSeconds   = 60
	maxVideoFieldText = 20 // size, aspect_ratio, resolution
)

// defaultVideoSeconds are the lengths the providers make when asked for none.
var defaultVideoSeconds = map[string]int{"openai": 4, "gemini": 8}

// videoSpec is one video to make.
type videoSpec struct {
	prompt, model string
	seconds       int    // 0: the provider's default
	size          string // OpenAI: 720x1280, 1280x720, 1024x1792 or 1792x1024
	aspect        string // Gemini: 16:9 or 9:16
	resolution    string // Gemini: 720p or 1080p
	negative      string // Gemini: what not to show
}

// madeVideo is a finished job.
type madeVideo struct {
	data    []byte
	id      string // OpenAI's video id, Gemini's operation name
	seconds int
	size    string
}

// videoFamily is the provider a video model belongs to, "" when its name does not say.
func videoFamily(model string) string {
	m := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(model)), "models/")
	switch {
	case strings.HasPrefix(m, "sora"):
		return "openai"
	case strings.HasPrefix(m, "veo"):
		return "gemini"
	}
	return ""
}

// videoSpend is what seconds of video from model cost: its list price when the table knows
// it, else unknown; estimated when the job was cut off before it said it had finished.
func videoSpend(model, size string, seconds int, estimated bool) provider.Usage {
	p, ok := usage.VideoPerSecond(model, size)
	if !ok {
		return provider.Usage{Unknown: true, Estimated: estimated}
	}
	return provider.Usage{CostUSD: p * float64(seconds), Estimated: estimated}
}

// jobState is how far a video job got, which decides what it is billed.
type jobState int

const (
	jobNotStarted jobState = iota // nothing was created: nothing is billed
	jobFailed                     // the provider says it made nothing: nothing is billed
	jobUnfinished                 // given up on while it ran: it may still be made and billed
	jobMade                       // the provider made the video: billed, whatever happens next
)

// makeVideo runs one video job on b and returns the video and what it cost. A job given up on
// while it ran is counted at its requested length, as an estimate.
func (ts *toolset) makeVideo(ctx context.Context, b Backend, v videoSpec) (madeVideo, provider.Usage, error) {
	seconds := v.seconds
	if seconds == 0 {
		seconds = defaultVideoSeconds[b.Name]
	}
	var out madeVideo
	var state jobState
	var err error
	switch b.Name {
	case "openai":
		out, state, err = ts.soraVideo(ctx, b, v)
	case "gemini":
		out, state, err = ts.veoVideo(ctx, b, v)
	default:
		return madeVideo{}, provider.Usage{}, fmt.Errorf("%s makes no videos here: use openai or gemini", b.Name)
	}
	if out.seconds == 0 {
		out.seconds = seconds
	}
	var spent provider.Usage
	switch state {
	case jobUnfinished:
		spent = videoSpend(v.model, v.size, seconds, true)
	case jobMade:
		spent = videoSpend(v.model, cmpOr(out.size, v.size), out.seconds, false)
	}
	return out, spent, err
}

// awaitVideo checks the job until it is done, waiting PollEvery between checks; state reports
// the job as last seen, refresh fetches it again. It gives up after VideoWait or maxVideoPolls
// checks, and when ctx ends.
func (ts *toolset) awaitVideo(ctx context.Context, name string, state func() (done bool, status string, err error),
	refresh func(context.Context) error) error {
	wctx, cancel := context.WithTimeout(ctx, ts.o.VideoWait)
	defer cancel()
	say := tool.Output(ctx)
	for n := 1; ; n++ {
		done, status, err := state()
		if err != nil || done {
			return err
		}
		say(fmt.Sprintf("%s: %s\n", name, status))
		if n >= maxVideoPolls {
			return fmt.Errorf("%s was still %s after %d checks; it may still be made: try again later with a shorter video", name, status, n)
		}
		if !sleep(wctx, ts.o.PollEvery) {
			return ts.stopped(ctx, name, status, n)
		}
		if err := refresh(wctx); err != nil {
			if wctx.Err() != nil {
				return ts.stopped(ctx, name, status, n)
			}
			return err
		}
	}
}

// stopped says why waiting for a job ended before it finished.
func (ts *toolset) stopped(ctx context.Context, name, status string, checks int) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("the call was cut off while %s was %s (%w); the provider may still make it, and bill it", name, status, err)
	}
	return fmt.Errorf("%s was still %s after %s (%d checks); it may still be made, and billed", name, status, ts.o.VideoWait, checks)
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// soraVideo makes a video with OpenAI's videos API.
func (ts *toolset) soraVideo(ctx context.Context, b Backend, v videoSpec) (out madeVideo, state jobState, err error) {
	// The SDK marks the Sora API deprecated: OpenAI plans to shut it down on 24 September
	// 2026. Until then it is OpenAI's video API.
	svc := openai.NewVideoService(ts.openaiOptions(b)...)
	p := openai.VideoNewParams{Prompt: v.prompt, Model: openai.VideoModel(v.model)}
	if v.seconds > 0 {
		p.Seconds = openai.VideoSeconds(strconv.Itoa(v.seconds))
	}
	if v.size != "" {
		p.Size = openai.VideoSize(v.size)
	}
	job, err := svc.New(ctx, p)
	if err != nil {
		return out, jobNotStarted, ts.providerError(b, err)
	}
	if job.ID == "" {
		return out, jobNotStarted, fmt.Errorf("openai (%s) started no video job (no id in its answer)", v.model)
	}
	name := "openai video " + clip(job.ID, 80)
	err = ts.awaitVideo(ctx, name, func() (bool, string, error) {
		switch job.Status {
		case openai.VideoStatusCompleted:
			return true, "", nil
		case openai.VideoStatusFailed:
			why := cmpOr(job.Error.Message, job.Error.Code)
			return true, "", fmt.Errorf("openai (%s) could not make the video: %s", v.model, ts.clean(cmpOr(why, "no reason given")))
		case openai.VideoStatusQueued, openai.VideoStatusInProgress:
			return false, fmt.Sprintf("%s, %d%%", job.Status, job.Progress), nil
		}
		return true, "", fmt.Errorf("openai video job %s has status %q, which this build does not know", clip(job.ID, 80), clip(string(job.Status), 40))
	}, func(ctx context.Context) error {
		j, err := svc.Get(ctx, job.ID)
		if err != nil {
			return ts.providerError(b, err)
		}
		job = j
		return nil
	})
	switch {
	case err != nil && job.Status == openai.VideoStatusFailed:
		return out, jobFailed, err
	case err != nil:
		return out, jobUnfinished, err
	}
	seconds, _ := strconv.Atoi(string(job.Seconds))
	out = madeVideo{id: job.ID, seconds: seconds, size: string(job.Size)}
	resp, err := svc.DownloadContent(ctx, job.ID, openai.VideoDownloadContentParams{})
	if err != nil {
		return out, jobMade, ts.providerError(b, err)
	}
	if out.data, err = readVideo(resp, ts.videoCap); err != nil {
		return out, jobMade, fmt.Errorf("openai (%s), video %s: %w", v.model, clip(job.ID, 80), err)
	}
	return out, jobMade, nil
}

// readVideo reads a downloaded video, at most limit bytes, and checks that it is one.
func readVideo(resp *http.Response, limit int64) ([]byte, error) {
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("downloading the video: %v", err)
	}
	if int64(len(data)) > limit {
		return nil, tooBigVideo(limit)
	}
	return data, checkVideo(data, resp.Header.Get("Content-Type"))
}

func tooBigVideo(limit int64) error {
	return fmt.Errorf("the video is larger than %d MiB; ask for a shorter or smaller one", limit>>20)
}

// checkVideo refuses what is plainly not a video: nothing, JSON or text.
func checkVideo(data []byte, contentType string) error {
	got := http.DetectContentType(data)
	switch {
	case len(data) == 0:
		return errors.New("the video is empty")
	case strings.HasPrefix(contentType, "application/json"), strings.HasPrefix(contentType, "text/"), strings.HasPrefix(got, "text/"):
		return fmt.Errorf("the provider sent %s, not a video", cmpOr(contentType, got))
	}
	return nil
}

// veoVideo makes a video with Gemini's Veo.
func (ts *toolset) veoVideo(ctx context.Context, b Backend, v videoSpec) (out madeVideo, state jobState, err error) {
	client, err := ts.geminiClient(ctx, b)
	if err != nil {
		return out, jobNotStarted, err
	}
	cfg := &genai.GenerateVideosConfig{NumberOfVideos: 1, AspectRatio: v.aspect, Resolution: v.resolution, NegativePrompt: v.negative}
	if v.seconds > 0 {
		cfg.DurationSeconds = genai.Ptr(int32(v.seconds))
	}
	op, err := client.Models.GenerateVideosFromSource(ctx, v.model, &genai.GenerateVideosSource{Prompt: v.prompt}, cfg)
	if err != nil {
		return out, jobNotStarted, ts.providerError(b, err)
	}
	if op == nil || op.Name == "" {
		return out, jobNotStarted, fmt.Errorf("gemini (%s) started no video operation (no name in its answer)", v.model)
	}
	name := "gemini operation " + clip(op.Name, 120)
	err = ts.awaitVideo(ctx, name, func() (bool, string, error) {
		if !op.Done {
			return false, "running", nil
		}
		if op.Error != nil {
			return true, "", fmt.Errorf("gemini (%s) could not make the video: %s", v.model, ts.clean(fmt.Sprint(cmpAny(op.Error["message"], op.Error))))
		}
		return true, "", nil
	}, func(ctx context.Context) error {
		o, err := client.Operations.GetVideosOperation(ctx, op, nil)
		if err != nil {
			return ts.providerError(b, err)
		}
		if o == nil {
			return fmt.Errorf("gemini returned no operation for %s", clip(op.Name, 120))
		}
		op = o
		return nil
	})
	switch {
	case err != nil && op.Done:
		return out, jobFailed, err
	case err != nil:
		return out, jobUnfinished, err
	}
	r := op.Response
	if r == nil || len(r.GeneratedVideos) == 0 || r.GeneratedVideos[0] == nil || r.GeneratedVideos[0].Video == nil {
		if r != nil && r.RAIMediaFilteredCount > 0 {
			return out, jobFailed, fmt.Errorf("gemini (%s) filtered the video out: %s; change the prompt", v.model,
				ts.clean(cmpOr(strings.Join(r.RAIMediaFilteredReasons, "; "), "no reason given")))
		}
		return out, jobFailed, fmt.Errorf("gemini (%s) finished without a video", v.model)
	}
	gv := r.GeneratedVideos[0]
	out = madeVideo{id: op.Name, size: cmpOr(v.resolution, v.aspect)}
	data := gv.Video.VideoBytes
	if len(data) == 0 {
		if data, err = client.Files.Download(ctx, genai.NewDownloadURIFromGeneratedVideo(gv), nil); err != nil {
			return out, jobMade, ts.providerError(b, fmt.Errorf("downloading the video: %w", err))
		}
	}
	if int64(len(data)) > ts.videoCap {
		return out, jobMade, tooBigVideo(ts.videoCap)
	}
	if err := checkVideo(data, gv.Video.MIMEType); err != nil {
		return out, jobMade, fmt.Errorf("gemini (%s): %w", v.model, err)
	}
	out.data = data
	return out, jobMade, nil
}

// clean is a provider's message as the model may see it: redacted and short.
func (ts *toolset) clean(msg string) string {
	return clip(ts.red.Message(msg), maxErrorText)
}

func cmpAny(a, b any) any {
	if a != nil {
		return a
	}
	return b
}
