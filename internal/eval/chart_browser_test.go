package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// equalSummary is the chart the new-user review found unreadable: two agents alone and the
// majority of them, all at 16.7% and with nearly the same spend, whose labels were printed
// over one another.
func equalSummary() Summary {
	r := Ratio{2, 12, 2.0 / 12}
	return Summary{
		Voted: r, OracleAny: Ratio{6, 12, 0.5}, Majority: r,
		Agents: []AgentSummary{
			{ID: "careful", First: r, FirstTokens: Tokens{Input: 1000, Output: 200}},
			{ID: "chemist", First: r, FirstTokens: Tokens{Input: 1050, Output: 210}},
		},
		Tokens: Tokens{Input: 4400, Output: 700},
	}
}

// chartCases are charts whose labels would collide: equal accuracies at nearby costs, points
// on top of each other, everyone at 0% (the bottom edge) and the team on the oracle's line.
func chartCases() map[string]Summary {
	same := equalSummary()
	same.Agents[1].FirstTokens = same.Agents[0].FirstTokens
	zero := Summary{OracleAny: Ratio{0, 4, 0}, Tokens: Tokens{Input: 900}}
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		zero.Agents = append(zero.Agents, AgentSummary{ID: id, First: Ratio{0, 4, 0}, FirstTokens: Tokens{Input: 100}})
	}
	onOracle := equalSummary()
	onOracle.Voted = onOracle.OracleAny
	return map[string]Summary{"equal": equalSummary(), "same": same, "zero": zero, "on-oracle": onOracle}
}

// TestChartLabelsDoNotOverlapInChromium draws the charts in headless chromium and checks
// that no two pieces of text in them overlap, measured by the browser itself (the chart
// estimates text widths; this is where the estimate is checked).
func TestChartLabelsDoNotOverlapInChromium(t *testing.T) {
	chromium := "/usr/bin/chromium"
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("missing /usr/bin/chromium (apt-get install chromium)")
		}
		t.Skip("missing /usr/bin/chromium (apt-get install chromium)")
	}
	var page bytes.Buffer
	page.WriteString("<!doctype html><html><body>\n")
	cases := chartCases()
	for name, s := range cases {
		var svg bytes.Buffer
		if err := WriteChart(&svg, s); err != nil {
			t.Fatal(err)
		}
		page.WriteString(`<div data-case="` + name + `">` + svg.String() + "</div>\n")
	}
	// The script writes, for each chart, the pairs of texts whose boxes intersect.
	page.WriteString(`<script>
const out = {};
for (const div of document.querySelectorAll('div[data-case]')) {
  const texts = [...div.querySelectorAll('text')].map((t) => ({ text: t.textContent, r: t.getBoundingClientRect() }));
  const hits = [];
  for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
    const a = texts[i].r, b = texts[j].r;
    if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) hits.push(texts[i].text + ' / ' + texts[j].text);
  }
  out[div.dataset.case] = { texts: texts.length, overlaps: hits };
}
document.body.setAttribute('data-result', JSON.stringify(out));
</script></body></html>
`)
	file := filepath.Join(t.TempDir(), "charts.html")
	if err := os.WriteFile(file, page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir="+t.TempDir(), "--dump-dom", "file://"+file)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	m := regexp.MustCompile(`data-result="([^"]*)"`).FindSubmatch(dom)
	if m == nil {
		t.Fatalf("the page wrote no result:\n%s", dom)
	}
	var res map[string]struct {
		Texts    int
		Overlaps []string
	}
	if err := json.Unmarshal([]byte(strings.ReplaceAll(string(m[1]), "&quot;", `"`)), &res); err != nil {
		t.Fatal(err)
	}
	for name := range cases {
		r := res[name]
		if r.Texts < 10 {
			t.Errorf("%s: the browser found %d texts in the chart", name, r.Texts)
		}
		for _, o := range r.Overlaps {
			t.Errorf("%s: overlapping labels: %s", name, o)
		}
	}
}

// The layout itself, without a browser: the labels of the agents alone and of their
// majority, equal and close together, go on distinct lines.
func TestChartLabelsOfEqualPointsOnDistinctLines(t *testing.T) {
	var b bytes.Buffer
	if err := WriteChart(&b, equalSummary()); err != nil {
		t.Fatal(err)
	}
	lines := map[string]string{}
	for _, m := range regexp.MustCompile(`<text x="[0-9.]+" y="([0-9.]+)">((?:careful alone|chemist alone|majority of them) 16\.7%)</text>`).FindAllStringSubmatch(b.String(), -1) {
		if other, ok := lines[m[1]]; ok {
			t.Errorf("%q and %q are drawn on the same line y=%s", other, m[2], m[1])
		}
		lines[m[1]] = m[2]
	}
	if len(lines) != 3 {
		t.Errorf("want the 3 labels on 3 lines, got %v:\n%s", lines, b.String())
	}
}
