package browser

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// downloads puts what pages download into the workspace's downloads folder, under the name
// the page suggests, and refuses any larger than its cap: one whose size is announced
// over it at once, one that grows past it as soon as its file does (the file is watched, not
// only Chromium's progress reports, which come a few times a second). A refused download's
// partial file is deleted.
type downloads struct {
	dir string
	max int64

	mu      sync.Mutex
	started int
	last    chan result // the outcome of the newest download
	active  map[string]*download
}

type download struct {
	name   string
	done   chan result
	cancel context.CancelFunc // stops its file watcher
}

type result struct {
	rel string
	n   int64
	err error
}

func newDownloads(dir string, max int64) *downloads {
	return &downloads{dir: dir, max: max, active: map[string]*download{}}
}

func (d *downloads) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.started
}

// begun waits, at most wait, for more than before downloads to have started: Chromium tells
// of a download a moment after the navigation that caused it has failed.
func (d *downloads) begun(ctx context.Context, before int, wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for d.count() <= before {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// watch makes Chromium save downloads into d.dir under their ids and follows them until tab
// ends.
func (d *downloads) watch(tab context.Context, wg *sync.WaitGroup) error {
	if err := os.MkdirAll(d.dir, 0o755); err != nil {
		return err
	}
	begin := chromedp.BrowserEvents(tab, cdpbrowser.DownloadWillBegin)
	progress := chromedp.BrowserEvents(tab, cdpbrowser.DownloadProgress)
	on := true
	if _, err := chromedp.CallBrowser(tab, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
		Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: d.dir, EventsEnabled: &on}); err != nil {
		return err
	}
	wg.Go(func() {
		for ev, err := range begin {
			if err != nil {
				return
			}
			d.begin(tab, wg, ev.GUID, ev.SuggestedFilename)
		}
	})
	wg.Go(func() {
		for ev, err := range progress {
			if err != nil {
				return
			}
			d.progress(tab, ev)
		}
	})
	return nil
}

func (d *downloads) begin(tab context.Context, wg *sync.WaitGroup, guid, suggested string) {
	ctx, cancel := context.WithCancel(tab)
	dl := &download{name: safeName(suggested), done: make(chan result, 1), cancel: cancel}
	d.mu.Lock()
	d.started++
	d.active[guid] = dl
	d.last = dl.done
	d.mu.Unlock()
	wg.Go(func() { // ends with the download, or the tab
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if st, err := os.Stat(filepath.Join(d.dir, guid)); err == nil && st.Size() > d.max {
				d.refuse(tab, guid, st.Size())
				return
			}
		}
	})
}

func (d *downloads) progress(tab context.Context, ev cdpbrowser.EventDownloadProgress) {
	switch {
	case ev.State == cdpbrowser.DownloadProgressStateInProgress && (int64(ev.TotalBytes) > d.max || int64(ev.ReceivedBytes) > d.max):
		d.refuse(tab, ev.GUID, max(int64(ev.TotalBytes), int64(ev.ReceivedBytes)))
	case ev.State == cdpbrowser.DownloadProgressStateCompleted:
		d.finish(ev.GUID, int64(ev.ReceivedBytes))
	case ev.State == cdpbrowser.DownloadProgressStateCanceled:
		d.end(ev.GUID, result{err: fmt.Errorf("the download was cancelled")})
	}
}

// refuse cancels a download over the cap and deletes what it wrote.
func (d *downloads) refuse(tab context.Context, guid string, n int64) {
	_, _ = chromedp.CallBrowser(tab, cdpbrowser.CancelDownload, cdpbrowser.CancelDownloadParams{GUID: guid})
	d.end(guid, result{err: fmt.Errorf("the download was refused: it is larger than the cap of %d bytes (%d bytes or more)", d.max, n)})
	// Chromium may still be writing: remove the file once it has let go of it, and again.
	for range 3 {
		_ = os.Remove(filepath.Join(d.dir, guid))
		time.Sleep(50 * time.Millisecond)
	}
}

// finish gives a complete download its name.
func (d *downloads) finish(guid string, n int64) {
	d.mu.Lock()
	dl := d.active[guid]
	d.mu.Unlock()
	if dl == nil {
		return
	}
	from := filepath.Join(d.dir, guid)
	if st, err := os.Stat(from); err == nil && st.Size() > d.max {
		_ = os.Remove(from)
		d.end(guid, result{err: fmt.Errorf("the download was refused: it is larger than the cap of %d bytes", d.max)})
		return
	}
	name := dl.name
	for i := 2; ; i++ {
		if _, err := os.Lstat(filepath.Join(d.dir, name)); os.IsNotExist(err) {
			break
		}
		ext := filepath.Ext(dl.name)
		name = fmt.Sprintf("%s-%d%s", strings.TrimSuffix(dl.name, ext), i, ext)
	}
	if err := os.Rename(from, filepath.Join(d.dir, name)); err != nil {
		d.end(guid, result{err: fmt.Errorf("saving the download: %w", err)})
		return
	}
	d.end(guid, result{rel: filepath.Join(DownloadDir, name), n: n})
}

func (d *downloads) end(guid string, r result) {
	d.mu.Lock()
	dl := d.active[guid]
	delete(d.active, guid)
	d.mu.Unlock()
	if dl == nil {
		return
	}
	dl.cancel()
	dl.done <- r
}

// await waits for the newest download, at most wait, and says where it went.
func (d *downloads) await(ctx context.Context, wait time.Duration) (string, error) {
	d.mu.Lock()
	ch := d.last
	d.mu.Unlock()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case r := <-ch:
		if r.err != nil {
			return "", r.err
		}
		return fmt.Sprintf("downloaded %s (%d bytes)", r.rel, r.n), nil
	case <-t.C:
		return "", fmt.Errorf("the download did not finish within %s", wait)
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// safeName is a suggested file name reduced to a plain name in the downloads folder.
func safeName(s string) string {
	s = filepath.Base(strings.ReplaceAll(s, "\\", "/"))
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
	s = strings.TrimLeft(s, ".")
	if s == "" || s == "/" {
		s = "download"
	}
	return clip(s, 120)
}
