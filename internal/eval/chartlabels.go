package eval

import "unicode/utf8"

// The chart's labels sit beside their points, and points with the same accuracy and nearly
// the same cost (agents alike, or the majority of them) would print their labels over one
// another. placeLabels moves a label that would overlap another to the nearest free line.

// labelBox is the space a piece of chart text takes. The chart is a file with no renderer to
// ask, so widths are estimated: 12 px sans-serif averages under 7 px a character (capitals
// and digits are the widest), and 7.2 px a character errs on the wide side.
type labelBox struct{ x0, y0, x1, y1 float64 }

const (
	charWidth = 7.2
	lineStep  = 15.0 // between two label lines: the text's 14 px box and a pixel of air
)

// textBox is the box of text drawn from x on baseline (start-anchored).
func textBox(x, baseline float64, text string) labelBox {
	return labelBox{x, baseline - 11, x + charWidth*float64(utf8.RuneCountInString(text)), baseline + 3}
}

// endTextBox is the box of text anchored at its end.
func endTextBox(x, baseline float64, text string) labelBox {
	b := textBox(x, baseline, text)
	w := b.x1 - b.x0
	b.x0, b.x1 = x-w, x
	return b
}

func (a labelBox) overlaps(b labelBox) bool {
	return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1
}

// placeLabels returns the baseline of each label, drawn from x[k] and wanting baseline
// want[k]: that line when it is free, else the nearest free line above or below it, in
// steps of lineStep, between lo and hi. Boxes in taken (other text, the points) are avoided
// too. The labels are placed in the order of order, so the first ones keep their lines.
func placeLabels(x, want []float64, texts []string, order []int, taken []labelBox, lo, hi float64) []float64 {
	at := append([]float64(nil), want...)
	placed := append([]labelBox(nil), taken...)
	free := func(b labelBox) bool {
		for _, p := range placed {
			if b.overlaps(p) {
				return false
			}
		}
		return true
	}
	for _, k := range order {
		for step := 0; step <= 2*len(texts)+8; step++ {
			// 0, 1 below, 1 above, 2 below, 2 above, ... lines away.
			lines := float64((step + 1) / 2)
			if step%2 == 0 {
				lines = -lines
			}
			y := want[k] + lineStep*lines
			if step > 0 && (y < lo || y > hi) {
				continue
			}
			if b := textBox(x[k], y, texts[k]); free(b) {
				at[k] = y
				break
			}
		}
		placed = append(placed, textBox(x[k], at[k], texts[k]))
	}
	return at
}
