package mdterm

import (
	"math/bits"
	"strings"
)

// emphasis matches delimiter runs into emphasis (*, _), strong emphasis (**, __) and
// strikethrough (~~) with CommonMark's algorithm: each closer, left to right, takes the
// nearest opener of its character on a stack of active delimiters; the delimiters between
// them become literal text. A closer that finds none records how far down it looked, so
// later closers of its kind do not look there again and the whole runs in linear time.
func emphasis(toks []token) []token {
	type kind struct {
		ch      byte
		canOpen bool
		mod     int
	}
	var stack []int          // indices of active delimiter tokens, innermost last
	bottom := map[kind]int{} // closers of a kind find no opener at or below this index
	for ci := range toks {
		c := &toks[ci]
		if c.kind != tokDelim {
			continue
		}
		ch := c.text[0]
		k := kind{ch, c.canOpen, c.orig % 3}
		floor, seen := bottom[k]
		if !seen {
			floor = -1
		}
		for c.canClose && c.n > 0 {
			p := len(stack) - 1
			for ; p >= 0 && stack[p] > floor; p-- {
				o := &toks[stack[p]]
				if o.text[0] != ch || o.n == 0 {
					continue
				}
				// CommonMark's rule of three: "*a**b*" is not "a" in emphasis and "b" in strong.
				if (o.canClose || c.canOpen) && (o.orig+c.orig)%3 == 0 && (o.orig%3 != 0 || c.orig%3 != 0) {
					continue
				}
				break
			}
			if p < 0 || stack[p] <= floor {
				bottom[k] = ci
				break
			}
			o := &toks[stack[p]]
			use, st := 1, styleItalic
			switch {
			case ch == '~':
				use, st = 2, styleStrike
			case o.n >= 2 && c.n >= 2:
				use, st = 2, styleBold
			}
			o.opens = append(o.opens, st)
			c.closes = append(c.closes, st)
			o.n, c.n = o.n-use, c.n-use
			stack = stack[:p+1]
			if o.n == 0 {
				stack = stack[:p]
			}
		}
		if c.n > 0 && c.canOpen {
			stack = append(stack, ci)
		}
	}
	return toks
}

// flatten turns tokens into spans, each in the styles of the emphasis around it and base.
func flatten(toks []token, base style, out []span) []span {
	var depth [8]int // how many open emphases give each style bit
	cur := func() style {
		st := base
		for b, n := range depth {
			if n > 0 {
				st |= 1 << b
			}
		}
		return st
	}
	for _, t := range toks {
		switch t.kind {
		case tokText:
			out = append(out, span{text: t.text, style: cur()})
		case tokCode:
			out = append(out, span{text: t.text, style: cur() | styleCode})
		case tokBreak:
			out = append(out, span{hard: true})
		case tokDelim:
			for _, st := range t.closes {
				depth[bits.TrailingZeros8(uint8(st))]--
			}
			if t.n > 0 {
				out = append(out, span{text: t.text[:t.n], style: cur()})
			}
			for _, st := range t.opens {
				depth[bits.TrailingZeros8(uint8(st))]++
			}
		case tokLink:
			n := len(out)
			out = flatten(t.children, cur(), out)
			var label strings.Builder
			for _, s := range out[n:] {
				label.WriteString(s.text)
			}
			switch l := strings.TrimSpace(label.String()); {
			case t.url == "" || l == t.url || "mailto:"+l == t.url:
			case l == "":
				out = append(out, span{text: t.url, style: cur() | styleUnderline})
			default:
				out = append(out, span{text: " (", style: cur()}, span{text: t.url, style: cur() | styleUnderline}, span{text: ")", style: cur()})
			}
		case tokAutolink:
			out = append(out, span{text: t.url, style: cur() | styleUnderline})
		}
	}
	return out
}
