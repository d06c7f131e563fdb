package scripted

import (
	"massgen/internal/coord"

	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"massgen/internal/provider"
)

// Checklist-gated voting for scripted agents: a scripted agent that would vote first scores
// the answers it is offered with submit_checklist, then acts on the verdict. Its scores follow
// a fixed, documented rule so that tests and evals can compute the outcome by hand:
//
//   - the primary criterion (correctness): 9 when the answer contains Script.ChecklistCorrect
//     (case-insensitive), 2 when it does not; 8 for every answer when ChecklistCorrect is unset;
//   - every other criterion: 9 for an answer of at least longAnswer characters, 8 for a
//     shorter one (length looks thorough, which is what correctness-first ranking must resist).

const longAnswer = 200

// checklistTool is what the submit_checklist spec tells: the labels to score and the criteria.
type checklistTool struct {
	labels   []string
	criteria []string // E1, E2, ...
	primary  string   // the primary criterion's id, or ""
}

// readChecklistTool returns the submit_checklist tool of the request, if offered.
func readChecklistTool(req provider.Request) (checklistTool, bool) {
	for _, t := range req.Tools {
		if t.Name != coord.ToolSubmitChecklist {
			continue
		}
		var schema struct {
			Properties struct {
				Scores struct {
					Properties map[string]struct {
						Properties map[string]struct {
							Description string `json:"description"`
						} `json:"properties"`
					} `json:"properties"`
				} `json:"scores"`
			} `json:"properties"`
		}
		b, err := json.Marshal(t.Parameters)
		if err != nil || json.Unmarshal(b, &schema) != nil {
			return checklistTool{}, true
		}
		var ct checklistTool
		for label, ans := range schema.Properties.Scores.Properties {
			ct.labels = append(ct.labels, label)
			if ct.criteria == nil {
				for id, c := range ans.Properties {
					ct.criteria = append(ct.criteria, id)
					if strings.Contains(c.Description, "[primary]") {
						ct.primary = id
					}
				}
			}
		}
		ct.labels = sortLabels(ct.labels)
		slices.SortFunc(ct.criteria, func(a, b string) int { return criterionNumber(a) - criterionNumber(b) })
		return ct, true
	}
	return checklistTool{}, false
}

func criterionNumber(id string) int {
	n := 0
	fmt.Sscanf(strings.TrimPrefix(id, "E"), "%d", &n)
	return n
}

// checklistVerdict is the verdict of the checklist this turn's last tool result carries.
type checklistVerdict struct {
	Status  string `json:"status"`
	Verdict string `json:"verdict"`
	Best    string `json:"best_agent"`
}

// lastVerdict returns the verdict of an accepted checklist when it is the request's last tool
// result: the agent has scored and must now act.
func lastVerdict(req provider.Request) (checklistVerdict, bool) {
	msgs := req.Messages
	if len(msgs) == 0 {
		return checklistVerdict{}, false
	}
	last := msgs[len(msgs)-1]
	if last.Role != provider.RoleTool || last.IsError {
		return checklistVerdict{}, false
	}
	var cv checklistVerdict
	if json.Unmarshal([]byte(last.Content), &cv) != nil || cv.Status != "accepted" || cv.Verdict == "" {
		return checklistVerdict{}, false
	}
	return cv, true
}

// checklistCall scores the answers of v by the rule above.
func (p *Provider) checklistCall(v *view, ct checklistTool, propose bool) *plan {
	scores := map[string]map[string]any{}
	var report strings.Builder
	for _, l := range ct.labels {
		text := v.answers[l]
		entry := map[string]any{}
		for _, id := range ct.criteria {
			score, why := p.score(id == ct.primary, text)
			entry[id] = map[string]any{"score": score, "reasoning": why}
		}
		scores[l] = entry
		fmt.Fprintf(&report, "%s: %d characters; ", l, utf8.RuneCountInString(text))
		if c := p.script.ChecklistCorrect; c != "" {
			if containsFold(text, c) {
				fmt.Fprintf(&report, "it gives %q, which checks out. ", c)
			} else {
				fmt.Fprintf(&report, "it does not give %q, so its result is wrong whatever its length. ", c)
			}
		}
	}
	report.WriteString("Checked each answer's result against my own working before scoring the other criteria.")
	body := map[string]any{"scores": scores, "report": report.String()}
	if propose {
		body["proposed_criteria"] = []map[string]string{{"text": ProposedCriterion, "category": "standard"}}
	}
	args := marshal(body)
	return &plan{text: "Scoring the answers against the checklist.", calls: []provider.ToolCall{p.call(coord.ToolSubmitChecklist, args)}, stop: "tool_calls"}
}

// score is one criterion's score and reason for an answer.
func (p *Provider) score(primary bool, text string) (int, string) {
	if primary {
		c := p.script.ChecklistCorrect
		switch {
		case c == "":
			return 8, "I cannot check the result further."
		case containsFold(text, c):
			return 9, fmt.Sprintf("The result %q checks out.", c)
		}
		return 2, fmt.Sprintf("The result is not %q, which is what checking it gives.", c)
	}
	if utf8.RuneCountInString(text) >= longAnswer {
		return 9, "Detailed and thorough."
	}
	return 8, "Short but sufficient."
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}
