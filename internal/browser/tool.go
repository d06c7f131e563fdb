package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"massgen/internal/provider"
	"massgen/internal/tool"
)

// Lazy is an agent's browser, started by its first call and kept until Close: a page the
// agent opened is still open at its next call, as long as the run lasts.
type Lazy struct {
	o      Options
	mu     sync.Mutex
	s      *Session
	closed bool
}

// NewLazy prepares a browser with o; nothing starts yet.
func NewLazy(o Options) *Lazy {
	o.defaults()
	return &Lazy{o: o}
}

// Session returns the browser, starting it on first use (or after it died).
func (l *Lazy) Session(ctx context.Context) (*Session, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, fmt.Errorf("the browser is closed: the run is ending")
	}
	if l.s != nil {
		select {
		case <-l.s.chrome.Exited():
			l.s.Close() // it died: start a fresh one
			l.s = nil
		default:
			return l.s, nil
		}
	}
	s, err := Open(ctx, l.o)
	if err != nil {
		return nil, err
	}
	l.s = s
	return s, nil
}

// Options are the options the browser starts with.
func (l *Lazy) Options() Options { return l.o }

// Stop ends the browser, if it started, and refuses every later call. It makes Lazy a
// workspace.Resident: the run stops it with the agent's workspace.
func (l *Lazy) Stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.s != nil {
		l.s.Close()
		l.s = nil
	}
}

// Close is Stop.
func (l *Lazy) Close() error {
	l.Stop()
	return nil
}

// AutomationTool is MassGen's browser_automation (massgen/tool/_browser_automation) under
// name: one action per call on the agent's browser, which keeps its page between calls.
func AutomationTool(name string, l *Lazy) tool.Tool {
	return tool.Tool{
		Spec: provider.ToolSpec{Name: name, Description: automationDoc, Parameters: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"task":            map[string]any{"type": "string", "description": "What this step is for (for the log)."},
				"action":          map[string]any{"type": "string", "enum": []string{"navigate", "click", "type", "extract", "screenshot"}, "description": "The action."},
				"url":             map[string]any{"type": "string", "description": "A URL to open first (required for navigate)."},
				"selector":        map[string]any{"type": "string", "description": "CSS selector of the element (click, type, extract)."},
				"text":            map[string]any{"type": "string", "description": "Text to type (type)."},
				"screenshot":      map[string]any{"type": "boolean", "description": "Take a screenshot after the action (default true)."},
				"output_filename": map[string]any{"type": "string", "description": "File name for the screenshot in the workspace's screenshots folder (e.g. page.png)."},
				"headless":        map[string]any{"type": "boolean", "description": "Accepted for MassGen's configs; the browser always runs headless here."},
			},
			"required": []string{"task", "action"},
		}},
		Run: func(ctx context.Context, args string) tool.Result { return automate(ctx, l, args) },
	}
}

const automationDoc = "Drive a web browser: navigate to a URL, click an element, type into a field, extract text, or take a screenshot. " +
	"The page stays open between calls. Screenshots are saved in the workspace's screenshots folder."

// maxTyped bounds the text one type action sends, key by key.
const maxTyped = 10000

type automationArgs struct {
	Task           string `json:"task"`
	Action         string `json:"action"`
	URL            string `json:"url"`
	Selector       string `json:"selector"`
	Text           string `json:"text"`
	Screenshot     *bool  `json:"screenshot"`
	OutputFilename string `json:"output_filename"`
	Headless       *bool  `json:"headless"`
}

func automate(ctx context.Context, l *Lazy, raw string) tool.Result {
	var a automationArgs
	if err := json.Unmarshal([]byte(raw), &a); err != nil {
		return tool.Errorf(fmt.Sprintf("the arguments are not a JSON object of the tool's parameters: %v", err))
	}
	if a.Action == "" {
		a.Action = "navigate"
	}
	if bad := a.check(); bad != "" {
		return tool.Errorf(bad)
	}
	out := map[string]any{"success": false, "operation": "browser_automation", "task": clip(a.Task, 500), "action": a.Action}
	fail := func(err error) tool.Result {
		out["error"] = err.Error()
		return tool.Result{Content: jsonText(out), IsError: true}
	}
	s, err := l.Session(ctx)
	if err != nil {
		return fail(err)
	}
	if a.URL != "" {
		note, err := s.Navigate(ctx, a.URL)
		if err != nil {
			return fail(err)
		}
		out["url"] = a.URL
		if note != "" {
			out["download"] = note
		}
	}
	switch a.Action {
	case "click":
		err = s.Click(ctx, a.Selector)
	case "type":
		err = s.Type(ctx, a.Selector, a.Text)
	case "extract":
		var texts []string
		var cut bool
		texts, cut, err = s.Extract(ctx, a.Selector)
		out["extracted_text"] = texts
		if cut {
			out["truncated"] = fmt.Sprintf("only the first %d elements and %d characters are returned; use a narrower selector", maxElements, l.o.MaxText)
		}
	}
	if err != nil {
		return fail(err)
	}
	if a.Screenshot == nil || *a.Screenshot || a.Action == "screenshot" {
		png, err := s.Screenshot(ctx)
		if err != nil {
			return fail(err)
		}
		rel, err := SaveScreenshot(l.o.Dir, a.OutputFilename, png)
		if err != nil {
			return fail(fmt.Errorf("saving the screenshot: %w", err))
		}
		tool.Image(ctx)(rel, png)
		out["screenshot_saved"] = true
		out["screenshot_path"] = filepath.Join(l.o.Dir, rel)
		out["screenshot_filename"] = rel
	}
	out["current_url"], out["current_title"] = s.Page(ctx)
	out["success"] = true
	return tool.Result{Content: jsonText(out)}
}

func (a automationArgs) check() string {
	switch a.Action {
	case "navigate":
		if a.URL == "" {
			return "navigate needs url"
		}
	case "click", "extract":
		if strings.TrimSpace(a.Selector) == "" {
			return a.Action + " needs selector (a CSS selector such as button[type=submit])"
		}
	case "type":
		if strings.TrimSpace(a.Selector) == "" {
			return "type needs selector (a CSS selector such as input[name=q]) and text"
		}
		if len(a.Text) > maxTyped {
			return fmt.Sprintf("text is %d bytes; type at most %d per call", len(a.Text), maxTyped)
		}
	case "screenshot":
	default:
		return fmt.Sprintf("unknown action %q: use navigate, click, type, extract or screenshot", clip(a.Action, 40))
	}
	if a.OutputFilename != "" {
		if f := a.OutputFilename; f != filepath.Base(f) || strings.HasPrefix(f, ".") || !strings.EqualFold(filepath.Ext(f), ".png") || len(f) > 120 {
			return "output_filename must be a plain file name ending in .png (it is saved in the workspace's screenshots folder)"
		}
	}
	return ""
}

func jsonText(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}
