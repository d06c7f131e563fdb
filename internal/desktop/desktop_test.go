package desktop

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"massgen/internal/browser"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// NeedDesktop skips where Xvfb, xdotool, xwd or chromium are missing, except in CI, where
// .ci/run installs them.
func needDesktop(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("the desktop tests start Xvfb and chromium")
	}
	miss := Missing()
	if _, err := os.Stat(browser.DefaultChromium); err != nil {
		miss += " " + browser.DefaultChromium
	}
	if miss != "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("missing %s", miss)
		}
		t.Skipf("missing %s", miss)
	}
}

// clickPage is a page whose top half is one button (below the browser's tab strip and
// address bar, 87 px of an 800x600 screen): a click there, and the text typed into
// its field, reach the server.
const clickPage = `<!doctype html><html><body style="margin:0">
<button id=b style="position:absolute;left:0;top:0;width:100%;height:50%;background:#c00;border:0"
  onclick="fetch('/clicked?n=' + (++window.n || (window.n = 1)))">press</button>
<input id=t style="position:absolute;left:0;top:60%;width:100%;height:20%;font-size:40px"
  onkeyup="if (event.key === 'Enter') fetch('/typed?v=' + encodeURIComponent(this.value))">
</body></html>`

func TestDesktop_ClickTypeScreenshot(t *testing.T) {
	needDesktop(t)
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, clickPage)
		case "/favicon.ico":
		default:
			mu.Lock()
			got = append(got, r.URL.Path+"?"+r.URL.RawQuery)
			mu.Unlock()
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d, err := Start(ctx, Options{Width: 800, Height: 600, StartURL: srv.URL + "/", Browser: browser.Options{Dir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Display() == "" {
		t.Fatal("no display")
	}
	// The page is loaded when Start returns, but on a busy machine Chromium may paint it a
	// moment later: screenshots are taken until one shows it.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		shot, err := d.Screenshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(shot))
		if err != nil {
			t.Fatal(err)
		}
		if b := img.Bounds(); b.Dx() != 800 || b.Dy() != 600 {
			t.Fatalf("screenshot is %v, want 800x600", b)
		}
		r, g, b, _ := img.At(400, 200).RGBA()
		if r>>8 > 0xb0 && g>>8 < 0x20 && b>>8 < 0x20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the screenshot does not show the page's red button at (400,200): %x %x %x", r>>8, g>>8, b>>8)
		}
	}
	if err := d.Click(ctx, 400, 200, "left", 1); err != nil {
		t.Fatal(err)
	}
	if err := d.Click(ctx, 400, 440, "left", 1); err != nil {
		t.Fatal(err)
	}
	// A second click where the pointer already is (a button pressed twice) is as quick as
	// the first: xdotool's mousemove --sync would wait 15 s for a pointer that does not move.
	start := time.Now()
	if err := d.Click(ctx, 400, 440, "left", 1); err != nil {
		t.Fatal(err)
	}
	if err := d.Move(ctx, 400, 440); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("a click and a move where the pointer is took %s", took)
	}
	if err := d.Type(ctx, "hello desktop"); err != nil {
		t.Fatal(err)
	}
	if err := d.Key(ctx, "Return", ""); err != nil {
		t.Fatal(err)
	}
	want := []string{"/clicked?n=1", "/typed?v=hello%20desktop"}
	deadline := time.Now().Add(15 * time.Second)
	for {
		mu.Lock()
		g := fmt.Sprint(got)
		mu.Unlock()
		if g == fmt.Sprint(want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server saw %s, want %v", g, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := d.Click(ctx, 900, 10, "left", 1); err == nil {
		t.Error("a click off the screen was not refused")
	}
	if err := d.Key(ctx, "ctrl+s; rm -rf /", ""); err == nil {
		t.Error("a key name with shell text was not refused")
	}
}

// TestDesktop_DisplayNeedsTheCookie is the attack: another program on the machine connects to
// the agent's display (to read the screen or type into it) without the display's cookie; the
// X server refuses it, while massgen's own calls, which carry the cookie, work.
func TestDesktop_DisplayNeedsTheCookie(t *testing.T) {
	needDesktop(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d, err := Start(ctx, Options{Width: 640, Height: 480, Browser: browser.Options{Dir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, _, err := d.Cursor(ctx); err != nil {
		t.Fatalf("massgen's own call was refused: %v", err)
	}
	if _, err := d.Screenshot(ctx); err != nil {
		t.Fatalf("massgen's own screenshot was refused: %v", err)
	}
	if fi, err := os.Stat(d.xauth); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the authority file: %v %v, want mode 0600", fi.Mode(), err)
	}
	home := t.TempDir() // no ~/.Xauthority of the user's to fall back on
	forged := filepath.Join(home, "forged")
	guess, _ := newCookie()
	if err := writeXauth(forged, strings.TrimPrefix(d.Display(), ":"), guess); err != nil {
		t.Fatal(err)
	}
	for _, argv := range [][]string{{Xdotool, "getmouselocation"}, {Xdotool, "type", "rm -rf ~"}, {Xwd, "-root", "-silent"}} {
		for _, auth := range []string{filepath.Join(home, "none"), "", forged} {
			cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "DISPLAY=" + d.Display()}
			if auth != "" {
				cmd.Env = append(cmd.Env, "XAUTHORITY="+auth)
			}
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Errorf("%v without the cookie (XAUTHORITY=%q) reached the display: %.200q", argv, auth, out)
			}
		}
	}
}
