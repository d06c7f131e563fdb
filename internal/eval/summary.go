package eval

import (
	"math"
	"slices"
)

// Ratio is N out of Of; Rate is N/Of (0 when Of is 0).
type Ratio struct {
	N    int     `json:"n"`
	Of   int     `json:"of"`
	Rate float64 `json:"rate"`
}

func (r *Ratio) add(ok bool) {
	r.Of++
	if ok {
		r.N++
	}
	r.Rate = float64(r.N) / float64(r.Of)
}

// Summary is the report over a dataset. The accuracy figures count the graded items, those
// whose session ran (Failed items are left out of them, Pending ones have not run); spend and
// time count every finished item, failed ones included.
type Summary struct {
	Dataset string `json:"dataset"`
	Results string `json:"results"`
	Items   int    `json:"items"`   // in the dataset
	Graded  int    `json:"graded"`  // status ok
	Failed  int    `json:"failed"`  // status failed (a resumed run tries them again)
	Pending int    `json:"pending"` // not run yet (interrupted, or stopped early)

	// Voted is the team's final answer graded.
	Voted Ratio `json:"voted_accuracy"`
	// OracleLatest: some agent's latest answer was correct. OracleAny: some answer of some
	// agent, any version, was correct. Either is the most the vote could have picked.
	OracleLatest Ratio `json:"oracle_latest"`
	OracleAny    Ratio `json:"oracle_any"`
	// Majority is the majority vote over the agents' first answers (their answers alone),
	// grouped by the grader's normal form, ties going to the group of the first agent in
	// config order.
	Majority Ratio `json:"majority_first"`
	// Agreement: every agent's first answer says the same thing (the grader's normal form).
	Agreement Ratio `json:"agreement"`
	// SelfVotes are the votes of the final tallies cast for the voter's own answer, out of
	// all of them.
	SelfVotes Ratio          `json:"self_votes"`
	Agents    []AgentSummary `json:"agents"`

	Tokens    Tokens  `json:"tokens"`
	CostUSD   float64 `json:"cost_usd"`
	CostKnown bool    `json:"cost_known"` // false when some model's price is unknown (counted as 0)
	// ItemSeconds are the items' wall times; WallSeconds the run's own (items overlap with
	// --concurrency, and a resumed run only counts its part).
	ItemSeconds Seconds `json:"item_seconds"`
	WallSeconds float64 `json:"wall_seconds"`
	Limits      string  `json:"limits,omitempty"`

	PerItem []ItemSummary `json:"per_item"`
}

// AgentSummary is one agent's accuracy: its first answers (what it would have said alone) and
// its last ones (after reading the others), with its spend.
type AgentSummary struct {
	ID    string `json:"id"`
	First Ratio  `json:"first_answer_accuracy"`
	Last  Ratio  `json:"last_answer_accuracy"`
	// CostUSD is its whole spend; FirstCostUSD its spend up to its first answers, what it
	// would have cost alone.
	CostUSD      float64 `json:"cost_usd"`
	FirstCostUSD float64 `json:"first_cost_usd"`
	FirstTokens  Tokens  `json:"first_tokens"`
}

// Seconds sum up the items' wall times.
type Seconds struct {
	Total float64 `json:"total"`
	Mean  float64 `json:"mean"`
	Max   float64 `json:"max"`
}

// ItemSummary is one item in the report.
type ItemSummary struct {
	ID      string  `json:"id"`
	Status  string  `json:"status"` // ok | failed | pending
	Correct bool    `json:"correct"`
	Oracle  bool    `json:"oracle_any"`
	Agree   bool    `json:"agreement"`
	Seconds float64 `json:"wall_seconds"`
	CostUSD float64 `json:"cost_usd"`
	LogDir  string  `json:"log_dir,omitempty"`
	Error   string  `json:"error,omitempty"`
}

