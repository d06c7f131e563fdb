package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"massgen/internal/usage"
)

// WriteText prints the summary for people: the accuracy table, each agent alone, spend and
// time, then one line per item with its log folder.
func WriteText(w io.Writer, s Summary) error {
	var b strings.Builder
	fmt.Fprintf(&b, "massgen eval: %s, %s (%d graded, %d failed, %d not run)\n", s.Dataset, plural(s.Items, "item"), s.Graded, s.Failed, s.Pending)
	fmt.Fprintf(&b, "results: %s\n", s.Results)
	if sim := s.Simulation; sim != nil {
		fmt.Fprintf(&b, "simulated: population %s, seed %d; tokens are %s\n", sim.Population, sim.Seed, sim.Tokens)
	}
	b.WriteString("\n")

	ms := measures(s)
	width := 0
	for _, r := range ms {
		width = max(width, len(r.name))
	}
	fmt.Fprintf(&b, "%-*s %7s %6s %7s %11s %12s\n", width, "", "correct", "of", "rate", "calls/item", "tokens/item")
	for _, r := range ms {
		line := fmt.Sprintf("%-*s %7d %6d %7s", width, r.name, r.r.N, r.r.Of, pct(r.r))
		if r.spend != nil {
			line += fmt.Sprintf(" %11s %12s", calls(r.spend.Calls), num(int64(math.Round(r.spend.Tokens))))
		}
		b.WriteString(line + "\n")
	}
	if s.Graded > 0 {
		fmt.Fprintf(&b, "\nthe team per item: %s\n", splitSpend(s.Spend))
	}

	if len(s.Agents) > 0 {
		b.WriteString("\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "agent\tfirst answer (alone)\tlast answer\tcost\tcost to first answer")
		for _, a := range s.Agents {
			fmt.Fprintf(tw, "%s\t%d/%d %s\t%d/%d %s\t%s\t%s\n", a.ID, a.First.N, a.First.Of, pct(a.First), a.Last.N, a.Last.Of, pct(a.Last),
				cost(a.CostUSD, s.CostKnown), cost(a.FirstCostUSD, s.CostKnown))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}

	t := s.Tokens
	fmt.Fprintf(&b, "\ntokens: %s input (%s cached), %s output (%s reasoning)\n", num(t.Input), num(t.CachedInput), num(t.Output), num(t.Reasoning))
	fmt.Fprintf(&b, "cost: %s\n", cost(s.CostUSD, s.CostKnown))
	fmt.Fprintf(&b, "time: %s this run; per item %s mean, %s longest, %s in all\n", secs(s.WallSeconds), secs(s.ItemSeconds.Mean), secs(s.ItemSeconds.Max), secs(s.ItemSeconds.Total))
	if s.Limits != "" {
		fmt.Fprintf(&b, "limits: %s\n", s.Limits)
	}

	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "item\tstatus\tvoted\toracle (any)\tagree\ttime\tcost\tlog")
	for _, it := range s.PerItem {
		if it.Status != StatusOK {
			detail := it.LogDir
			if it.Error != "" {
				detail = strings.TrimSpace(oneLine(it.Error) + "  " + it.LogDir)
			}
			if it.Status == "pending" {
				fmt.Fprintf(tw, "%s\tnot run\n", it.ID)
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t\t\t\t%s\t%s\t%s\n", it.ID, it.Status, secs(it.Seconds), cost(it.CostUSD, true), detail)
			continue
		}
		fmt.Fprintf(tw, "%s\tok\t%s\t%s\t%s\t%s\t%s\t%s\n", it.ID, yes(it.Correct), yes(it.Oracle), yes(it.Agree), secs(it.Seconds), cost(it.CostUSD, true), it.LogDir)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// The table of items pads its last column; lines end without spaces.
	lines := strings.Split(b.String(), "\n")
	for k, l := range lines {
		lines[k] = strings.TrimRight(l, " ")
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n"))
	return err
}

// measure is one line of the accuracy table; spend is what answering that way cost per item,
// when it is a way of answering.
type measure struct {
	name  string
	r     Ratio
	spend *PerItem
}

func measures(s Summary) []measure {
	oracle := fmt.Sprintf("oracle@%d", len(s.Agents))
	ms := []measure{
		{"voted (the team's final answer)", s.Voted, &s.Spend.Team},
		{"majority vote of first answers", s.Majority, &s.Spend.Majority},
		{oracle + ": some agent's latest answer", s.OracleLatest, nil},
		{oracle + ": some answer, any version", s.OracleAny, nil},
	}
	for k := range s.BestMember {
		b := &s.BestMember[k]
		ms = append(ms, measure{bestName(*b), b.Accuracy, &b.Spend})
	}
	return append(ms,
		measure{"agreement of first answers", s.Agreement, nil},
		measure{"self-votes (of the deciding votes)", s.SelfVotes, nil})
}

// bestName names a best-member line: "best member alone (a)", "best member x3, majority (a)".
func bestName(b Baseline) string {
	name := "best member alone (" + b.Agent + ")"
	if b.Samples > 1 {
		name = fmt.Sprintf("best member x%d, majority (%s)", b.Samples, b.Agent)
	}
	if b.EqualCost {
		name += ", team's tokens"
	}
	return name
}

// splitSpend is what the team spent per item where the first answers agreed and where not.
func splitSpend(sp Spend) string {
	part := func(p PerItem, n int, where string) string {
		if n == 0 {
			return "no item " + where
		}
		return fmt.Sprintf("%s calls and %s tokens %s (%s)", calls(p.Calls), num(int64(math.Round(p.Tokens))), where, plural(n, "item"))
	}
	return part(sp.Agree, sp.AgreeItems, "where the first answers agree") + "; " +
		part(sp.Disagree, sp.DisagreeItems, "where they differ")
}

// calls is a mean number of calls per item.
func calls(c float64) string { return strconv.FormatFloat(c, 'f', 2, 64) }

// WriteJSON prints the summary as indented JSON.
func WriteJSON(w io.Writer, s Summary) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // answers and errors read as written: "a < b"
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return fmt.Errorf("write the summary: %w", err)
	}
	return nil
}

func pct(r Ratio) string {
	if r.Of == 0 {
		return "n/a"
	}
	return strconv.FormatFloat(100*r.Rate, 'f', 1, 64) + "%"
}

// cost is a cost, marked when some model's price is unknown and counted as 0.
func cost(c float64, known bool) string { return usage.Amount{USD: c, Known: known}.String() }

func secs(s float64) string {
	if s < 10 {
		return strconv.FormatFloat(s, 'f', 2, 64) + "s"
	}
	return strconv.FormatFloat(s, 'f', 1, 64) + "s"
}

// num writes n with thousands separators.
func num(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 {
		return "-" + num(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
