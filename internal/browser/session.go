package browser

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"massgen/internal/netproxy"
)

// Defaults of Options.
const (
	DefaultWidth         = 1280
	DefaultHeight        = 800
	DefaultNavTimeout    = 30 * time.Second
	DefaultElementWait   = 10 * time.Second
	DefaultMaxText       = 20000    // characters of page text one call returns
	DefaultMaxScreenshot = 8 << 20  // bytes of one screenshot
	DefaultMaxDownload   = 64 << 20 // bytes of one download
)

// Folders in the agent's workspace.
const (
	ProfileDir    = ".browser"    // Chromium's profile: cookies and storage, kept for the run
	DownloadDir   = "downloads"   // what pages download
	ScreenshotDir = "screenshots" // screenshots the tools save
)

// Options configure one agent's browser.
type Options struct {
	// Dir is the agent's workspace: downloads and screenshots go in it. Required.
	Dir string
	// Profile is Chromium's profile folder (cookies, storage), kept for the run; "" puts it in
	// Dir/.browser. massgen keeps it beside the workspace, in the run's folder, so that the
	// workspace snapshots other agents read do not carry this agent's cookies.
	Profile string
	// Chromium is the browser binary; "" is DefaultChromium.
	Chromium string
	// Width and Height are the viewport in CSS pixels; 0 takes the defaults.
	Width, Height int
	// Policy is where the browser may go; nil allows every host (file: URLs and link-local
	// addresses are refused whatever it says).
	Policy *Policy
	// NavTimeout bounds a page load, ElementWait the wait for an element to appear.
	NavTimeout, ElementWait time.Duration
	// MaxText caps the page text one call returns, MaxScreenshot a screenshot's bytes and
	// MaxDownload a download's.
	MaxText, MaxScreenshot int
	MaxDownload            int64
	// Display, when set, shows the browser in a window on that X display (a virtual desktop)
	// instead of headless; XAuthority is the authority file holding that display's cookie.
	Display, XAuthority string
}

func (o *Options) defaults() {
	if o.Width <= 0 {
		o.Width = DefaultWidth
	}
	if o.Height <= 0 {
		o.Height = DefaultHeight
	}
	if o.NavTimeout <= 0 {
		o.NavTimeout = DefaultNavTimeout
	}
	if o.ElementWait <= 0 {
		o.ElementWait = DefaultElementWait
	}
	if o.MaxText <= 0 {
		o.MaxText = DefaultMaxText
	}
	if o.MaxScreenshot <= 0 {
		o.MaxScreenshot = DefaultMaxScreenshot
	}
	if o.MaxDownload <= 0 {
		o.MaxDownload = DefaultMaxDownload
	}
}

// Session is one agent's browser and its one tab, kept across the agent's calls in a run.
// Its methods are safe for concurrent use; calls run one at a time.
type Session struct {
	o      Options
	chrome *Chrome
	tab    context.Context
	close  context.CancelFunc
	wg     sync.WaitGroup // the request and download watchers

	mu   sync.Mutex // one call at a time
	refs refusals
	dl   *downloads
}

// refusals remembers why recent requests were refused, so that a failed navigation says
// which rule stopped it rather than Chromium's net::ERR_BLOCKED_BY_CLIENT.
type refusals struct {
	mu   sync.Mutex
	last map[string]string
}

func (r *refusals) add(u, why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil || len(r.last) > 256 {
		r.last = map[string]string{}
	}
	r.last[u] = why
}

func (r *refusals) why(u string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last[u]
}

// Open starts the browser and opens its tab. ctx bounds the start.
func Open(ctx context.Context, o Options) (*Session, error) {
	o.defaults()
	if o.Dir == "" {
		return nil, errors.New("browser: no workspace")
	}
	profile := o.Profile
	if profile == "" {
		profile = filepath.Join(o.Dir, ProfileDir)
	}
	c, err := startChrome(ctx, launch{bin: o.Chromium, profile: profile, width: o.Width, height: o.Height,
		headless: o.Display == "", display: o.Display, xauth: o.XAuthority, policy: o.Policy})
	if err != nil {
		return nil, err
	}
	s := &Session{o: o, chrome: c, dl: newDownloads(filepath.Join(o.Dir, DownloadDir), o.MaxDownload)}
	s.tab, s.close = c.NewTab()
	if err := s.setUp(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("setting up the browser: %w", err)
	}
	return s, nil
}

