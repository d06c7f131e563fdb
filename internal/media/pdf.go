package media

import (
	"bytes"
	"fmt"
	"strings"
)

// A small PDF writer for text_to_file_generation: the text a model wrote, laid out on US
// Letter pages with the standard fonts every PDF reader has (Helvetica, Helvetica-Bold,
// Courier), so that no font is embedded and no dependency is needed. It reads the Markdown a
// model writes: # headings in bold, - and * bullets, ``` code in Courier, **emphasis** marks
// dropped. Characters outside Windows-1252 print as '?': the standard fonts have no others.

const (
	pageWidth, pageHeight = 612.0, 792.0
	pageMargin            = 72.0
	textWidth             = pageWidth - 2*pageMargin
	bulletIndent          = 16.0
)

// pdfStyle is one kind of line: its font (F1 Helvetica, F2 Helvetica-Bold, F3 Courier), size
// and the space it takes.
type pdfStyle struct {
	font          string
	size, leading float64
	before        float64 // space above the block
}

var (
	styleBody = pdfStyle{"F1", 11, 15, 0}
	styleH1   = pdfStyle{"F2", 18, 24, 10}
	styleH2   = pdfStyle{"F2", 14, 19, 8}
	styleH3   = pdfStyle{"F2", 12, 16, 6}
	styleCode = pdfStyle{"F3", 9.5, 12, 0}
)

// helvetica are Helvetica's advance widths, in 1/1000 of the font size, of the printable ASCII
// characters from space (the font's published metrics).
var helvetica = [95]int{
	278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278, // space to /
	556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556, // 0 to ?
	1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778, // @ to O
	667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556, // P to _
	333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556, // ` to o
	556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584, // p to ~
}

// winAnsi maps the characters of Windows-1252 above Latin-1's control range that models write.
var winAnsi = map[rune]byte{
	'€': 0x80, '‚': 0x82, 'ƒ': 0x83, '„': 0x84, '…': 0x85, '†': 0x86, '‡': 0x87, 'ˆ': 0x88, '‰': 0x89, 'Š': 0x8A,
	'‹': 0x8B, 'Œ': 0x8C, 'Ž': 0x8E, '‘': 0x91, '’': 0x92, '“': 0x93, '”': 0x94, '•': 0x95, '–': 0x96, '—': 0x97,
	'˜': 0x98, '™': 0x99, 'š': 0x9A, '›': 0x9B, 'œ': 0x9C, 'ž': 0x9E, 'Ÿ': 0x9F,
}

// encode turns s into Windows-1252 bytes.
func encode(s string) []byte {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		switch b, ok := winAnsi[r]; {
		case r == '\t':
			out = append(out, "    "...)
		case r >= 0x20 && r < 0x7F, r >= 0xA0 && r <= 0xFF:
			out = append(out, byte(r))
		case ok:
			out = append(out, b)
		case r < 0x20 || r == 0x7F:
		default:
			out = append(out, '?')
		}
	}
	return out
}

// width is how wide s (encoded) prints in style st, in points.
func width(s []byte, st pdfStyle) float64 {
	if st.font == "F3" {
		return float64(len(s)) * 0.6 * st.size
	}
	units := 0
	for _, c := range s {
		switch {
		case c >= 0x20 && c < 0x7F:
			units += helvetica[c-0x20]
		case c == 0x95:
			units += 350
		case c == 0x85 || c == 0x97 || c == 0x89:
			units += 1000
		default:
			units += 556
		}
	}
	w := float64(units) * st.size / 1000
	if st.font == "F2" {
		w *= 1.1 // bold runs wider; a little too much room is better than text past the margin
	}
	return w
}

// wrap breaks s into lines no wider than room, at spaces where it can.
func wrap(s []byte, st pdfStyle, room float64) [][]byte {
	var lines [][]byte
	var line []byte
	for _, word := range bytes.Fields(s) {
		try := append(append(append([]byte{}, line...), ' '), word...)
		if len(line) == 0 {
			try = word
		}
		if width(try, st) <= room {
			line = try
			continue
		}
		if len(line) > 0 {
			lines = append(lines, line)
		}
		// A word wider than the line is cut where it must be.
		for width(word, st) > room && len(word) > 1 {
			n := len(word) - 1
			for n > 1 && width(word[:n], st) > room {
				n--
			}
			lines = append(lines, word[:n])
			word = word[n:]
		}
		line = word
	}
	if len(line) > 0 || len(lines) == 0 {
		lines = append(lines, line)
	}
	return lines
}

// pdfPages lays text out into pages of content-stream operators.
type pdfPages struct {
	pages []*bytes.Buffer
	y     float64
}

func (p *pdfPages) room(h float64) {
	if len(p.pages) == 0 || p.y-h < pageMargin {
		p.pages = append(p.pages, &bytes.Buffer{})
		p.y = pageHeight - pageMargin
	}
}

