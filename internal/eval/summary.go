package eval

import (
	"massgen/internal/config"
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

	// Spend is what one graded item cost on average: the team's calls and tokens, split by
	// whether the agents' first answers agreed, beside those of the majority baseline.
	Spend Spend `json:"spend_per_item"`
	// BestMember is the agent whose own answers were right most often, alone and, in a
	// simulated run, sampled several times with a majority vote over its samples
	// (self-consistency): the single model the team must beat at the same cost.
	BestMember []Baseline `json:"best_member,omitempty"`
	// Simulation is set when simulated agents answered (massgen eval --simulate).
	Simulation *SimulationInfo `json:"simulation,omitempty"`

	Tokens    Tokens  `json:"tokens"`
	Calls     int     `json:"calls"`
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
	ID string `json:"id"`
	// Model is its model (config.ModelKey), what a weights file keys.
	Model string `json:"model,omitempty"`
	First Ratio  `json:"first_answer_accuracy"`
	Last  Ratio  `json:"last_answer_accuracy"`
	// CostUSD is its whole spend; FirstCostUSD its spend up to its first answers, what it
	// would have cost alone.
	CostUSD      float64 `json:"cost_usd"`
	FirstCostUSD float64 `json:"first_cost_usd"`
	FirstTokens  Tokens  `json:"first_tokens"`
	// FirstCalls are its calls until its first answers, over the graded items.
	FirstCalls int `json:"first_calls"`
}

// PerItem is a mean over graded items: model calls, and tokens (input + output).
type PerItem struct {
	Calls  float64 `json:"calls"`
	Tokens float64 `json:"tokens"`
}

// Spend is what the graded items cost on average.
type Spend struct {
	// Team is the whole session; Agree and Disagree the same over the items where every
	// agent's first answer said the same thing (AgreeItems of them) and the others.
	Team          PerItem `json:"team"`
	Agree         PerItem `json:"agree"`
	AgreeItems    int     `json:"agree_items"`
	Disagree      PerItem `json:"disagree"`
	DisagreeItems int     `json:"disagree_items"`
	// Majority is every agent's first answer, what the majority baseline needs.
	Majority PerItem `json:"majority"`
}

// Baseline is the best member answering alone: Samples answers per item and a majority vote
// over them (one sample: its own answer).
type Baseline struct {
	Agent    string  `json:"agent"`
	Samples  int     `json:"samples"`
	Accuracy Ratio   `json:"accuracy"`
	Spend    PerItem `json:"spend_per_item"`
	// EqualCost marks the sample count whose tokens come closest to the team's.
	EqualCost bool `json:"equal_cost,omitempty"`
}

// SimulationInfo describes a simulated run.
type SimulationInfo struct {
	Population string `json:"population"`
	Seed       int64  `json:"seed"`
	// Tokens says how the token counts were made.
	Tokens string `json:"tokens"`
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
	var team, agree, disagree, alone sum
	for _, it := range items {
		rec, ok := recs[it.ID]
		if !ok {
			s.Pending++
			s.PerItem = append(s.PerItem, ItemSummary{ID: it.ID, Status: "pending"})
			continue
		}
		finished++
		s.Tokens = s.Tokens.Add(rec.Tokens)
		s.Calls += rec.Calls
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
		team.add(rec.Calls, rec.Tokens)
		if g.agree {
			agree.add(rec.Calls, rec.Tokens)
		} else {
			disagree.add(rec.Calls, rec.Tokens)
		}
		var firstCalls int
		var firstTokens Tokens
		for k, a := range rec.Agents {
			as := agent(a.ID)
			as.Model = config.ModelKey(config.Backend{Type: a.Backend, Model: a.Model})
			if !g.absent[k] {
				as.First.add(g.first[k])
				as.Last.add(g.last[k])
			}
			as.CostUSD += a.CostUSD
			as.FirstCostUSD += a.FirstCostUSD
			as.FirstTokens = as.FirstTokens.Add(a.FirstTokens)
			as.FirstCalls += a.FirstCalls
			firstCalls += a.FirstCalls
			firstTokens = firstTokens.Add(a.FirstTokens)
		}
		alone.add(firstCalls, firstTokens)
		for _, v := range rec.Votes {
			s.SelfVotes.add(v.Voter == v.For)
		}
	}
	if finished > 0 {
		s.ItemSeconds.Mean = s.ItemSeconds.Total / float64(finished)
	}
	s.Spend = Spend{Team: team.mean(), Agree: agree.mean(), AgreeItems: agree.items,
		Disagree: disagree.mean(), DisagreeItems: disagree.items, Majority: alone.mean()}
	if best := bestAgent(s.Agents); best >= 0 {
		a := s.Agents[best]
		s.BestMember = []Baseline{{Agent: a.ID, Samples: 1, Accuracy: a.First,
			Spend: PerItem{Calls: per(a.FirstCalls, s.Graded), Tokens: per(int(a.FirstTokens.Input+a.FirstTokens.Output), s.Graded)}}}
	}
	return s
}

// bestAgent is the index of the agent whose first answers were right most often (the first
// such), -1 when none was graded.
func bestAgent(agents []AgentSummary) int {
	best := -1
	for k, a := range agents {
		if a.First.Of > 0 && (best < 0 || a.First.Rate > agents[best].First.Rate) {
			best = k
		}
	}
	return best
}

// sum adds up calls and tokens (input + output) over items.
type sum struct {
	items, calls int
	tokens       int64
}

func (s *sum) add(calls int, t Tokens) {
	s.items++
	s.calls += calls
	s.tokens += t.Input + t.Output
}

func (s sum) mean() PerItem {
	return PerItem{Calls: per(s.calls, s.items), Tokens: per(int(s.tokens), s.items)}
}

func per(n, items int) float64 {
	if items == 0 {
		return 0
	}
	return float64(n) / float64(items)
}

// graded is one record graded.
type graded struct {
	voted, oracleLatest, oracleAny, majority, agree bool
	first, last                                     []bool // by agent, config order
	// absent marks the agents lazy start never needed: they have no answer to grade.
	absent []bool
}

func gradeRecord(it Item, rec Record) graded {
	g := graded{voted: it.Correct(rec.Final), first: make([]bool, len(rec.Agents)), last: make([]bool, len(rec.Agents)),
		absent: make([]bool, len(rec.Agents))}
	var firsts []string // first answers, "" for an agent without one
	for k, a := range rec.Agents {
		if len(a.Answers) == 0 && a.Endorsed == "" && a.Calls == 0 && a.Error == "" {
			g.absent[k] = true // held back by lazy start and never needed: not in the session's vote
			continue
		}
		if len(a.Answers) == 0 && a.Endorsed != "" {
			a.Answers = []string{a.Endorsed}
		}
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
