package eval

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// point is one way of answering the dataset, placed by what it cost and how often it was
// right: the team, each agent alone, the majority of the agents alone.
type point struct {
	name string
	cost float64 // dollars, or tokens when some price is unknown
	acc  Ratio
}

// points are the chart's points; byTokens says their cost is in tokens: prices unknown, or
// all zero (offline agents), leave dollars with nothing to show.
func points(s Summary) (pts []point, byTokens bool) {
	byTokens = !s.CostKnown || s.CostUSD == 0
	spend := func(usd float64, t Tokens) float64 {
		if byTokens {
			return float64(t.Input + t.Output)
		}
		return usd
	}
	var aloneUSD float64
	var aloneTok Tokens
	for _, a := range s.Agents {
		pts = append(pts, point{name: a.ID + " alone", cost: spend(a.FirstCostUSD, a.FirstTokens), acc: a.First})
		aloneUSD += a.FirstCostUSD
		aloneTok = aloneTok.Add(a.FirstTokens)
	}
	if len(s.Agents) > 1 {
		pts = append(pts, point{name: "majority of them", cost: spend(aloneUSD, aloneTok), acc: s.Majority})
	}
	if s.Simulation != nil && byTokens {
		// The samples of the best member exist only in a simulation, and have no price.
		for _, b := range s.BestMember {
			if b.Samples > 1 {
				pts = append(pts, point{name: fmt.Sprintf("%s x%d", b.Agent, b.Samples), cost: b.Spend.Tokens * float64(s.Graded), acc: b.Accuracy})
			}
		}
	}
	pts = append(pts, point{name: "team (voted)", cost: spend(s.CostUSD, s.Tokens), acc: s.Voted})
	return pts, byTokens
}