// setUp opens the tab, sizes its viewport and installs the request policy and the download
// caps before any page loads.
func (s *Session) setUp(ctx context.Context) error {
	// The first call attaches the tab; its context must be the tab's own (no deadline), as
	// the tab lives as long as the context of that call.
	if err := chromedp.Do(s.tab); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, s.close) // a start cut short ends the tab
	defer stop()
	paused := chromedp.Events(s.tab, fetch.RequestPaused)
	challenged := chromedp.Events(s.tab, fetch.AuthRequired)
	handleAuth := true
	if _, err := chromedp.Call(s.tab, fetch.Enable, fetch.EnableParams{HandleAuthRequests: &handleAuth,
		// Plain http answers are paused too: the proxy's refusals come back as answers there.
		Patterns: []*fetch.RequestPattern{{URLPattern: "*"}, {URLPattern: "http://*", RequestStage: fetch.RequestStageResponse}}}); err != nil {
		return err
	}
	s.wg.Go(func() { s.filter(paused) })
	s.wg.Go(func() { s.answerGate(challenged) })
	if err := s.dl.watch(s.tab, &s.wg); err != nil {
		return err
	}
	if s.o.Display == "" {
		_, err := chromedp.Call(s.tab, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
			Width: int64(s.o.Width), Height: int64(s.o.Height), DeviceScaleFactor: 1})
		if err != nil {
			return err
		}
	}
	return nil
}

// filter answers every paused request: refused when the policy says no, let through
// otherwise. It ends with the tab.
func (s *Session) filter(paused iter.Seq2[fetch.EventRequestPaused, error]) {
	for ev, err := range paused {
		if err != nil {
			return
		}
		if ev.ResponseStatusCode != 0 || ev.ResponseErrorReason != "" {
			s.answered(ev)
			continue
		}
		if why := s.o.Policy.Check(ev.Request.URL); why != "" {
			s.refs.add(ev.Request.URL, why)
			_, _ = chromedp.Call(s.tab, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
			continue
		}
		_, _ = chromedp.Call(s.tab, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
	}
}

// answered lets a paused http answer through, unless it is the proxy's own refusal: that
// fails the request as Chromium fails one it could not make, and a refusal by the policy is
// remembered, for the message.
func (s *Session) answered(ev fetch.EventRequestPaused) {
	why := ""
	for _, h := range ev.ResponseHeaders {
		if strings.EqualFold(h.Name, netproxy.RefusedHeader) {
			why = h.Value
		}
	}
	if why == "" {
		_, _ = chromedp.Call(s.tab, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
		return
	}
	reason := network.ErrorReasonConnectionFailed
	switch {
	case ev.ResponseStatusCode == http.StatusForbidden:
		s.refs.add(ev.Request.URL, why)
		reason = network.ErrorReasonBlockedByClient
	case strings.Contains(why, "connection refused"):
		reason = network.ErrorReasonConnectionRefused
	case strings.Contains(why, "no such host"):
		reason = network.ErrorReasonNameNotResolved
	case strings.Contains(why, "timeout"):
		reason = network.ErrorReasonTimedOut
	}
	_, _ = chromedp.Call(s.tab, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: reason})
}

// answerGate gives the session's proxy its password when it asks (proxy.go), and leaves
// every other challenge (a site's own login) to the browser. It ends with the tab.
func (s *Session) answerGate(challenged iter.Seq2[fetch.EventAuthRequired, error]) {
	for ev, err := range challenged {
		if err != nil {
			return
		}
		resp := &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseDefault}
		if c := ev.AuthChallenge; c != nil && c.Source == fetch.AuthChallengeSourceProxy && s.chrome.gate.owns(c.Origin) {
			resp = &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseProvideCredentials,
				Username: s.chrome.gate.user, Password: s.chrome.gate.password}
		}
		_, _ = chromedp.Call(s.tab, fetch.ContinueWithAuth, fetch.ContinueWithAuthParams{RequestID: ev.RequestID, AuthChallengeResponse: resp})
	}
}

// Close ends the tab, the browser and its processes, and waits for them.
func (s *Session) Close() {
	if s.close != nil {
		s.close()
	}
	s.chrome.Close()
	s.wg.Wait()
}

