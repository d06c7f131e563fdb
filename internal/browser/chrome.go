// Package browser is the Chromium that MassGen's browser tools drive: browser_automation
// (navigate, click, type, extract, screenshot; any model) and the pages the computer-use tools
// look at. Chromium runs headless as a child process tree (internal/childproc: nothing
// outlives the run, an allow-listed environment, no keys), its profile and downloads live in
// the agent's workspace, and it is driven through the DevTools protocol with chromedp. The
// domains a config allows or blocks are enforced on every connection Chromium makes, by a
// proxy of the session's own (proxy.go); the page's requests are also paused (the Fetch
// domain) so that a refusal says which rule refused, and pages cannot open windows of their own. Page text, screenshots and
// downloads are capped, and every wait is bounded.
package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"massgen/internal/childproc"
)

// DefaultChromium is Debian's chromium, the browser massgen drives; it never downloads one.
const DefaultChromium = "/usr/bin/chromium"

// startWait bounds how long Chromium may take to say where its DevTools endpoint is.
const startWait = 30 * time.Second

// envNames are the variables Chromium gets from massgen's environment besides the ones set
// here: where things are and how to print them, never a key.
var envNames = []string{"PATH", "LANG", "LANGUAGE", "TZ", "FONTCONFIG_PATH", "FONTCONFIG_FILE"}

// Chrome is one running Chromium: a process tree and the DevTools connection to it.
type Chrome struct {
	gate    *gate // every connection's way out
	cmd     *childproc.Cmd
	tail    *childproc.Tail
	alloc   context.Context
	cancel  context.CancelFunc // ends the connection
	exited  chan struct{}      // closed once the process tree has ended
	closeMu sync.Once
}

// launch is how to start one Chromium.
type launch struct {
	bin      string
	profile  string // its user data folder (created)
	width    int
	height   int
	headless bool
	display  string // DISPLAY for a visible window on a virtual desktop; "" for none
	xauth    string // XAUTHORITY: the file with that display's cookie
	policy   *Policy
	extra    []string // more flags, for the desktop
	startURL string
}

func (l launch) args(g *gate, noSandbox bool) []string {
	a := []string{
		"--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1",
		"--user-data-dir=" + l.profile,
		// Without these Chromium keeps dialling Google's services and fails offline.
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--no-first-run", "--no-default-browser-check", "--disable-default-apps", "--disable-extensions",
		"--disable-breakpad", "--disable-crash-reporter", "--metrics-recording-only", "--no-pings",
		"--disable-domain-reliability", "--disable-client-side-phishing-detection",
		"--disable-features=Translate,OptimizationHints,MediaRouter,AutofillServerCommunication,DialMediaRouteProvider",
		"--password-store=basic", "--use-mock-keychain", "--mute-audio", "--disable-dev-shm-usage",
		"--disable-gpu",
		// A page cannot open windows (window.open, target=_blank): the request policy is set
		// on the one tab massgen drives, and a second tab would escape it.
		"--block-new-web-contents",
		fmt.Sprintf("--window-size=%d,%d", l.width, l.height),
	}
	if l.headless {
		a = append(a, "--headless=new", "--hide-scrollbars")
	} else {
		// A window with its address bar, as a person's browser: the model can type a URL.
		a = append(a, "--window-position=0,0")
	}
	if noSandbox {
		a = append(a, "--no-sandbox")
	}
	a = append(a, g.args()...)
	a = append(a, l.extra...)
	start := l.startURL
	if start == "" {
		start = "about:blank"
	}
	return append(a, start)
}

