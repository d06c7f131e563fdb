package desktop

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strconv"
	"time"

	"massgen/internal/lazy"
)

// The actions computer-use models ask for, as xdotool runs them. Coordinates are screen
// pixels and are checked against the screen first.

func (d *Desktop) point(x, y int) error {
	if x < 0 || y < 0 || x >= d.w || y >= d.h {
		return fmt.Errorf("(%d, %d) is off the %dx%d screen", x, y, d.w, d.h)
	}
	return nil
}

func (d *Desktop) xdo(ctx context.Context, args ...string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, err := d.run(ctx, 1<<16, Xdotool, args...)
	return err
}

// xdoAt runs xdotool with the pointer moved to (x, y) first, then rest. mousemove --sync
// waits until the pointer moves, which takes xdotool's 15 s time-out when it is there
// already (a second click on one button): it is asked for only when the pointer moves.
func (d *Desktop) xdoAt(ctx context.Context, x, y int, rest ...string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	args := []string{"mousemove"}
	if cx, cy, err := d.cursor(ctx); err != nil || cx != x || cy != y {
		args = append(args, "--sync")
	}
	args = append(append(args, strconv.Itoa(x), strconv.Itoa(y)), rest...)
	_, err := d.run(ctx, 1<<16, Xdotool, args...)
	return err
}

// Move moves the pointer to (x, y).
func (d *Desktop) Move(ctx context.Context, x, y int) error {
	if err := d.point(x, y); err != nil {
		return err
	}
	return d.xdoAt(ctx, x, y)
}

// Buttons by name, as X numbers them.
var buttons = map[string]string{"left": "1", "middle": "2", "right": "3"}

// Click clicks button ("left", "middle", "right") count times at (x, y).
func (d *Desktop) Click(ctx context.Context, x, y int, button string, count int) error {
	b, ok := buttons[button]
	if !ok {
		return fmt.Errorf("no mouse button %q", button)
	}
	if err := d.point(x, y); err != nil {
		return err
	}
	return d.xdoAt(ctx, x, y, "click", "--repeat", strconv.Itoa(max(count, 1)), "--delay", "80", b)
}

// Press holds (down) or releases (up) the left button where the pointer is.
func (d *Desktop) Press(ctx context.Context, down bool) error {
	if down {
		return d.xdo(ctx, "mousedown", "1")
	}
	return d.xdo(ctx, "mouseup", "1")
}

// Drag presses the left button at one point and releases it at another.
func (d *Desktop) Drag(ctx context.Context, x0, y0, x1, y1 int) error {
	if err := errors.Join(d.point(x0, y0), d.point(x1, y1)); err != nil {
		return err
	}
	to := []string{"mousemove", "--sync", strconv.Itoa(x1), strconv.Itoa(y1)}
	if x0 == x1 && y0 == y1 {
		to = []string{"mousemove", strconv.Itoa(x1), strconv.Itoa(y1)}
	}
	return d.xdoAt(ctx, x0, y0, append(append([]string{"mousedown", "1"}, to...), "mouseup", "1")...)
}

// MaxTyped bounds the text one type action sends.
const MaxTyped = 10000

// Type types text as keystrokes.
func (d *Desktop) Type(ctx context.Context, text string) error {
	if len(text) > MaxTyped {
		return fmt.Errorf("the text is %d bytes; type at most %d at a time", len(text), MaxTyped)
	}
	return d.xdo(ctx, "type", "--delay", "12", "--", text)
}

// keyCombo is xdotool's key syntax: keysyms joined by +, such as ctrl+s, Return, shift+Tab.
var keyCombo = lazy.Regexp(`^[A-Za-z0-9_]+(\+[A-Za-z0-9_]+)*$`)

// Key presses a key or combination (ctrl+s), or holds it down or lets it up.
func (d *Desktop) Key(ctx context.Context, combo string, hold string) error {
	if !keyCombo().MatchString(combo) || len(combo) > 100 {
		return fmt.Errorf("%q is not a key name such as Return, ctrl+s or shift+Tab", combo)
	}
	verb := "key"
	switch hold {
	case "down":
		verb = "keydown"
	case "up":
		verb = "keyup"
	}
	return d.xdo(ctx, verb, "--", combo)
}

