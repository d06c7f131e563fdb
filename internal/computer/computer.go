// Package computer is MassGen's provider computer-use tools as native tools. Each hands a
// task to a provider's computer-use model and carries out the actions it asks for on the
// agent's virtual desktop (internal/desktop: Xvfb, xdotool, Chromium behind the policy's
// proxy), returning screenshots, until the model answers or max_iterations is reached; its
// answer is the tool's result:
//
//   - claude_computer_use: Anthropic's computer tool (computer_20250124) on the Messages API;
//   - computer_use: OpenAI's computer_use_preview tool on the Responses API;
//   - gemini_computer_use: Gemini's ComputerUse tool (ENVIRONMENT_BROWSER) on generateContent.
//
// The three vocabularies are translated into one set of steps (actions.go), carried out one
// way. What the model calls cost is the agent's cost (tool.Result.Spent; meter.go estimates a
// call that ends without usage), every screenshot is saved in the workspace and shown live,
// and keys stay here: errors name the variable a key came from.
package computer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"massgen/internal/browser"
	"massgen/internal/desktop"
	"massgen/internal/redact"
)

// Backend is the provider a tool calls, with its key.
type Backend struct {
	// APIKey is the secret; KeyEnv names where it came from, all a message may say of it.
	APIKey, KeyEnv string
	// BaseURL is the endpoint ("" for the provider's default), as the agents' providers take it.
	BaseURL string
}

// The providers, as massgen's backend types name them.
const (
	Claude = "claude"
	OpenAI = "openai"
	Gemini = "gemini"
)

// keyVars name the variables a provider's key is read from, for the message a call without
// one gets.
var keyVars = map[string]string{Claude: "ANTHROPIC_API_KEY", OpenAI: "OPENAI_API_KEY", Gemini: "GEMINI_API_KEY (or GOOGLE_API_KEY)"}

// Options configure one agent's computer-use tools.
type Options struct {
	// Backends are the providers the tools' models run on, by name (Claude, OpenAI, Gemini);
	// a missing one makes every call of its tool an error naming the variable to set.
	Backends map[string]Backend
	// Browser configures the Chromium on the desktop (its workspace, profile and policy).
	Browser browser.Options
	// HTTPClient carries the model calls when set (tests).
	HTTPClient *http.Client
	// MaxResponseBytes caps one model response (0: 16 MiB).
	MaxResponseBytes int64
}

// Limits of a call, whatever its arguments say.
const (
	maxIterations = 100
	maxAnswer     = 20000
	maxActions    = 16 // actions carried out of one model turn
)

// Desktops is an agent's desktop, started by its first call at the size that call asks for,
// and kept for the run; a call at another size starts a new one.
type Desktops struct {
	o      Options
	mu     sync.Mutex
	d      *desktop.Desktop
	closed bool
}

// NewDesktops prepares an agent's desktop; nothing starts yet.
func NewDesktops(o Options) *Desktops { return &Desktops{o: o} }

func (ds *Desktops) get(ctx context.Context, w, h int) (*desktop.Desktop, error) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	if ds.closed {
		return nil, fmt.Errorf("the desktop is closed: the run is ending")
	}
	if ds.d != nil {
		if dw, dh := ds.d.Size(); dw == w && dh == h {
			return ds.d, nil
		}
		ds.d.Close()
		ds.d = nil
	}
	d, err := desktop.Start(ctx, desktop.Options{Width: w, Height: h, Browser: ds.o.Browser})
	if err != nil {
		return nil, err
	}
	ds.d = d
	return d, nil
}

// Stop ends the desktop and refuses later calls: Desktops is a workspace.Resident.
func (ds *Desktops) Stop() {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	ds.closed = true
	if ds.d != nil {
		ds.d.Close()
		ds.d = nil
	}
}

// Close is Stop.
func (ds *Desktops) Close() error {
	ds.Stop()
	return nil
}

// taskArgs are what MassGen's computer-use tools take.
type taskArgs struct {
	Query             string         `json:"query"`
	Task              string         `json:"task"`
	Environment       string         `json:"environment"`
	DisplayWidth      int            `json:"display_width"`
	DisplayHeight     int            `json:"display_height"`
	MaxIterations     int            `json:"max_iterations"`
	Model             string         `json:"model"`
	Headless          *bool          `json:"headless"`
	BrowserType       string         `json:"browser_type"`
	EnvironmentConfig map[string]any `json:"environment_config"`
	URL               string         `json:"url"`
	InitialURL        string         `json:"initial_url"` // gemini_computer_use's name for url
	// include_reasoning (computer_use) and include_thoughts (gemini_computer_use) ask for the
	// model's reasoning summaries; MassGen's default is on.
	IncludeReasoning *bool `json:"include_reasoning"`
	IncludeThoughts  *bool `json:"include_thoughts"`
	// ExcludedFunctions are Gemini's predefined functions it is not to use.
	ExcludedFunctions []string `json:"excluded_functions"`
	// InitialScreenshotPath is computer_use's picture to start from: refused (the task
	// starts from a screenshot of the desktop itself).
	InitialScreenshotPath string `json:"initial_screenshot_path"`
}

