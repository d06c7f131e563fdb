// Package media is MassGen's media tools as native tools: read_media and the understand_*
// tools send an agent's images, audio, video and PDFs to a provider's multimodal endpoint
// (OpenAI Responses and transcriptions, Gemini generateContent, Claude Messages) and return
// what it says; generate_media makes images and speech with OpenAI, and videos with Gemini's
// Veo or OpenAI's Sora, and writes them into the agent's workspace, as MassGen v0.1.12's
// text_to_video_generation and text_to_file_generation do. Videos to understand go whole to
// Gemini and as frames (taken with ffmpeg) to OpenAI and Claude. What a tool pays a provider
// comes back in tool.Result.Spent. Files are read and written only through the agent's workspace
// confinement, sizes are capped both ways, and keys stay here: results and errors name the
// variable a key came from, never the key.
package media

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"massgen/internal/config"
	"massgen/internal/provider"
	"massgen/internal/redact"
	"massgen/internal/tool"
	"massgen/internal/workspace"
)

// Backend is one provider the tools may call, with its key.
type Backend struct {
	// Name is openai, gemini or claude.
	Name string
	// APIKey is the secret; KeyEnv names where it came from, all a message may say of it.
	APIKey, KeyEnv string
	// BaseURL is the endpoint ("" for the provider's default), as the agents' providers take it.
	BaseURL string
}

// Options configure an agent's media tools.
type Options struct {
	// Workspace confines every file the tools read or write. Required.
	Workspace *workspace.Agent
	// Media is the agent's media configuration (after config.Media.Over).
	Media config.Media
	// Own and OwnModel are the agent's own backend type and model: images, video and documents
	// go to the agent's own provider when it can take them, as MassGen v0.1.55 routes them.
	Own, OwnModel string
	// Backends are the providers with a key, by name; a missing one is not called.
	Backends map[string]Backend
	// HTTPClient carries every request when set (tests); its transport is wrapped to cap
	// response bodies either way.
	HTTPClient *http.Client
	// Now names generated files; nil means time.Now.
	Now func() time.Time
	// FFmpeg and FFprobe are the programs that take frames out of a video for providers
	// without video input; "" looks up ffmpeg and ffprobe in PATH.
	FFmpeg, FFprobe string
	// PollEvery is how often a video job is checked (0: every 5 s); VideoWait bounds the wait
	// for one video (0: 10 minutes). The call's own timeout (agent_timeout_seconds) bounds both.
	PollEvery, VideoWait time.Duration
}

// toolset is the state the tools of one agent share.
type toolset struct {
	o   Options
	hc  *http.Client
	red *redact.Redactor
	mu  sync.Mutex // serialises picking a generated file's name
	// videoCap bounds a downloaded video (maxVideo), fileCap a file made by a provider's code
	// interpreter (maxGenerated); tests lower them.
	videoCap, fileCap int64
}

func newToolset(o Options) *toolset {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.PollEvery <= 0 {
		o.PollEvery = defaultPollEvery
	}
	if o.VideoWait <= 0 {
		o.VideoWait = defaultVideoWait
	}
	base := http.DefaultTransport
	if o.HTTPClient != nil && o.HTTPClient.Transport != nil {
		base = o.HTTPClient.Transport
	}
	hc := &http.Client{Transport: limitTransport{base: base, max: maxResponseBody}}
	if o.HTTPClient != nil {
		hc.Timeout = o.HTTPClient.Timeout
	}
	var secrets []string
	for _, b := range o.Backends {
		secrets = append(secrets, b.APIKey)
		secrets = append(secrets, redact.URLSecrets(b.BaseURL)...)
	}
	return &toolset{o: o, hc: hc, red: redact.New(secrets...), videoCap: maxVideo, fileCap: maxGenerated}
}

// Tools returns the tools o.Media offers: custom_tool__read_media,
// custom_tool__generate_media and custom_tool__text_to_file_generation, named as MassGen
// registers them (as custom tools).
func Tools(o Options) tool.Set {
	ts := newToolset(o)
	var set tool.Set
	if o.Media.ReadMedia() {
		set = append(set, metered(ts.readMediaTool()))
	}
	if modes := o.Media.GenerateModes(); len(modes) > 0 {
		set = append(set, metered(ts.generateMediaTool(modes)))
	}
	if o.Media.FileGeneration {
		set = append(set, metered(ts.textToFileTool()))
	}
	return set
}

// Custom returns the native tool for a custom_tools entry that names one of MassGen's media
// tools (config.CustomTool.MediaTool), under the entry's name.
func Custom(o Options, c config.CustomTool) (tool.Tool, error) {
	ts := newToolset(o)
	var t tool.Tool
	switch c.MediaTool() {
	case "read_media":
		t = ts.readMediaTool()
	case "generate_media":
		t = ts.generateMediaTool([]string{"image", "audio", "video"})
	case "text_to_video_generation":
		t = ts.textToVideoTool()
	case "text_to_file_generation":
		t = ts.textToFileTool()
	case "understand_image":
		t = ts.understandImageTool()
	case "understand_audio":
		t = ts.understandAudioTool()
	case "understand_video":
		t = ts.understandVideoTool()
	case "understand_file":
		t = ts.understandFileTool()
	default:
		return tool.Tool{}, fmt.Errorf("%s is not one of MassGen's media tools", c.Label())
	}
	t = metered(t)
	t.Spec.Name = config.ExposedCustomToolName(c.Name)
	if c.Description != "" {
		t.Spec.Description = c.Description
	}
	if len(c.PresetArgs) > 0 || len(c.DefaultParams) > 0 {
		t = tool.WithPresets(t, c.PresetArgs, c.DefaultParams)
	}
	return t, nil
}

// schema builds a tool's JSON schema.
func schema(props map[string]any, required ...string) map[string]any {
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func str(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }

func spec(name, desc string, params map[string]any) provider.ToolSpec {
	return provider.ToolSpec{Name: config.CustomToolPrefix + name, Description: desc, Parameters: params}
}

// result is MassGen's result shape: {"success": ..., "operation": ..., ...} as indented JSON.
func result(operation string, fields map[string]any) tool.Result {
	out := map[string]any{"success": true, "operation": operation}
	for k, v := range fields {
		out[k] = v
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	return tool.Result{Content: string(b)}
}

// failure is MassGen's error shape, marked as a failed call.
func failure(operation string, err error) tool.Result {
	b, _ := json.MarshalIndent(map[string]any{"success": false, "operation": operation, "error": err.Error()}, "", "  ")
	return tool.Result{Content: string(b), IsError: true}
}

// decode reads a call's arguments into v; the error says what to send instead.
func decode(name, args string, v any, example string) error {
	if s := strings.TrimSpace(args); s == "" || s == "null" {
		args = "{}"
	}
	if err := json.Unmarshal([]byte(args), v); err != nil {
		return fmt.Errorf("invalid arguments for %s: %v; send one JSON object such as %s", name, err, example)
	}
	return nil
}

// clipText cuts s to n bytes on a rune boundary, saying so.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[truncated: %d of %d bytes]", cut, len(s))
}

// limitTransport caps response bodies: the SDKs read a whole body into memory.
type limitTransport struct {
	base http.RoundTripper
	max  int64
}

func (t limitTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err == nil && resp.Body != nil {
		resp.Body = &limitedBody{rc: resp.Body, left: t.max}
	}
	return resp, err
}

type limitedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var probe [1]byte
		if n, err := b.rc.Read(probe[:]); n == 0 && err == io.EOF {
			return 0, io.EOF
		}
		return 0, fmt.Errorf("the response is larger than %d MiB", maxResponseBody>>20)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }
