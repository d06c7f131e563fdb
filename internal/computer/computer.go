// Package computer is MassGen's provider computer-use tools as native tools:
// claude_computer_use hands a task to Claude with Anthropic's computer tool
// (computer_20250124, beta computer-use-2025-01-24) and carries out the actions it asks for on
// the agent's virtual desktop (internal/desktop), returning screenshots as tool_result images,
// until Claude answers or max_iterations is reached; its answer is the tool's result. What
// the model calls cost is the agent's cost (tool.Result.Spent), every screenshot is saved in
// the workspace and shown live, and keys stay here: errors name the variable a key came from.
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
	"time"

	"massgen/internal/browser"
	"massgen/internal/desktop"
	"massgen/internal/redact"
	"massgen/internal/tool"
)

// Backend is the provider a tool calls, with its key.
type Backend struct {
	// APIKey is the secret; KeyEnv names where it came from, all a message may say of it.
	APIKey, KeyEnv string
	// BaseURL is the endpoint ("" for the provider's default), as the agents' providers take it.
	BaseURL string
}

// Options configure one agent's computer-use tool.
type Options struct {
	// Backend is the provider the tool's model runs on; a zero APIKey makes every call an
	// error naming the variable to set.
	Backend Backend
	// KeyVar is the variable that would hold the key, for that message.
	KeyVar string
	// Browser configures the Chromium on the desktop (its workspace, profile and policy).
	Browser browser.Options
	// HTTPClient carries the model calls when set (tests).
	HTTPClient *http.Client
	// MaxResponseBytes caps one model response (0: 16 MiB).
	MaxResponseBytes int64
}

// Limits of a call, whatever its arguments say.
const (
	maxIterations     = 100
	defaultIterations = 25
	defaultWidth      = 1024
	defaultHeight     = 768
	maxAnswer         = 20000
	maxActions        = 16 // actions carried out of one model turn
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
}

func (a *taskArgs) check() string {
	if a.Query == "" {
		a.Query = a.Task
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
	}
	if a.DisplayWidth == 0 || a.DisplayHeight == 0 {
		a.DisplayWidth, a.DisplayHeight = defaultWidth, defaultHeight
	}
	if a.MaxIterations == 0 {
		a.MaxIterations = defaultIterations
	}
	return ""
}

// shots saves each screenshot in the workspace and shows it.
func shot(ctx context.Context, dir string, png []byte) {
	if rel, err := browser.SaveScreenshot(dir, "", png); err == nil {
		tool.Image(ctx)(rel, png)
	}
}

// act carries out one action a computer-use model asked for, in Anthropic's vocabulary,
// on the desktop. It returns a screenshot (for the screenshot action) or a line of text.
func act(ctx context.Context, d *desktop.Desktop, in map[string]any) (png []byte, text string, err error) {
	action, _ := in["action"].(string)
	xy := func(key string) (int, int, error) {
		c, ok := in[key].([]any)
		if !ok || len(c) != 2 {
			return 0, 0, fmt.Errorf("%s needs %s as [x, y]", action, key)
		}
		x, ok1 := c[0].(float64)
		y, ok2 := c[1].(float64)
		if !ok1 || !ok2 {
			return 0, 0, fmt.Errorf("%s must hold two numbers", key)
		}
		return int(x), int(y), nil
	}
	str := func(key string) string { s, _ := in[key].(string); return s }
	click := func(button string, n int) (string, error) {
		x, y, err := xy("coordinate")
		if err != nil {
			if _, given := in["coordinate"]; given {
				return "", err
			}
			if x, y, err = d.Cursor(ctx); err != nil {
				return "", err
			}
		}
		return fmt.Sprintf("%s-clicked at (%d, %d)", button, x, y), d.Click(ctx, x, y, button, n)
	}
	switch action {
	case "screenshot":
		png, err = d.Screenshot(ctx)
		return png, "", err
	case "left_click":
		text, err = click("left", 1)
	case "right_click":
		text, err = click("right", 1)
	case "middle_click":
		text, err = click("middle", 1)
	case "double_click":
		text, err = click("left", 2)
	case "triple_click":
		text, err = click("left", 3)
	case "mouse_move":
		x, y, e := xy("coordinate")
		if e != nil {
			return nil, "", e
		}
		text, err = fmt.Sprintf("moved to (%d, %d)", x, y), d.Move(ctx, x, y)
	case "left_click_drag":
		x0, y0, e0 := xy("start_coordinate")
		x1, y1, e1 := xy("coordinate")
		if e0 != nil {
			x0, y0, e0 = d.Cursor(ctx)
		}
		if e0 != nil || e1 != nil {
			return nil, "", fmt.Errorf("left_click_drag needs coordinate as [x, y]")
		}
		text, err = fmt.Sprintf("dragged from (%d, %d) to (%d, %d)", x0, y0, x1, y1), d.Drag(ctx, x0, y0, x1, y1)
	case "left_mouse_down", "left_mouse_up":
		text, err = action, d.Press(ctx, action == "left_mouse_down")
	case "type":
		text, err = fmt.Sprintf("typed %d characters", len([]rune(str("text")))), d.Type(ctx, str("text"))
	case "key":
		text, err = "pressed "+str("text"), d.Key(ctx, str("text"), "")
	case "hold_key":
		secs, _ := in["duration"].(float64)
		if err = d.Key(ctx, str("text"), "down"); err == nil {
			_ = d.Wait(ctx, time.Duration(secs*float64(time.Second)))
			err = d.Key(ctx, str("text"), "up")
		}
		text = "held " + str("text")
	case "scroll":
		x, y, e := xy("coordinate")
		if e != nil {
			w, h := d.Size()
			x, y = w/2, h/2
		}
		n, _ := in["scroll_amount"].(float64)
		text, err = fmt.Sprintf("scrolled %s by %d", str("scroll_direction"), int(n)), d.Scroll(ctx, x, y, str("scroll_direction"), int(n))
	case "wait":
		secs, _ := in["duration"].(float64)
		text, err = "waited", d.Wait(ctx, time.Duration(secs*float64(time.Second)))
	case "cursor_position":
		x, y, e := d.Cursor(ctx)
		text, err = fmt.Sprintf("X=%d,Y=%d", x, y), e
	default:
		return nil, "", fmt.Errorf("unknown action %q", action)
	}
	return nil, text, err
}

// keyError is a message for a call without a key.
func keyError(o Options, provider string) tool.Result {
	return tool.Errorf(fmt.Sprintf("no %s API key: set %s (the tool calls %s's computer-use model itself)", provider, o.KeyVar, provider))
}

// cleanErr is err as the model may see it: without keys or URL credentials.
func cleanErr(o Options, err error) string {
	red := redact.New(append([]string{o.Backend.APIKey}, redact.URLSecrets(o.Backend.BaseURL)...)...)
	return clip(red.Message(err.Error()), 2000)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

func decode(raw string) (taskArgs, string) {
	var a taskArgs
	if err := json.Unmarshal([]byte(raw), &a); err != nil {
		return a, fmt.Sprintf("the arguments are not a JSON object of the tool's parameters: %v", err)
	}
	return a, a.check()
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
