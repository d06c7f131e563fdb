// Package desktop is the virtual X display the computer-use tools look at and act on: an Xvfb
// server massgen starts per agent (Xvfb picks a free display number and reports it), with
// Chromium in a full-screen window on it (internal/browser); the mouse and keyboard are driven
// with xdotool and the screen is read with xwd, whose image is decoded here. The display takes
// only clients that hold its cookie (xauth.go), and listens on no TCP port. Every program runs
// as a child process tree (internal/childproc) with only DISPLAY, XAUTHORITY and PATH in its
// environment, and Close ends them all.
package desktop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"massgen/internal/browser"
	"massgen/internal/childproc"
)

// Programs the desktop needs (Debian: xvfb, xdotool, x11-apps).
const (
	Xvfb    = "Xvfb"
	Xdotool = "xdotool"
	Xwd     = "xwd"
)

// Missing names the programs the desktop needs that are not installed, or "".
func Missing() string {
	var miss []string
	for _, p := range []string{Xvfb, Xdotool, Xwd} {
		if _, err := exec.LookPath(p); err != nil {
			miss = append(miss, p)
		}
	}
	if len(miss) == 0 {
		return ""
	}
	return strings.Join(miss, ", ") + " (Debian: apt-get install xvfb xdotool x11-apps)"
}

// Options configure one desktop.
type Options struct {
	// Width and Height are the screen in pixels; 0 takes 1024x768, MassGen's default.
	Width, Height int
	// Browser configures the Chromium shown on the desktop; its Display is set here.
	Browser browser.Options
	// StartURL is the page Chromium opens first ("" for a blank page).
	StartURL string
}

// maxScreenshot bounds xwd's output (a 32-bit image of the screen and its header).
const maxScreenshot = 64 << 20

// Desktop is one running virtual display with a browser on it. Its methods are safe for
// concurrent use; actions run one at a time.
type Desktop struct {
	w, h    int
	display string
	dir     string // private: the authority file
	xauth   string // the authority file
	xvfb    *childproc.Cmd
	exited  chan struct{}
	browser *browser.Session
	mu      sync.Mutex
	once    sync.Once
}

// Start starts Xvfb on a display it picks, and Chromium on it.
func Start(ctx context.Context, o Options) (*Desktop, error) {
	if m := Missing(); m != "" {
		return nil, fmt.Errorf("the virtual desktop needs %s", m)
	}
	if o.Width <= 0 || o.Height <= 0 {
		o.Width, o.Height = 1024, 768
	}
	if o.Width > 4096 || o.Height > 4096 {
		return nil, fmt.Errorf("a %dx%d screen is too large (at most 4096x4096)", o.Width, o.Height)
	}
	cookie, err := newCookie()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "massgen-x11-")
	if err != nil {
		return nil, fmt.Errorf("the display's private folder: %w", err)
	}
	d := &Desktop{w: o.Width, h: o.Height, dir: dir, xauth: filepath.Join(dir, "Xauthority"), exited: make(chan struct{})}
	if err := writeXauth(d.xauth, "", cookie); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	// -displayfd: Xvfb picks a free display number itself and writes it once it accepts
	// clients, so two agents (or two runs) never race for one.
	cmd := childproc.Command(nil, childproc.Confined, Xvfb, "-displayfd", "1", "-auth", d.xauth, "-nolisten", "tcp",
		"-screen", "0", fmt.Sprintf("%dx%dx24", o.Width, o.Height), "-nocursor")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	pipes, err := cmd.StartPiped(false)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("starting Xvfb: %w", err)
	}
	d.xvfb = cmd
	tail := childproc.NewTail(5)
	num := make(chan string, 1)
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { // ends when Xvfb closes its stdout
		defer readers.Done()
		childproc.ReadLines(pipes.Stdout, 64, func(l string) {
			select {
			case num <- strings.TrimSpace(l):
			default:
			}
		})
		_ = pipes.Stdout.Close()
	}()
	go func() { // ends when Xvfb closes its stderr
		defer readers.Done()
		childproc.ReadLines(pipes.Stderr, 1024, tail.Add)
		_ = pipes.Stderr.Close()
	}()
	go func() { // reaps Xvfb, whoever ends it
		cmd.Await()
		readers.Wait()
		cmd.Wait()
		close(d.exited)
	}()
	wait := time.NewTimer(30 * time.Second)
	defer wait.Stop()
	select {
	case n := <-num:
		if _, err := strconv.Atoi(n); err != nil {
			d.Close()
			return nil, fmt.Errorf("Xvfb named no display (%q): %s", n, tail.String())
		}
		d.display = ":" + n
		// Now that the number is known, the entry names it, as every Xlib finds it by.
		if err := writeXauth(d.xauth, n, cookie); err != nil {
			d.Close()
			return nil, err
		}
	case <-d.exited:
		d.Close()
		return nil, fmt.Errorf("Xvfb ended as it started: %s", tail.String())
	case <-wait.C:
		d.Close()
		return nil, fmt.Errorf("Xvfb did not start within 30s: %s", tail.String())
	case <-ctx.Done():
		d.Close()
		return nil, ctx.Err()
	}
	bo := o.Browser
	bo.Display, bo.XAuthority, bo.Width, bo.Height = d.display, d.xauth, o.Width, o.Height
	if d.browser, err = browser.Open(ctx, bo); err != nil {
		d.Close()
		return nil, fmt.Errorf("the desktop's browser: %w", err)
	}
	if o.StartURL != "" {
		if _, err := d.browser.Navigate(ctx, o.StartURL); err != nil {
			d.Close()
			return nil, err
		}
	}
	return d, nil
}

// Display is the X display, such as ":99".
func (d *Desktop) Display() string { return d.display }

// Size is the screen in pixels.
func (d *Desktop) Size() (w, h int) { return d.w, d.h }

// Browser is the Chromium on the desktop.
func (d *Desktop) Browser() *browser.Session { return d.browser }

// Close ends the browser and the display, and waits for them.
func (d *Desktop) Close() {
	d.once.Do(func() {
		if d.browser != nil {
			d.browser.Close()
		}
		if d.xvfb != nil {
			d.xvfb.Kill()
			<-d.exited
		}
		_ = os.RemoveAll(d.dir)
	})
}

// run runs one X client program on the display, bounded by ctx and 30 s, and returns its
// output (at most max bytes).
func (d *Desktop) run(ctx context.Context, max int64, name string, args ...string) ([]byte, error) {
	select {
	case <-d.exited:
		return nil, errors.New("the virtual display has stopped")
	default:
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := childproc.Command(ctx, childproc.Confined, name, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "DISPLAY=" + d.display, "XAUTHORITY=" + d.xauth}
	cmd.WaitDelay = time.Second
	var out, errb capped
	out.max, errb.max = max, 4096
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	st := cmd.Wait()
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("%s: %w", name, ctx.Err())
	case out.over:
		return nil, fmt.Errorf("%s wrote more than %d bytes", name, max)
	case !st.Success():
		return nil, fmt.Errorf("%s: %s: %s", name, st, strings.TrimSpace(errb.b.String()))
	}
	return out.b.Bytes(), nil
}

// capped keeps at most max bytes and notes that more came.
type capped struct {
	b    bytes.Buffer
	max  int64
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if left := c.max - int64(c.b.Len()); int64(len(p)) > left {
		c.b.Write(p[:max(left, 0)])
		c.over = true
		return len(p), nil
	}
	return c.b.Write(p)
}

var _ io.Writer = (*capped)(nil)