// Summarize grades the records of items afresh and adds them up. Records of ids not among
// items are left out.
func Summarize(items []Item, recs map[string]Record) Summary {
	s := Summary{Items: len(items), CostKnown: true, Agents: []AgentSummary{}, PerItem: []ItemSummary{}}
	agentAt := map[string]int{}
	agent := func(id string) *AgentSummary {
		k, ok := agentAt[id]
		if !ok {
			k = len(s.Agents)
			agentAt[id] = k
			s.Agents = append(s.Agents, AgentSummary{ID: id})
		}
		return &s.Agents[k]
	}
	finished := 0
	for _, it := range items {
		rec, ok := recs[it.ID]
		if !ok {
			s.Pending++
			s.PerItem = append(s.PerItem, ItemSummary{ID: it.ID, Status: "pending"})
			continue
		}
		finished++
		s.Tokens = s.Tokens.Add(rec.Tokens)
		s.CostUSD += rec.CostUSD
		s.CostKnown = s.CostKnown && rec.CostKnown
		s.ItemSeconds.Total += rec.Seconds
		s.ItemSeconds.Max = math.Max(s.ItemSeconds.Max, rec.Seconds)
		is := ItemSummary{ID: it.ID, Status: rec.Status, Seconds: rec.Seconds, CostUSD: rec.CostUSD, LogDir: rec.LogDir, Error: rec.Error}
		if rec.Status != StatusOK {
			s.Failed++
			s.PerItem = append(s.PerItem, is)
			continue
		}
		s.Graded++
		g := gradeRecord(it, rec)
		is.Correct, is.Oracle, is.Agree = g.voted, g.oracleAny, g.agree
		s.PerItem = append(s.PerItem, is)
		s.Voted.add(g.voted)
		s.OracleLatest.add(g.oracleLatest)
		s.OracleAny.add(g.oracleAny)
		s.Majority.add(g.majority)
		s.Agreement.add(g.agree)
		for k, a := range rec.Agents {
			as := agent(a.ID)
			as.First.add(g.first[k])
			as.Last.add(g.last[k])
			as.CostUSD += a.CostUSD
			as.FirstCostUSD += a.FirstCostUSD
			as.FirstTokens = as.FirstTokens.Add(a.FirstTokens)
		}
		for _, v := range rec.Votes {
			s.SelfVotes.add(v.Voter == v.For)
		}
	}
	if finished > 0 {
		s.ItemSeconds.Mean = s.ItemSeconds.Total / float64(finished)
	}
	return s
}

// graded is one record graded.
type graded struct {
	voted, oracleLatest, oracleAny, majority, agree bool
	first, last                                     []bool // by agent, config order
}

func gradeRecord(it Item, rec Record) graded {
	g := graded{voted: it.Correct(rec.Final), first: make([]bool, len(rec.Agents)), last: make([]bool, len(rec.Agents))}
	var firsts []string // first answers, "" for an agent without one
	for k, a := range rec.Agents {
		if len(a.Answers) == 0 {
			firsts = append(firsts, "")
			continue
		}
		firsts = append(firsts, a.Answers[0])
		g.first[k] = it.Correct(a.Answers[0])
		g.last[k] = it.Correct(a.Answers[len(a.Answers)-1])
		g.oracleLatest = g.oracleLatest || g.last[k]
		for _, ans := range a.Answers {
			g.oracleAny = g.oracleAny || it.Correct(ans)
		}
	}
	g.majority, g.agree = majority(it, firsts)
	return g
}

// majority votes over answers (one per agent, config order; "" for none): the answer of the
// largest group of answers with the same normal form wins, a tie going to the group whose
// first member comes first. agree is whether every agent answered and all answers are in one
// group. Answers the grader cannot read (no number, no letter) join no group.
func majority(it Item, answers []string) (correct, agree bool) {
	type group struct {
		key    string
		answer string // its first member's answer
		n      int
	}
	var groups []group
	read := 0
	for _, a := range answers {
		if a == "" {
			continue
		}
		key := it.Normal(a)
		if key == "" {
			continue
		}
		read++
		if k := slices.IndexFunc(groups, func(g group) bool { return g.key == key }); k >= 0 {
			groups[k].n++
			continue
		}
		groups = append(groups, group{key: key, answer: a, n: 1})
	}
	if len(groups) == 0 {
		return false, false
	}
	best := 0 // groups are in order of their first member: the first largest wins ties
	for k, g := range groups {
		if g.n > groups[best].n {
			best = k
		}
	}
	return it.Correct(groups[best].answer), len(groups) == 1 && read == len(answers)
}