// Scroll turns the wheel amount notches in direction (up, down, left, right) at (x, y).
func (d *Desktop) Scroll(ctx context.Context, x, y int, direction string, amount int) error {
	b := map[string]string{"up": "4", "down": "5", "left": "6", "right": "7"}[direction]
	if b == "" {
		return fmt.Errorf("scroll direction %q: use up, down, left or right", direction)
	}
	if err := d.point(x, y); err != nil {
		return err
	}
	amount = min(max(amount, 1), 50)
	return d.xdoAt(ctx, x, y, "click", "--repeat", strconv.Itoa(amount), "--delay", "30", b)
}

// Cursor is where the pointer is.
func (d *Desktop) Cursor(ctx context.Context) (x, y int, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cursor(ctx)
}

func (d *Desktop) cursor(ctx context.Context) (x, y int, err error) {
	out, err := d.run(ctx, 4096, Xdotool, "getmouselocation", "--shell")
	if err != nil {
		return 0, 0, err
	}
	for _, l := range bytes.Split(out, []byte("\n")) {
		if v, ok := bytes.CutPrefix(l, []byte("X=")); ok {
			x, _ = strconv.Atoi(string(v))
		} else if v, ok := bytes.CutPrefix(l, []byte("Y=")); ok {
			y, _ = strconv.Atoi(string(v))
		}
	}
	return x, y, nil
}

// Wait pauses, at most 10 s.
func (d *Desktop) Wait(ctx context.Context, dur time.Duration) error {
	t := time.NewTimer(min(dur, 10*time.Second))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Screenshot reads the screen with xwd and returns it as PNG.
func (d *Desktop) Screenshot(ctx context.Context) ([]byte, error) {
	d.mu.Lock()
	raw, err := d.run(ctx, maxScreenshot, Xwd, "-root", "-silent")
	d.mu.Unlock()
	if err != nil {
		return nil, err
	}
	img, err := decodeXWD(raw)
	if err != nil {
		return nil, fmt.Errorf("reading xwd's image: %w", err)
	}
	var out bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&out, img); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// decodeXWD reads the X Window Dump of a TrueColor screen in ZPixmap format, 24 or 32 bits
// per pixel: what xwd writes of an Xvfb screen of depth 24.
func decodeXWD(b []byte) (image.Image, error) {
	const hdr = 100 // 25 32-bit big-endian fields
	if len(b) < hdr {
		return nil, errors.New("too short")
	}
	f := func(i int) uint32 { return binary.BigEndian.Uint32(b[i*4:]) }
	headerSize, format, width, height := int(f(0)), f(2), int(f(4)), int(f(5))
	byteOrder, bpp, bytesPerLine := f(7), int(f(11)), int(f(12))
	rmask, gmask, bmask := f(14), f(15), f(16)
	ncolors := int(f(19))
	switch {
	case format != 2:
		return nil, fmt.Errorf("pixmap format %d, want ZPixmap", format)
	case bpp != 32 && bpp != 24:
		return nil, fmt.Errorf("%d bits per pixel", bpp)
	case width <= 0 || height <= 0 || width > 8192 || height > 8192:
		return nil, fmt.Errorf("a %dx%d image", width, height)
	case headerSize < hdr || bytesPerLine < width*bpp/8:
		return nil, errors.New("a bad header")
	}
	off := headerSize + ncolors*12
	if off < 0 || len(b) < off+bytesPerLine*height {
		return nil, errors.New("the image is cut short")
	}
	shift := func(m uint32) uint {
		var s uint
		for m != 0 && m&1 == 0 {
			m >>= 1
			s++
		}
		return s
	}
	rs, gs, bs := shift(rmask), shift(gmask), shift(bmask)
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	px := bpp / 8
	for y := range height {
		row := b[off+y*bytesPerLine:]
		for x := range width {
			p := row[x*px : x*px+px]
			var v uint32
			if byteOrder == 0 { // LSBFirst
				for i := px - 1; i >= 0; i-- {
					v = v<<8 | uint32(p[i])
				}
			} else {
				for i := range px {
					v = v<<8 | uint32(p[i])
				}
			}
			img.SetRGBA(x, y, color.RGBA{uint8((v & rmask) >> rs), uint8((v & gmask) >> gs), uint8((v & bmask) >> bs), 255})
		}
	}
	return img, nil
}