// startChrome starts Chromium and connects to it. ctx bounds the start only; Close ends it.
func startChrome(ctx context.Context, l launch) (*Chrome, error) {
	if l.bin == "" {
		l.bin = DefaultChromium
	}
	if _, err := os.Stat(l.bin); err != nil {
		return nil, fmt.Errorf("the browser %s is not installed (Debian: apt-get install chromium): %w", l.bin, err)
	}
	if err := os.MkdirAll(l.profile, 0o700); err != nil {
		return nil, fmt.Errorf("the browser's profile folder: %w", err)
	}
	// Chromium's own sandbox needs privileges massgen does not have as root; it runs instead
	// in massgen's namespaces (its own user, PID and mount namespaces), where it sees only
	// its own processes.
	confined, _ := childproc.Confinement()
	noSandbox := confined || os.Geteuid() == 0
	g, err := startGate(l.policy)
	if err != nil {
		return nil, err
	}
	cmd := childproc.Command(nil, childproc.Confined, l.bin, l.args(g, noSandbox)...)
	cmd.Env = chromeEnv(l)
	cmd.Dir = l.profile
	cmd.WaitDelay = 2 * time.Second
	pipes, err := cmd.StartPiped(false)
	if err != nil {
		_ = g.Close()
		return nil, fmt.Errorf("starting the browser: %w", err)
	}
	c := &Chrome{gate: g, cmd: cmd, tail: childproc.NewTail(8), exited: make(chan struct{})}
	wsURL := make(chan string, 1)
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { // ends when Chromium closes its stderr (at its end, or Kill)
		defer readers.Done()
		childproc.ReadLines(pipes.Stderr, 4096, func(line string) {
			if u, ok := strings.CutPrefix(line, "DevTools listening on "); ok {
				select {
				case wsURL <- strings.TrimSpace(u):
				default:
				}
				return
			}
			c.tail.Add(line)
		})
		_ = pipes.Stderr.Close()
	}()
	go func() { // Chromium writes next to nothing on stdout; drained so it never blocks
		defer readers.Done()
		childproc.ReadLines(pipes.Stdout, 4096, func(string) {})
		_ = pipes.Stdout.Close()
	}()
	go func() { // owns the process and its proxy: reaps it once it ends, whoever ended it
		cmd.Await()
		readers.Wait()
		cmd.Wait()
		_ = g.Close()
		close(c.exited)
	}()
	wait := time.NewTimer(startWait)
	defer wait.Stop()
	var u string
	select {
	case u = <-wsURL:
	case <-c.exited:
		return nil, fmt.Errorf("the browser ended as it started: %s", c.why())
	case <-wait.C:
		c.Close()
		return nil, fmt.Errorf("the browser did not start within %s: %s", startWait, c.why())
	case <-ctx.Done():
		c.Close()
		return nil, fmt.Errorf("starting the browser: %w", ctx.Err())
	}
	c.alloc, c.cancel = remote.NewAllocator(context.Background(), u, remote.NoModifyURL)
	return c, nil
}

// chromeEnv is Chromium's whole environment: massgen's allow-listed variables, a HOME and
// cache in the profile folder, and the display when it has one.
func chromeEnv(l launch) []string {
	var env []string
	for _, n := range envNames {
		if v, ok := os.LookupEnv(n); ok {
			env = append(env, n+"="+v)
		}
	}
	env = append(env, "HOME="+l.profile, "XDG_CONFIG_HOME="+filepath.Join(l.profile, ".config"),
		"XDG_CACHE_HOME="+filepath.Join(l.profile, ".cache"), "TMPDIR="+os.TempDir())
	if l.display != "" {
		env = append(env, "DISPLAY="+l.display)
	}
	if l.xauth != "" {
		env = append(env, "XAUTHORITY="+l.xauth)
	}
	return env
}

// why is what Chromium last said on stderr, for a message.
func (c *Chrome) why() string {
	if s := c.tail.String(); s != "" {
		return s
	}
	return "it said nothing"
}

// NewTab opens a tab: a chromedp context on it. The tab lives until its cancel or Close.
func (c *Chrome) NewTab() (context.Context, context.CancelFunc) {
	return chromedp.NewContext(c.alloc)
}

// Exited is closed once the browser's processes have ended.
func (c *Chrome) Exited() <-chan struct{} { return c.exited }

// Close ends the connection and the whole process tree, and waits for it.
func (c *Chrome) Close() {
	c.closeMu.Do(func() {
		if c.cancel != nil {
			c.cancel()
		}
		c.cmd.Kill()
		<-c.exited
	})
}

// errGone says the browser died under a call.
var errGone = errors.New("the browser has stopped")
