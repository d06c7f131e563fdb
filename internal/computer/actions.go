package computer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"massgen/internal/browser"
	"massgen/internal/desktop"
	"massgen/internal/tool"
)

// A step is one thing a computer-use model asks for, in massgen's own vocabulary. Each
// provider's actions (Anthropic's computer tool, OpenAI's computer_call actions, Gemini's
// predefined functions) are translated into steps, and a step is carried out one way, on
// the agent's desktop and its Chromium.
type step struct {
	kind   stepKind
	at     *point        // where; nil: where the pointer is (a click) or the screen's middle (a scroll)
	path   []point       // drag: the points the pointer passes from at, the button held
	button string        // click: left, middle or right
	count  int           // click: 1, 2 or 3
	text   string        // type: the text; key, hold: an xdotool key combination; navigate: the URL
	dir    string        // scroll: up, down, left or right
	amount int           // scroll: wheel notches
	dur    time.Duration // wait, hold
}

type point struct{ x, y int }

type stepKind string

const (
	stepScreenshot stepKind = "screenshot"
	stepClick      stepKind = "click"
	stepMove       stepKind = "move"
	stepDrag       stepKind = "drag"
	stepMouseDown  stepKind = "mouse_down"
	stepMouseUp    stepKind = "mouse_up"
	stepType       stepKind = "type"
	stepKey        stepKind = "key"
	stepHold       stepKind = "hold_key"
	stepScroll     stepKind = "scroll"
	stepWait       stepKind = "wait"
	stepCursor     stepKind = "cursor"
	stepNavigate   stepKind = "navigate"
	stepBack       stepKind = "back"
	stepForward    stepKind = "forward"
)

// maxPath bounds the points of one drag.
const maxPath = 100

// settle is how long a page is given to react to an input before the screenshot that
// shows the model what it did (the OpenAI and Gemini loops send one after every action).
var settle = 400 * time.Millisecond

// check reports what is wrong with s on a w x h screen, before anything is done: a step the
// model aimed off the screen, or gave too little for, is its error to fix.
func (s step) check(w, h int) error {
	if s.at != nil {
		if err := onScreen(*s.at, w, h); err != nil {
			return err
		}
	}
	switch s.kind {
	case stepMove:
		if s.at == nil {
			return errors.New("move needs a point")
		}
	case stepDrag:
		if len(s.path) < 1 || len(s.path) > maxPath {
			return fmt.Errorf("a drag goes through 2 to %d points, not %d", maxPath+1, len(s.path)+1)
		}
		for _, p := range s.path {
			if err := onScreen(p, w, h); err != nil {
				return err
			}
		}
	}
	return nil
}

// do carries out s on d. It returns a screenshot (a screenshot step) or a line saying what
// was done; an error is for the model to read.
func do(ctx context.Context, d *desktop.Desktop, s step) (png []byte, text string, err error) {
	if err := s.check(d.Size()); err != nil {
		return nil, "", err
	}
	where := func() (int, int, error) {
		if s.at != nil {
			return s.at.x, s.at.y, nil
		}
		return d.Cursor(ctx)
	}
	switch s.kind {
	case stepScreenshot:
		png, err = d.Screenshot(ctx)
		return png, "", err
	case stepClick:
		x, y, err := where()
		if err != nil {
			return nil, "", err
		}
		return nil, fmt.Sprintf("%s-clicked at (%d, %d)", s.button, x, y), d.Click(ctx, x, y, s.button, s.count)
	case stepMove:
		return nil, fmt.Sprintf("moved to (%d, %d)", s.at.x, s.at.y), d.Move(ctx, s.at.x, s.at.y)
	case stepDrag:
		x, y, err := where()
		if err != nil {
			return nil, "", err
		}
		end := s.path[len(s.path)-1]
		return nil, fmt.Sprintf("dragged from (%d, %d) to (%d, %d)", x, y, end.x, end.y), drag(ctx, d, append([]point{{x, y}}, s.path...))
	case stepMouseDown, stepMouseUp:
		return nil, string(s.kind), d.Press(ctx, s.kind == stepMouseDown)
	case stepType:
		return nil, fmt.Sprintf("typed %d characters", len([]rune(s.text))), d.Type(ctx, s.text)
	case stepKey:
		return nil, "pressed " + s.text, d.Key(ctx, s.text, "")
	case stepHold:
		if err = d.Key(ctx, s.text, "down"); err == nil {
			_ = d.Wait(ctx, s.dur)
			err = d.Key(ctx, s.text, "up")
		}
		return nil, "held " + s.text, err
	case stepScroll:
		x, y := 0, 0
		if s.at != nil {
			x, y = s.at.x, s.at.y
		} else {
			w, h := d.Size()
			x, y = w/2, h/2
		}
		return nil, fmt.Sprintf("scrolled %s by %d", s.dir, s.amount), d.Scroll(ctx, x, y, s.dir, s.amount)
	case stepWait:
		return nil, "waited", d.Wait(ctx, s.dur)
	case stepCursor:
		x, y, err := d.Cursor(ctx)
		return nil, fmt.Sprintf("X=%d,Y=%d", x, y), err
	case stepNavigate:
		// The browser's own navigation: the policy is checked before anything is requested.
		if _, err := d.Browser().Navigate(ctx, s.text); err != nil {
			return nil, "", err
		}
		return nil, "opened " + s.text, nil
	case stepBack, stepForward:
		if err := d.Browser().History(ctx, s.kind == stepBack); err != nil {
			return nil, "", err
		}
		return nil, "went " + string(s.kind), nil
	}
	return nil, "", fmt.Errorf("unknown step %q", s.kind)
}

