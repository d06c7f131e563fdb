package media

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"massgen/internal/config"
)

// TestTextToFileGeneration: MassGen v0.1.12's text_to_file_generation, as its example configs
// name it: an OpenAI model writes the content through Chat Completions, saved as txt or md as
// written and as a PDF laid out here; a pptx is made by OpenAI's code interpreter and
// downloaded from its container. The result has MassGen's fields and the cost.
func TestTextToFileGeneration(t *testing.T) {
	gpt4o := 100*2.5/1e6 + 1000*10.0/1e6 // the fake's usage at gpt-4o's list price
	for _, tc := range []struct {
		name      string
		args      map[string]any
		wantFile  string
		wantCalls []string
		wantBody  []string
		check     func(t *testing.T, data []byte)
		wantCost  float64
	}{
		{name: "markdown", args: map[string]any{"prompt": "Write a short report", "file_format": "md", "filename": "report.txt"},
			wantFile: "report.md", wantCalls: []string{"/v1/chat/completions"},
			wantBody: []string{`"model":"gpt-4o"`, `"role":"system"`, `"content":"Write a short report"`},
			check: func(t *testing.T, data []byte) {
				if !strings.HasPrefix(string(data), "# Report") {
					t.Errorf("%q", data)
				}
			}, wantCost: gpt4o},
		{name: "pdf, with a model from the call", args: map[string]any{"prompt": "Write a short report", "file_format": "PDF", "model": "gpt-4.1", "storage_path": "docs"},
			wantFile: "docs/20261201_100000_Write_a_short_report.pdf", wantCalls: []string{"/v1/chat/completions"}, wantBody: []string{`"model":"gpt-4.1"`},
			check: func(t *testing.T, data []byte) {
				checkPDF(t, data, "(Report) Tj", `(The plan \(in short\) works.) Tj`, "(\x95) Tj", "(one) Tj")
			}, wantCost: 100*2.0/1e6 + 1000*8.0/1e6},
		{name: "pptx through the code interpreter", args: map[string]any{"prompt": "# AI in Healthcare\n---\n# Summary\n- one", "file_format": "pptx", "filename": "deck"},
			wantFile: "deck.pptx", wantCalls: []string{"/v1/responses", "/v1/containers/cntr_1/files/cfile_1/content"},
			wantBody: []string{`"type":"code_interpreter"`, `"container":{"type":"auto"}`, `"tool_choice":"required"`, "/mnt/data/deck.pptx", "python-pptx"},
			check: func(t *testing.T, data []byte) {
				if !bytes.Equal(data, zipBytes) {
					t.Errorf("%q", data)
				}
			}, wantCost: 200*2.5/1e6 + 300*10.0/1e6 + 0.03},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSetup(t, "openai", "gpt-4o", config.Media{FileGeneration: true}, "openai")
			s.f.gen.cite = "deck.pptx"
			tl, ok := Tools(s.ts.o).Find("custom_tool__text_to_file_generation")
			if !ok {
				t.Fatal("enable_file_generation offers no text_to_file_generation")
			}
			res, out := run(t, tl, tc.args)
			if res.IsError || out["operation"] != "generate_and_store_file" {
				t.Fatalf("%s", res.Content)
			}
			var paths []string
			for _, c := range s.f.calls {
				paths = append(paths, c.Path)
			}
			if strings.Join(paths, " ") != strings.Join(tc.wantCalls, " ") || !strings.Contains(s.f.calls[0].Auth, openaiKey) {
				t.Errorf("requests %v, want %v", paths, tc.wantCalls)
			}
			for _, w := range tc.wantBody {
				if !strings.Contains(string(s.f.calls[0].Body), w) {
					t.Errorf("the request lacks %s: %.600s", w, s.f.calls[0].Body)
				}
			}
			want := s.ts.o.Workspace.Dir() + "/" + tc.wantFile
			data, err := os.ReadFile(want)
			if out["file_path"] != want || err != nil {
				t.Fatalf("file_path %v, want %s: %v", out["file_path"], want, err)
			}
			tc.check(t, data)
			if c, _ := out["cost_usd"].(float64); !near(res.Spent.CostUSD, tc.wantCost) || c != roundTo4(tc.wantCost) {
				t.Errorf("spent %+v, cost_usd %v; want %v", res.Spent, out["cost_usd"], tc.wantCost)
			}
			if out["file_size"] != float64(len(data)) || out["content_preview"] == "" {
				t.Errorf("%s", res.Content)
			}
		})
	}
}

