package readmodel

import (
	"fmt"

	"massgen/internal/coord"
	"massgen/internal/event"
)

// Decision is why the winner won: the tally with each vote's weight, confidence and reason,
// the strongest dissent, and the verifiers' verdicts. It is recomputed from the events alone
// (the settings and weights SessionStarted records, the votes and their confidences), so a
// replayed or resumed log explains its vote the way the live run did, and Agrees says whether
// the recomputed leader is the winner the session recorded.
type Decision struct {
	// Weighting is plain, weighted or confidence (orchestrator.vote_weighting).
	Weighting string `json:"weighting"`
	// Rule says in words how the winner was picked.
	Rule        string `json:"rule"`
	EndReason   string `json:"end_reason"`
	Winner      string `json:"winner,omitempty"` // real id
	WinnerLabel string `json:"winner_label,omitempty"`
	AnswerLabel string `json:"answer_label,omitempty"`
	Tie         bool   `json:"tie,omitempty"`
	// Tally has every agent with an answer, in config order, its current votes and what
	// they are worth.
	Tally []DecisionCount `json:"tally"`
	// Dissent is the current vote for another answer that weighs most (the earliest voter on
	// a tie); nil when every vote went to the winner.
	Dissent *Ballot `json:"dissent,omitempty"`
	// Verifiers are the verdicts of verifiers on the winning answer. None exist yet: the list
	// is always empty, and is where their verdicts will go.
	Verifiers []Verdict `json:"verifiers"`
	// Agrees: the tally recomputed from the log picks the winner the session recorded.
	Agrees bool `json:"agrees"`
	// NoVote: the session had no vote round (skip_voting, skip_coordination_rounds): the
	// first answer was presented, and there is no tally to explain.
	NoVote bool `json:"no_vote,omitempty"`
}

// DecisionCount is one answer's share of the votes.
type DecisionCount struct {
	Agent       string `json:"agent"` // real id of the author
	Label       string `json:"label"` // agent<i>
	AnswerLabel string `json:"answer_label"`
	// Confidence is what its author stated with the answer (nil: none).
	Confidence *float64 `json:"confidence,omitempty"`
	Votes      int      `json:"votes"`
	// Score is what the votes are worth: Votes under plain voting.
	Score   float64  `json:"score"`
	Ballots []Ballot `json:"ballots,omitempty"`
	points  int64
}

// Ballot is one current vote.
type Ballot struct {
	Voter      string   `json:"voter"` // real id
	VoterLabel string   `json:"voter_label"`
	For        string   `json:"for"` // the answer label voted for
	Weight     float64  `json:"weight"`
	Confidence *float64 `json:"confidence,omitempty"`
	// Worth is what the vote adds to its answer's score.
	Worth  float64 `json:"worth"`
	Reason string  `json:"reason"`
	points int64
}

// Verdict is one verifier's judgement of the winning answer (none are produced yet).
type Verdict struct {
	Verifier string `json:"verifier"`
	Verdict  string `json:"verdict"`
	Note     string `json:"note,omitempty"`
}

// Decision returns why the winner won, nil until coordination ended and in decomposition mode
// (where parts are merged, not voted on).
func (s *State) Decision() *Decision {
	if !s.CoordinationEnded || s.Settings.CoordinationMode != "" {
		return nil
	}
	mode := s.Settings.VoteWeighting
	if mode == "" {
		mode = coord.WeightPlain
	}
	d := &Decision{Weighting: mode, EndReason: s.EndReason, Winner: s.Winner, WinnerLabel: s.WinnerLabel,
		AnswerLabel: s.WinnerAnswer, Tie: s.Tie, Tally: []DecisionCount{}, Verifiers: []Verdict{}}
	at := map[string]int{}
	for _, a := range s.Agents {
		ans := a.LatestAnswer()
		if ans == nil {
			continue
		}
		at[a.ID] = len(d.Tally)
		d.Tally = append(d.Tally, DecisionCount{Agent: a.ID, Label: a.Label, AnswerLabel: ans.Label, Confidence: ans.Confidence})
	}
	for _, voter := range s.Agents {
		v := voter.Vote
		if voter.Dead || !s.Counts(v) {
			continue
		}
		k, ok := at[v.Target]
		if !ok {
			continue
		}
		w := voter.VoteWeight
		if w == 0 || mode == coord.WeightPlain {
			w = 1
		}
		pts := coord.Points(mode, voter.VoteWeight, v.Confidence)
		c := &d.Tally[k]
		c.Votes++
		c.points += pts
		c.Ballots = append(c.Ballots, Ballot{Voter: voter.ID, VoterLabel: voter.Label, For: v.AnswerLabel, Weight: w,
			Confidence: v.Confidence, Worth: float64(pts) / coord.PointsPerVote, Reason: v.Reason, points: pts})
	}
	lead := -1
	for k := range d.Tally {
		c := &d.Tally[k]
		c.Score = float64(c.points) / coord.PointsPerVote
		if lead < 0 || c.points > d.Tally[lead].points {
			lead = k
		}
	}
	if lead >= 0 {
		d.Agrees = d.Tally[lead].Agent == s.Winner
	}
	order := map[string]int{}
	for i, a := range s.Agents {
		order[a.ID] = i
	}
	for k, c := range d.Tally {
		if c.Agent == s.Winner {
			continue
		}
		for j, b := range c.Ballots {
			if d.Dissent == nil || b.points > d.Dissent.points || b.points == d.Dissent.points && order[b.Voter] < order[d.Dissent.Voter] {
				d.Dissent = &d.Tally[k].Ballots[j]
			}
		}
	}
	d.NoVote = s.Settings.SkipVoting || s.EndReason == event.EndSkipped || s.EndReason == event.EndAllAnswered
	d.Rule = s.rule(d, lead)
	return d
}

// rule says how the winner was picked; lead is the recomputed leader's place in the tally.
func (s *State) rule(d *Decision, lead int) string {
	switch {
	case d.NoVote:
		return "no vote: the first agent's answer is presented"
	case lead < 0:
		return "no agent answered"
	case d.Tally[lead].points == 0:
		return "no votes counted: the first agent with an answer wins"
	}
	var r string
	switch d.Weighting {
	case "weighted":
		r = "highest weighted score: each vote counts its voter's weight"
	case "confidence":
		r = "highest score: each vote counts its voter's weight times the confidence it stated (0.5 when it stated none)"
	default:
		r = "most votes"
	}
	if d.Tie {
		r += "; a tie, broken by agent order"
	}
	if !d.Agrees && s.Winner != "" {
		r += fmt.Sprintf("; the session recorded %s as the winner, which the votes in the log do not give", s.WinnerLabel)
	}
	return r
}