// WriteMarkdown writes the report as Markdown: the summary tables, the accuracy against cost
// (drawn in chart, a file name next to the report; "" for none) and the items.
func WriteMarkdown(w io.Writer, s Summary, chart string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# massgen eval: %s\n\n", mdEscape(s.Dataset))
	fmt.Fprintf(&b, "%s: %d graded, %d failed, %d not run. Results: `%s`.\n\n", plural(s.Items, "item"), s.Graded, s.Failed, s.Pending, s.Results)
	if sim := s.Simulation; sim != nil {
		fmt.Fprintf(&b, "Simulated: population `%s`, seed %d; tokens are %s.\n\n", sim.Population, sim.Seed, sim.Tokens)
	}
	b.WriteString("| measure | correct | of | rate | calls/item | tokens/item |\n|---|--:|--:|--:|--:|--:|\n")
	for _, r := range measures(s) {
		spend := " | "
		if r.spend != nil {
			spend = fmt.Sprintf("%s | %s", calls(r.spend.Calls), num(int64(math.Round(r.spend.Tokens))))
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s |\n", mdEscape(r.name), r.r.N, r.r.Of, pct(r.r), spend)
	}
	if s.Graded > 0 {
		fmt.Fprintf(&b, "\nThe team per item: %s.\n", splitSpend(s.Spend))
	}
	pts, byTokens := points(s)
	unit := "cost"
	if byTokens {
		unit = "tokens (input + output)"
	}
	fmt.Fprintf(&b, "\n## Accuracy against %s\n\n", unit)
	if chart != "" {
		fmt.Fprintf(&b, "![accuracy against %s](%s)\n\n", unit, chart)
	}
	fmt.Fprintf(&b, "| answered by | accuracy | %s |\n|---|--:|--:|\n", unit)
	for _, p := range pts {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", mdEscape(p.name), pct(p.acc), spendText(p.cost, byTokens))
	}
	fmt.Fprintf(&b, "\nAn agent alone is its first answers and what it spent until them. Oracle (any answer): %s.\n", pct(s.OracleAny))
	t := s.Tokens
	fmt.Fprintf(&b, "\nTokens: %s input (%s cached), %s output (%s reasoning). Cost: %s. Time: %s per item on average, %s longest.\n",
		num(t.Input), num(t.CachedInput), num(t.Output), num(t.Reasoning), cost(s.CostUSD, s.CostKnown), secs(s.ItemSeconds.Mean), secs(s.ItemSeconds.Max))
	b.WriteString("\n## Items\n\n| item | status | voted | oracle (any) | agree | time | cost | log |\n|---|---|---|---|---|--:|--:|---|\n")
	for _, it := range s.PerItem {
		if it.Status == "pending" {
			fmt.Fprintf(&b, "| %s | not run | | | | | | |\n", mdEscape(it.ID))
			continue
		}
		if it.Status != StatusOK {
			fmt.Fprintf(&b, "| %s | %s | | | | %s | %s | %s |\n", mdEscape(it.ID), it.Status, secs(it.Seconds), cost(it.CostUSD, true), mdEscape(strings.TrimSpace(oneLine(it.Error)+" "+it.LogDir)))
			continue
		}
		fmt.Fprintf(&b, "| %s | ok | %s | %s | %s | %s | %s | %s |\n", mdEscape(it.ID), yes(it.Correct), yes(it.Oracle), yes(it.Agree), secs(it.Seconds), cost(it.CostUSD, true), mdEscape(it.LogDir))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func spendText(c float64, byTokens bool) string {
	if byTokens {
		return num(int64(c))
	}
	return cost(c, true)
}

// mdEscape keeps a table cell one cell.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ").Replace(s)
}

// WriteChart draws the accuracy of each point against its cost as an SVG scatter plot, with
// the oracle as a dashed line: how much of the reachable accuracy each way of answering gets,
// and at what price.
func WriteChart(w io.Writer, s Summary) error {
	pts, byTokens := points(s)
	const width, height, left, right, top, bottom = 640.0, 400.0, 70.0, 170.0, 30.0, 50.0
	maxCost := 0.0
	for _, p := range pts {
		maxCost = math.Max(maxCost, p.cost)
	}
	if maxCost == 0 {
		maxCost = 1
	}
	x := func(c float64) float64 { return left + (width-left-right)*c/maxCost }
	y := func(r float64) float64 { return top + (height-top-bottom)*(1-r) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%g" height="%g" fill="white"/>`+"\n", width, height)
	for _, r := range []float64{0, 0.25, 0.5, 0.75, 1} {
		fmt.Fprintf(&b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#ddd"/>`+"\n", left, y(r), width-right, y(r))
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" text-anchor="end">%.0f%%</text>`+"\n", left-6, y(r)+4, 100*r)
	}
	fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="black"/>`+"\n", left, height-bottom, width-right, height-bottom)
	fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="black"/>`+"\n", left, top, left, height-bottom)
	axis := "cost (USD)"
	if byTokens {
		axis = "tokens (input + output)"
	}
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle">%s</text>`+"\n", (left+width-right)/2, height-12, axis)
	maxText := spendText(maxCost, byTokens)
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="end">%s</text>`+"\n", width-right, height-bottom+16, html.EscapeString(maxText))
	fmt.Fprintf(&b, `<text x="%g" y="%g">0</text>`+"\n", left, height-bottom+16)
	// What the points' labels must not cover: the axis numbers, the oracle's label, the points.
	taken := []labelBox{endTextBox(width-right, height-bottom+16, maxText), textBox(left, height-bottom+16, "0")}
	fmt.Fprintf(&b, `<text x="16" y="%g" transform="rotate(-90 16 %g)" text-anchor="middle">accuracy</text>`+"\n", (top+height-bottom)/2, (top+height-bottom)/2)
	if s.OracleAny.Of > 0 {
		oy := y(s.OracleAny.Rate)
		fmt.Fprintf(&b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#888" stroke-dasharray="5,4"/>`+"\n", left, oy, width-right, oy)
		oracle := "oracle " + pct(s.OracleAny)
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" fill="#555">%s</text>`+"\n", width-right+6, oy+4, oracle)
		taken = append(taken, textBox(width-right+6, oy+4, oracle))
	}
	n := len(pts)
	lx, want, texts := make([]float64, n), make([]float64, n), make([]string, n)
	for k, p := range pts {
		px, py := x(p.cost), y(p.acc.Rate)
		lx[k], want[k], texts[k] = px+8, py+4, p.name+" "+pct(p.acc)
		taken = append(taken, labelBox{px - 5, py - 5, px + 5, py + 5})
	}
	// The team's label is placed first, so it stays beside its point; labels stay above the
	// axis title.
	order := []int{n - 1}
	for k := range n - 1 {
		order = append(order, k)
	}
	at := placeLabels(lx, want, texts, order, taken, 14, height-24)
	for k, p := range pts {
		color := "#4477aa"
		if k == n-1 {
			color = "#cc3311" // the team
		}
		px, py := x(p.cost), y(p.acc.Rate)
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="5" fill="%s"/>`+"\n", px, py, color)
		if at[k] != want[k] {
			// A label moved off its point's line: a leader line ties them.
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#999"/>`+"\n", px+4, py, lx[k]-2, at[k]-4)
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f">%s</text>`+"\n", lx[k], at[k], html.EscapeString(texts[k]))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