func roundTo4(c float64) float64 {
	v, _ := strconv.ParseFloat(fmt.Sprintf("%.4f", c), 64)
	return v
}

// TestTextToFileGeneration_Refused: formats it does not make are refused by name with what
// to do instead, before anything is sent; a deck the model did not make, or a download that
// is not one, is an error that still counts what the call cost.
func TestTextToFileGeneration_Refused(t *testing.T) {
	for _, tc := range []struct {
		name      string
		providers []string
		args      map[string]any
		prepare   func(s setup)
		want      string
		calls     int
		spent     bool
	}{
		{name: "docx", args: map[string]any{"prompt": "x", "file_format": "docx"}, want: `file_format "docx" is not made here: make md and convert it (pandoc`},
		{name: "unknown format", args: map[string]any{"prompt": "x", "file_format": "odp"}, want: `unsupported file_format "odp": use txt, md, pdf, pptx`},
		{name: "a path as filename", args: map[string]any{"prompt": "x", "filename": "../up/report"}, want: "not a plain file name: give folders in storage_path"},
		{name: "no prompt", args: map[string]any{"file_format": "md"}, want: "give prompt"},
		{name: "no OpenAI key", providers: []string{"gemini"}, args: map[string]any{"prompt": "x"}, want: "set OPENAI_API_KEY"},
		{name: "outside the workspace", args: map[string]any{"prompt": "x", "storage_path": "/etc"}, want: "outside what you can access", calls: 1, spent: true},
		{name: "provider error", prepare: func(s setup) {
			s.f.fail("/chat/completions", 401, `{"error":{"message":"Incorrect API key provided: `+openaiKey+`"}}`)
		}, args: map[string]any{"prompt": "x"}, want: "401 Unauthorized: Incorrect API key provided: [redacted]", calls: 1},
		{name: "no deck cited", args: map[string]any{"prompt": "x", "file_format": "pptx"}, want: "made no .pptx file in its code interpreter (it said: Saved the deck.)",
			calls: 1, spent: true},
		{name: "the deck is not a zip", prepare: func(s setup) {
			s.f.gen.cite = "deck.pptx"
			s.f.gen.content = func(w http.ResponseWriter) { _, _ = w.Write([]byte(`{"error": "gone"}`)) }
		}, args: map[string]any{"prompt": "x", "file_format": "pptx"}, want: "not a .pptx file", calls: 2, spent: true},
		{name: "the deck is endless", prepare: func(s setup) { s.f.gen.cite = "deck.pptx"; s.f.gen.content = endless; s.ts.fileCap = 1 << 20 },
			args: map[string]any{"prompt": "x", "file_format": "pptx"}, want: "is larger than 1 MiB", calls: 2, spent: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			providers := tc.providers
			if providers == nil {
				providers = []string{"openai"}
			}
			s := newSetup(t, "openai", "", config.Media{FileGeneration: true}, providers...)
			if tc.prepare != nil {
				tc.prepare(s)
			}
			res, out := run(t, s.ts.textToFileTool(), tc.args)
			if msg, _ := out["error"].(string); !res.IsError || !strings.Contains(msg, tc.want) {
				t.Errorf("got %s\nwant an error containing %q", res.Content, tc.want)
			}
			if n := s.f.count(); n != tc.calls {
				t.Errorf("%d requests, want %d", n, tc.calls)
			}
			if (res.Spent.CostUSD > 0) != tc.spent {
				t.Errorf("spent %+v", res.Spent)
			}
		})
	}
}