// drag holds the left button down along path: one xdotool call for a straight drag.
func drag(ctx context.Context, d *desktop.Desktop, path []point) error {
	if len(path) == 2 {
		return d.Drag(ctx, path[0].x, path[0].y, path[1].x, path[1].y)
	}
	if err := d.Move(ctx, path[0].x, path[0].y); err != nil {
		return err
	}
	if err := d.Press(ctx, true); err != nil {
		return err
	}
	var err error
	for _, p := range path[1:] {
		if err = d.Move(ctx, p.x, p.y); err != nil {
			break
		}
	}
	// The button is let go whatever happened, so that the next step starts clean.
	return errors.Join(err, d.Press(context.WithoutCancel(ctx), false))
}

// onScreen checks p against a w x h screen, before anything is done: a step the model
// aimed off the screen is its error to fix.
func onScreen(p point, w, h int) error {
	if p.x < 0 || p.y < 0 || p.x >= w || p.y >= h {
		return fmt.Errorf("(%d, %d) is off the %dx%d screen", p.x, p.y, w, h)
	}
	return nil
}

// keyNames are the key names OpenAI's and Gemini's models use (DOM and Playwright names,
// upper or lower case) as X keysyms, which xdotool takes.
var keyNames = map[string]string{
	"enter": "Return", "return": "Return", "esc": "Escape", "escape": "Escape", "tab": "Tab",
	"space": "space", " ": "space", "backspace": "BackSpace", "delete": "Delete", "del": "Delete",
	"insert": "Insert", "home": "Home", "end": "End", "pageup": "Page_Up", "pagedown": "Page_Down",
	"arrowup": "Up", "arrowdown": "Down", "arrowleft": "Left", "arrowright": "Right",
	"up": "Up", "down": "Down", "left": "Left", "right": "Right", "capslock": "Caps_Lock",
	"ctrl": "ctrl", "control": "ctrl", "shift": "shift", "alt": "alt", "option": "alt",
	"meta": "super", "cmd": "super", "command": "super", "super": "super", "win": "super",
	"/": "slash", "\\": "backslash", ".": "period", ",": "comma", "-": "minus", "+": "plus",
	"=": "equal", ";": "semicolon", "'": "apostrophe", "`": "grave", "[": "bracketleft", "]": "bracketright",
}

// keysym reports whether k is a plain keysym name (F5, Return) or a single letter or digit.
func keysym(k string) bool {
	if k == "" || len(k) > 40 {
		return false
	}
	for _, c := range k {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// keyCombo joins key names, as a model gives them, into one xdotool combination.
func keyCombo(keys []string) (string, error) {
	if len(keys) == 0 || len(keys) > 8 {
		return "", fmt.Errorf("give 1 to 8 keys to press together, not %d", len(keys))
	}
	out := make([]string, len(keys))
	for i, k := range keys {
		name, ok := keyNames[strings.ToLower(k)]
		switch {
		case ok:
		case len(k) == 1 && keysym(k):
			// A letter is the key, not the character: ctrl+A must not add shift.
			name = strings.ToLower(k)
		case keysym(k):
			name = k
		default:
			return "", fmt.Errorf("%q is not a key name such as Enter, Control, ArrowDown or a", clip(k, 40))
		}
		out[i] = name
	}
	return strings.Join(out, "+"), nil
}

// screenshot takes a screenshot for the model, saves it in the workspace and shows it.
func screenshot(ctx context.Context, d *desktop.Desktop, dir string) ([]byte, error) {
	png, err := d.Screenshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("screenshot: %w", err)
	}
	shot(ctx, dir, png)
	return png, nil
}

// shot saves a screenshot in the workspace and shows it.
func shot(ctx context.Context, dir string, png []byte) {
	if rel, err := browser.SaveScreenshot(dir, "", png); err == nil {
		tool.Image(ctx)(rel, png)
	}
}

// pause waits for the page to react to what was done, or for ctx.
func pause(ctx context.Context) {
	t := time.NewTimer(settle)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
