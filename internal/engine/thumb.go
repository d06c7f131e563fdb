package engine

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/jpeg"
	_ "image/png" // screenshots are PNG

	"massgen/internal/event"
)

// thumbWidth is the width of the thumbnails views show of a tool's screenshots.
const thumbWidth = 320

// maxThumbSource bounds the image a thumbnail is made from (decoded pixels cost memory).
const maxThumbSource = 4096 * 4096

// thumbnail is a small JPEG of a PNG or JPEG image, as a data: URL, or "" when data is not
// such an image, too large to decode, or its thumbnail is over event.MaxThumb.
func thumbnail(data []byte) string {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width*cfg.Height > maxThumbSource {
		return ""
	}
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return ""
	}
	w := min(thumbWidth, cfg.Width)
	h := max(1, cfg.Height*w/cfg.Width)
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	b := src.Bounds()
	for y := range h {
		sy := b.Min.Y + y*b.Dy()/h
		for x := range w {
			dst.Set(x, y, src.At(b.Min.X+x*b.Dx()/w, sy))
		}
	}
	var out bytes.Buffer
	if err := jpeg.Encode(&out, dst, &jpeg.Options{Quality: 60}); err != nil {
		return ""
	}
	s := "data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(out.Bytes())
	if len(s) > event.MaxThumb {
		return ""
	}
	return s
}