func (p *pdfPages) line(s []byte, st pdfStyle, x float64) {
	p.room(st.leading)
	p.y -= st.leading
	cur := p.pages[len(p.pages)-1]
	fmt.Fprintf(cur, "BT /%s %g Tf %.2f %.2f Td (", st.font, st.size, x, p.y+st.leading-st.size)
	for _, c := range s {
		if c == '(' || c == ')' || c == '\\' {
			cur.WriteByte('\\')
		}
		cur.WriteByte(c)
	}
	cur.WriteString(") Tj ET\n")
}

func (p *pdfPages) gap(h float64) {
	if len(p.pages) > 0 && p.y-h >= pageMargin {
		p.y -= h
	}
}

// block lays out one paragraph, heading or bullet.
func (p *pdfPages) block(text string, st pdfStyle, indent float64, bullet bool) {
	p.gap(st.before)
	x := pageMargin + indent
	room := textWidth - indent
	if bullet {
		p.room(st.leading)
		mark := []byte{0x95}
		lines := wrap(encode(text), st, room-bulletIndent)
		p.line(mark, st, x)
		p.y += st.leading // the bullet's text starts on the bullet's line
		for _, l := range lines {
			p.line(l, st, x+bulletIndent)
		}
		return
	}
	for _, l := range wrap(encode(text), st, room) {
		p.line(l, st, x)
	}
}

// unmark drops the Markdown emphasis marks a model writes around words.
func unmark(s string) string {
	return strings.NewReplacer("**", "", "__", "", "`", "").Replace(s)
}

// layoutPDF turns Markdown-ish text into pages.
func layoutPDF(text string) [][]byte {
	p := &pdfPages{}
	code := false
	var para []string
	flush := func() {
		if len(para) > 0 {
			p.block(unmark(strings.Join(para, " ")), styleBody, 0, false)
			para = nil
		}
	}
	for _, raw := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		line := strings.TrimRight(raw, " \t")
		trim := strings.TrimSpace(line)
		if strings.HasPrefix(trim, "```") {
			flush()
			code = !code
			p.gap(4)
			continue
		}
		if code {
			for _, l := range wrap(encode(strings.ReplaceAll(line, " ", "\u00a0")), styleCode, textWidth) {
				p.line(l, styleCode, pageMargin)
			}
			continue
		}
		indent := float64(len(line)-len(strings.TrimLeft(line, " "))) / 2 * 16
		switch {
		case trim == "":
			flush()
			p.gap(styleBody.leading / 2)
		case trim == "---" || trim == "***" || trim == "___":
			flush()
			p.gap(styleBody.leading)
		case strings.HasPrefix(trim, "# "):
			flush()
			p.block(unmark(trim[2:]), styleH1, 0, false)
		case strings.HasPrefix(trim, "## "):
			flush()
			p.block(unmark(trim[3:]), styleH2, 0, false)
		case strings.HasPrefix(trim, "#"):
			flush()
			p.block(unmark(strings.TrimLeft(trim, "# ")), styleH3, 0, false)
		case strings.HasPrefix(trim, "- ") || strings.HasPrefix(trim, "* ") || strings.HasPrefix(trim, "+ "):
			flush()
			p.block(unmark(trim[2:]), styleBody, min(indent, 64), true)
		case strings.HasPrefix(trim, "|") || startsNumbered(trim):
			flush()
			p.block(unmark(trim), styleBody, min(indent, 64), false)
		default:
			para = append(para, trim)
		}
	}
	flush()
	if len(p.pages) == 0 {
		p.room(0)
	}
	out := make([][]byte, len(p.pages))
	for i, b := range p.pages {
		out[i] = b.Bytes()
	}
	return out
}

func startsNumbered(s string) bool {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i > 0 && i < len(s) && (s[i] == '.' || s[i] == ')')
}

// writePDF is text as a PDF file: objects 1 catalog, 2 page tree, 3-5 fonts, then a page and
// its content stream for each page, then the cross-reference table.
func writePDF(text string) []byte {
	pages := layoutPDF(text)
	var b bytes.Buffer
	var offsets []int
	obj := func(body string) {
		offsets = append(offsets, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", len(offsets), body)
	}
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	kids := make([]string, len(pages))
	for i := range pages {
		kids[i] = fmt.Sprintf("%d 0 R", 6+2*i)
	}
	obj("<< /Type /Catalog /Pages 2 0 R >>")
	obj(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(pages)))
	for _, f := range []string{"Helvetica", "Helvetica-Bold", "Courier"} {
		obj("<< /Type /Font /Subtype /Type1 /BaseFont /" + f + " /Encoding /WinAnsiEncoding >>")
	}
	for i, content := range pages {
		obj(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %g %g] /Resources << /Font << /F1 3 0 R /F2 4 0 R /F3 5 0 R >> >> /Contents %d 0 R >>",
			pageWidth, pageHeight, 7+2*i))
		obj(fmt.Sprintf("<< /Length %d >>\nstream\n%sendstream", len(content), content))
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offsets)+1, xref)
	return b.Bytes()
}