// defaults are a tool's display and turns when the call gives none (MassGen's per tool).
type defaults struct{ width, height, iterations int }

func (a *taskArgs) check(def defaults) string {
	if a.Query == "" {
		a.Query = a.Task
	}
	if a.URL == "" {
		a.URL = a.InitialURL
	}
	switch {
	case strings.TrimSpace(a.Query) == "":
		return "query is required: describe the task to carry out on the computer"
	case a.Environment != "" && a.Environment != "browser" && a.Environment != "linux":
		return fmt.Sprintf("environment %q is not built: use browser or linux (both are a virtual desktop with Chromium on it)", a.Environment)
	case a.EnvironmentConfig["container_name"] != nil:
		return "Docker environments (environment_config.container_name) are refused: no container engine runs here"
	case a.BrowserType != "" && a.BrowserType != "chromium":
		return fmt.Sprintf("browser_type %q is not built: chromium is", a.BrowserType)
	case a.DisplayWidth < 0 || a.DisplayHeight < 0 || a.DisplayWidth > 2560 || a.DisplayHeight > 1600:
		return "display_width and display_height must be at most 2560x1600"
	case a.MaxIterations < 0 || a.MaxIterations > maxIterations:
		return fmt.Sprintf("max_iterations must be between 1 and %d", maxIterations)
	case a.InitialScreenshotPath != "":
		return "initial_screenshot_path is not taken: the task starts from a screenshot of the desktop itself (use url to open a page first)"
	case len(a.ExcludedFunctions) > 32:
		return "excluded_functions lists at most 32 names"
	}
	if a.DisplayWidth == 0 || a.DisplayHeight == 0 {
		a.DisplayWidth, a.DisplayHeight = def.width, def.height
	}
	if a.MaxIterations == 0 {
		a.MaxIterations = def.iterations
	}
	return ""
}

// on is an optional switch, on when absent (MassGen's include_reasoning, include_thoughts).
func on(b *bool) bool { return b == nil || *b }

// start is what every tool does first: read the arguments, find the provider's key, and
// start the desktop (opening url when given). A non-empty refusal is the call's error.
func (ds *Desktops) start(ctx context.Context, raw, provider, label string, def defaults) (a taskArgs, b Backend, d *desktop.Desktop, refusal string) {
	a, bad := decode(raw, def)
	if bad != "" {
		return a, b, nil, bad
	}
	b, ok := ds.o.Backends[provider]
	if !ok || b.APIKey == "" {
		return a, b, nil, fmt.Sprintf("no %s API key: set %s (the tool calls %s's computer-use model itself)", label, keyVars[provider], label)
	}
	d, err := ds.get(ctx, a.DisplayWidth, a.DisplayHeight)
	if err != nil {
		return a, b, nil, fmt.Sprintf("the desktop: %v", err)
	}
	if a.URL != "" {
		if _, err := d.Browser().Navigate(ctx, a.URL); err != nil {
			return a, b, nil, err.Error()
		}
		pause(ctx) // the page paints a moment after it loads, and the model sees it next
	}
	return a, b, d, ""
}

// cleanErr is err as the model may see it: without keys or URL credentials.
func cleanErr(b Backend, err error) string {
	red := redact.New(append([]string{b.APIKey}, redact.URLSecrets(b.BaseURL)...)...)
	return clip(red.Message(err.Error()), 2000)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

func decode(raw string, def defaults) (taskArgs, string) {
	var a taskArgs
	if err := json.Unmarshal([]byte(raw), &a); err != nil {
		return a, fmt.Sprintf("the arguments are not a JSON object of the tool's parameters: %v", err)
	}
	return a, a.check(def)
}

// capped is hc with every response body cut off at max bytes (0: 16 MiB): a model's
// response is read into memory whole. m, when set, is told of every attempt.
func capped(hc *http.Client, max int64, m *meter) *http.Client {
	if max <= 0 {
		max = 16 << 20
	}
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	return &http.Client{Transport: limitTransport{base: base, max: max, m: m}, Timeout: hc.Timeout}
}

type limitTransport struct {
	base http.RoundTripper
	max  int64
	m    *meter
}

func (t limitTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = t.m.attempt(r)
	resp, err := t.base.RoundTrip(r)
	if err == nil {
		t.m.answered(resp.StatusCode)
		resp.Body = &limitBody{rc: resp.Body, left: t.max, m: t.m}
	}
	return resp, err
}

type limitBody struct {
	rc   io.ReadCloser
	left int64
	m    *meter
}

func (b *limitBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errors.New("the response is larger than massgen accepts")
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	b.m.read(n)
	return n, err
}

func (b *limitBody) Close() error { return b.rc.Close() }
