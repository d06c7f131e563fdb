package coord

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Vote weighting (orchestrator.vote_weighting): what a vote is worth in the tally.
//
//   - plain: every vote is worth 1 (MassGen's majority).
//   - weighted: a vote is worth its voter's weight (orchestrator.agent_weights, or weights
//     learned by massgen eval).
//   - confidence: a vote is worth its voter's weight times the confidence the voter stated
//     (0 to 1; a vote without one counts at MissingConfidence).
//
// Worth is kept in whole points, weights to 3 decimals and confidences to 2, so that a tally
// is the same sum in whatever order votes are added: Decided compares sums for equality, and
// a replay of the log must reach the winner the live run reached.
const (
	WeightPlain      = "plain"
	WeightWeighted   = "weighted"
	WeightConfidence = "confidence"
)

// WeightModes lists the vote_weighting values.
var WeightModes = []string{WeightPlain, WeightWeighted, WeightConfidence}

// MissingConfidence is what a vote without a stated confidence counts at under confidence
// weighting: neither sure nor unsure. Counting it at 1 would pay a model for leaving it out.
const MissingConfidence = 0.5

// Bounds of an agent's weight: the config refuses others, and the machine clamps to them.
const (
	MinWeight = 0.001
	MaxWeight = 1000
)

// Points per unit: a vote of weight 1 and confidence 1 is worth pointsPerVote.
const (
	weightScale   = 1000
	confScale     = 100
	pointsPerVote = weightScale * confScale
)

// Weighting configures how votes are weighed.
type Weighting struct {
	// Mode is WeightPlain (also ""), WeightWeighted or WeightConfidence.
	Mode string
	// Weights are the agents' weights by index (nil, or a missing or zero entry: 1). Plain
	// weighting ignores them.
	Weights []float64
}

// Confidence reads an optional confidence argument: absent or null is none; otherwise a number
// from 0 to 1, kept to 2 decimals. The error says what to send instead.
func Confidence(raw json.RawMessage) (*float64, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var c float64
	if err := json.Unmarshal(raw, &c); err != nil {
		if s, uerr := strconv.Unquote(string(raw)); uerr == nil {
			if f, perr := strconv.ParseFloat(s, 64); perr == nil {
				c, err = f, nil
			}
		}
		if err != nil {
			return nil, fmt.Errorf(`"confidence" is %s, not a number: give a number from 0 to 1 (0.8 for fairly sure), or leave it out`, clipArg(raw))
		}
	}
	if !(c >= 0 && c <= 1) {
		return nil, fmt.Errorf(`"confidence" is %v, outside 0 to 1: give the probability that you are right, such as 0.8, or leave it out`, c)
	}
	c = math.Round(c*confScale) / confScale
	return &c, nil
}

func clipArg(raw []byte) string {
	if len(raw) > 40 {
		return string(raw[:40]) + "..."
	}
	return string(raw)
}

// Weight is agent i's weight as the tally uses it: 1 under plain weighting, else its
// configured weight clamped to [MinWeight, MaxWeight] and kept to 3 decimals.
func (m *Machine) Weight(i int) float64 {
	return float64(weightPoints(m.s.Voting.Mode, m.rawWeight(i))) / weightScale
}

func (m *Machine) rawWeight(i int) float64 {
	if w := m.s.Voting.Weights; i < len(w) {
		return w[i]
	}
	return 0
}

func weightPoints(mode string, w float64) int64 {
	if mode != WeightWeighted && mode != WeightConfidence || w == 0 {
		return weightScale
	}
	return int64(math.Round(min(max(w, MinWeight), MaxWeight) * weightScale))
}

// Points is what a vote is worth under mode, cast by an agent of weight (0: 1) with the
// confidence conf (nil: none), in points: PointsPerVote for a plain vote. Whole points add up
// the same in any order, so every reader of a log (the read model, the studio) tallies as the
// machine did.
func Points(mode string, weight float64, conf *float64) int64 {
	c := int64(confScale)
	if mode == WeightConfidence {
		x := MissingConfidence
		if conf != nil {
			x = *conf
		}
		c = int64(math.Round(x * confScale))
	}
	return weightPoints(mode, weight) * c
}

// PointsPerVote is what a plain vote is worth in Points.
const PointsPerVote = pointsPerVote

// points is what v is worth in the tally.
func (m *Machine) points(v Vote) int64 {
	return Points(m.s.Voting.Mode, m.rawWeight(v.Voter), v.Confidence)
}

// maxPoints is the most a vote of agent i could be worth: its weight at full confidence.
func (m *Machine) maxPoints(i int) int64 {
	return weightPoints(m.s.Voting.Mode, m.rawWeight(i)) * confScale
}

// Worth is what v is worth in the tally now, in votes (1 for a plain vote).
func (m *Machine) Worth(v Vote) float64 { return float64(m.points(v)) / pointsPerVote }

// Weighting returns the machine's vote weighting, Mode "" reported as WeightPlain.
func (m *Machine) Weighting() Weighting {
	w := m.s.Voting
	if w.Mode == "" {
		w.Mode = WeightPlain
	}
	return w
}