// checkPDF checks data is a well-formed PDF (every object where the cross-reference table
// says) whose pages show want.
func checkPDF(t *testing.T, data []byte, want ...string) {
	t.Helper()
	s := string(data)
	if !strings.HasPrefix(s, "%PDF-1.4\n") || !strings.HasSuffix(s, "%%EOF\n") {
		t.Fatalf("not a PDF: %.100q", s)
	}
	m := regexp.MustCompile(`startxref\n(\d+)\n`).FindStringSubmatch(s)
	if m == nil {
		t.Fatal("no startxref")
	}
	xref, _ := strconv.Atoi(m[1])
	if !strings.HasPrefix(s[xref:], "xref\n0 ") {
		t.Fatalf("startxref %d does not point at the table", xref)
	}
	entries := regexp.MustCompile(`(\d{10}) 00000 n \n`).FindAllStringSubmatch(s[xref:], -1)
	if len(entries) < 6 {
		t.Fatalf("%d objects", len(entries))
	}
	for i, e := range entries {
		off, _ := strconv.Atoi(e[1])
		if !strings.HasPrefix(s[off:], fmt.Sprintf("%d 0 obj\n", i+1)) {
			t.Errorf("object %d is not at %d: %.20q", i+1, off, s[off:])
		}
	}
	for _, st := range regexp.MustCompile(`<< /Length (\d+) >>\nstream\n`).FindAllStringSubmatchIndex(s, -1) {
		n, _ := strconv.Atoi(s[st[2]:st[3]])
		if !strings.HasPrefix(s[st[1]+n:], "endstream") {
			t.Errorf("a stream's /Length %d is wrong", n)
		}
	}
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("the PDF lacks %q", w)
		}
	}
}

// TestWritePDF: long text flows onto more pages within the margins, headings are bold,
// characters the standard fonts lack become '?', and nothing in the text breaks the file.
func TestWritePDF(t *testing.T) {
	var long strings.Builder
	long.WriteString("# Title “quoted” — 日本\n\n")
	for i := range 200 {
		fmt.Fprintf(&long, "Paragraph %d has (parentheses), a backslash \\ and enough words to wrap across the width of one page at eleven points.\n\n", i)
	}
	long.WriteString("```\n    indented code line\n```\n- bullet\n  - nested\n1. numbered\n| a | b |\n")
	data := writePDF(long.String())
	checkPDF(t, data, "/F2 18 Tf", "(Title \x93quoted\x94 \x97 ??) Tj", `\(parentheses\)`, `\\`, "/F3 9.5 Tf", "(1. numbered) Tj")
	pages := regexp.MustCompile(`/Type /Page /Parent`).FindAllIndex(data, -1)
	if len(pages) < 5 || !strings.Contains(string(data), fmt.Sprintf("/Count %d", len(pages))) {
		t.Errorf("%d pages", len(pages))
	}
	for _, m := range regexp.MustCompile(`Td \(([^\n]*)\) Tj`).FindAllSubmatch(data, -1) {
		line := regexp.MustCompile(`\\(.)`).ReplaceAll(m[1], []byte("$1")) // the string's escapes
		if w := width(line, styleBody); w > textWidth+1 {
			t.Errorf("a line is %.0f points wide: %q", w, m[1])
		}
	}
	for _, m := range regexp.MustCompile(`([\d.]+) ([\d.]+) Td`).FindAllSubmatch(data, -1) {
		x, _ := strconv.ParseFloat(string(m[1]), 64)
		y, _ := strconv.ParseFloat(string(m[2]), 64)
		if x < pageMargin || y < pageMargin-20 || y > pageHeight-pageMargin {
			t.Errorf("text at %v,%v is outside the margins", x, y)
		}
	}
	if empty := writePDF(""); !bytes.Contains(empty, []byte("/Count 1")) {
		t.Error("empty text makes no page")
	}
}