// call runs f with the tab, bounded by ctx and d; a browser that died says so.
func (s *Session) call(ctx context.Context, d time.Duration, f func(tctx context.Context) error) error {
	select {
	case <-s.chrome.Exited():
		return fmt.Errorf("%w: %s", errGone, s.chrome.why())
	default:
	}
	tctx, cancel := context.WithTimeout(s.tab, d)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	err := f(tctx)
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// Navigate loads rawURL and waits for it, at most NavTimeout. A URL the policy refuses is
// not requested at all; a page that does not load in time is stopped.
func (s *Session) Navigate(ctx context.Context, rawURL string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if why := s.o.Policy.Check(rawURL); why != "" {
		return "", fmt.Errorf("not opened: %s", why)
	}
	before := s.dl.count()
	err := s.call(ctx, s.o.NavTimeout, func(tctx context.Context) error { return chromedp.Do(tctx, chromedp.Navigate(rawURL)) })
	var le *chromedp.LoadError
	if errors.As(err, &le) && le.ErrorText == "net::ERR_ABORTED" && s.dl.begun(ctx, before, 5*time.Second) {
		// The URL was a file to download, not a page.
		return s.dl.await(ctx, s.o.NavTimeout)
	}
	return "", s.loadError(rawURL, err)
}

// History goes one page back (or forward) in the tab's history and waits for it, at most
// NavTimeout. The page is requested again through the policy's proxy like any other.
func (s *Session) History(ctx context.Context, back bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	step, which := int64(1), "forward"
	if back {
		step, which = -1, "back"
	}
	err := s.call(ctx, s.o.NavTimeout, func(tctx context.Context) error {
		h, err := chromedp.Call(tctx, page.GetNavigationHistory, cdp.Empty{})
		if err != nil {
			return err
		}
		i := h.CurrentIndex + step
		if i < 0 || i >= int64(len(h.Entries)) {
			return fmt.Errorf("there is no page to go %s to", which)
		}
		if _, err := chromedp.Call(tctx, page.NavigateToHistoryEntry, page.NavigateToHistoryEntryParams{EntryID: h.Entries[i].ID}); err != nil {
			return err
		}
		// A page restored from the back-forward cache fires no load event: wait until the
		// tab shows the entry, loaded.
		for {
			now, err := chromedp.Call(tctx, page.GetNavigationHistory, cdp.Empty{})
			if err == nil && now.CurrentIndex == i {
				if state, err := chromedp.Run(tctx, chromedp.Evaluate[string]("document.readyState")); err == nil && state == "complete" {
					return nil
				}
			}
			select {
			case <-tctx.Done():
				return tctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		_, _ = chromedp.Call(s.tab, page.StopLoading, cdp.Empty{})
		return fmt.Errorf("the page %s did not load within %s; it was stopped", which, s.o.NavTimeout)
	}
	return err
}

// loadError is a failed load as the model should read it.
func (s *Session) loadError(rawURL string, err error) error {
	var le *chromedp.LoadError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.DeadlineExceeded):
		// Stop the load, so the tab is usable for the next call.
		_, _ = chromedp.Call(s.tab, page.StopLoading, cdp.Empty{})
		return fmt.Errorf("%s did not load within %s; it was stopped (is the server up and answering?)", rawURL, s.o.NavTimeout)
	case errors.Is(err, context.Canceled):
		return err
	case errors.As(err, &le):
		if why := s.refs.why(rawURL); why != "" {
			return fmt.Errorf("refused by the browser: %s", why)
		}
		return fmt.Errorf("cannot open %s: %s (check the URL, and that the server is reachable)", rawURL, le.ErrorText)
	}
	return fmt.Errorf("cannot open %s: %w", rawURL, err)
}

// Click clicks the first element selector matches, waiting for it at most ElementWait, and
// then for the page it may load.
func (s *Session) Click(ctx context.Context, selector string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settle(ctx, func(tctx context.Context) error {
		return s.element(tctx, selector, chromedp.Click(chromedp.CSS(selector), chromedp.NodeVisible))
	})
}

// Type replaces the value of the first element selector matches with text, typed key by key
// so that the page's input handlers run.
func (s *Session) Type(ctx context.Context, selector, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.call(ctx, s.o.ElementWait+time.Duration(len(text))*10*time.Millisecond, func(tctx context.Context) error {
		return s.element(tctx, selector, chromedp.Steps(
			chromedp.Clear(chromedp.CSS(selector), chromedp.NodeVisible),
			chromedp.SendKeys(chromedp.CSS(selector), text, chromedp.NodeVisible)))
	})
}

// element runs a on the element selector matches, waiting for it at most ElementWait.
func (s *Session) element(tctx context.Context, selector string, a chromedp.Action[chromedp.Void]) error {
	wctx, cancel := context.WithTimeout(tctx, s.o.ElementWait)
	defer cancel()
	if err := chromedp.Do(wctx, chromedp.WaitReady(chromedp.CSS(selector))); err != nil {
		if tctx.Err() == nil && wctx.Err() != nil {
			return fmt.Errorf("no element matches %q (waited %s)", selector, s.o.ElementWait)
		}
		return err
	}
	return chromedp.Do(tctx, a)
}

// settle runs f and, when it started a page load (a link, a form), waits for that page too.
func (s *Session) settle(ctx context.Context, f func(tctx context.Context) error) error {
	return s.call(ctx, s.o.ElementWait+s.o.NavTimeout, func(tctx context.Context) error {
		started := chromedp.Events(tctx, page.FrameStartedNavigating)
		loaded := chromedp.Events(tctx, page.LoadEventFired)
		if err := f(tctx); err != nil {
			return err
		}
		soon, cancel := context.WithTimeout(tctx, 500*time.Millisecond)
		defer cancel()
		nav := false
		for _, err := range withContext(soon, started) {
			nav = err == nil
			break
		}
		if !nav {
			return nil
		}
		lctx, lcancel := context.WithTimeout(tctx, s.o.NavTimeout)
		defer lcancel()
		for _, err := range withContext(lctx, loaded) {
			if err != nil && tctx.Err() == nil {
				return fmt.Errorf("the page the click opened did not load within %s", s.o.NavTimeout)
			}
			break
		}
		return nil
	})
}

// withContext ends seq when ctx ends, with ctx's error.
func withContext[E any](ctx context.Context, seq iter.Seq2[E, error]) iter.Seq2[E, error] {
	return func(yield func(E, error) bool) {
		ch := make(chan struct {
			e   E
			err error
		}, 1)
		done := make(chan struct{})
		defer close(done)
		go func() { // ends when seq gives a value, or its own context ends
			for e, err := range seq {
				select {
				case ch <- struct {
					e   E
					err error
				}{e, err}:
				case <-done:
				}
				return
			}
		}()
		select {
		case v := <-ch:
			yield(v.e, v.err)
		case <-ctx.Done():
			var zero E
			yield(zero, ctx.Err())
		}
	}
}

// Extract returns the text of the elements selector matches (at most maxElements of them),
// capped at MaxText characters in all; cut says whether anything was left out.
func (s *Session) Extract(ctx context.Context, selector string) (texts []string, cut bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	type out struct {
		Texts []string `json:"texts"`
		More  bool     `json:"more"`
	}
	var r out
	err = s.call(ctx, s.o.ElementWait+5*time.Second, func(tctx context.Context) error {
		if err := s.element(tctx, selector, chromedp.Steps()); err != nil {
			return err
		}
		js := fmt.Sprintf(`(() => { const all = Array.from(document.querySelectorAll(%s)); let left = %d; const texts = [];
			for (const e of all.slice(0, %d)) { let t = (e.innerText ?? e.textContent ?? '').trim(); if (!t) continue;
			  if (t.length > left) { t = t.slice(0, left); } texts.push(t); left -= t.length; if (left <= 0) break; }
			return {texts, more: all.length > %d || left <= 0}; })()`, jsString(selector), s.o.MaxText, maxElements, maxElements)
		var err error
		r, err = chromedp.Run(tctx, chromedp.Evaluate[out](js))
		return err
	})
	return r.Texts, r.More, err
}

// maxElements is how many elements Extract reads, as MassGen's tool does.
const maxElements = 10

func jsString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x2028 || r == 0x2029:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Screenshot captures the viewport as PNG, at most MaxScreenshot bytes.
func (s *Session) Screenshot(ctx context.Context) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.screenshot(ctx)
}

func (s *Session) screenshot(ctx context.Context) ([]byte, error) {
	var png []byte
	err := s.call(ctx, 30*time.Second, func(tctx context.Context) error {
		var err error
		png, err = chromedp.Run(tctx, chromedp.CaptureScreenshot())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("screenshot: %w", err)
	}
	if len(png) > s.o.MaxScreenshot {
		return nil, fmt.Errorf("the screenshot is %d bytes, over the cap of %d", len(png), s.o.MaxScreenshot)
	}
	return png, nil
}

// Page returns the tab's URL and title.
func (s *Session) Page(ctx context.Context) (url, title string) {
	_ = s.call(ctx, 5*time.Second, func(tctx context.Context) error {
		url, _ = chromedp.Run(tctx, chromedp.Location())
		title, _ = chromedp.Run(tctx, chromedp.Title())
		return nil
	})
	return clip(url, 2000), clip(title, 500)
}

// Size is the viewport.
func (s *Session) Size() (w, h int) { return s.o.Width, s.o.Height }

// SaveScreenshot writes png into the workspace's screenshots folder as name (a plain file
// name; "" picks shot-NNN.png) and returns its path relative to the workspace. It writes
// through an os.Root on the workspace: a link the agent planted cannot lead it outside.
func SaveScreenshot(dir, name string, png []byte) (string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	if err := root.MkdirAll(ScreenshotDir, 0o755); err != nil {
		return "", err
	}
	if name == "" {
		for i := 1; ; i++ {
			name = fmt.Sprintf("shot-%03d.png", i)
			if _, err := root.Lstat(filepath.Join(ScreenshotDir, name)); errors.Is(err, os.ErrNotExist) {
				break
			}
		}
	}
	rel := filepath.Join(ScreenshotDir, name)
	if err := root.WriteFile(rel, png, 0o644); err != nil {
		return "", err
	}
	return rel, nil
}
