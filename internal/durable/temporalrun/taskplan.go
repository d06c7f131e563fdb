package temporalrun

import (
	"encoding/json"
	"fmt"

	"massgen/internal/taskplan"
)

// maxPlanSeedBytes bounds an execution run's plan (--execute-plan) as it travels in the
// session's input, which every turn's activity input repeats: a plan a model wrote at the
// largest bounds (200 tasks with long descriptions and metadata) would pass Temporal's
// payload limit.
const maxPlanSeedBytes = 256 << 10

// checkPlanSeed refuses a plan too large to travel with the session.
func checkPlanSeed(tasks []taskplan.Task) error {
	if len(tasks) == 0 {
		return nil
	}
	b, err := json.Marshal(tasks)
	if err != nil {
		return fmt.Errorf("the plan to execute: %w", err)
	}
	if len(b) > maxPlanSeedBytes {
		return fmt.Errorf("the plan to execute is %d KiB, over the %d KiB a session on Temporal carries: shorten its tasks' descriptions and metadata, or run it without --temporal",
			len(b)>>10, maxPlanSeedBytes>>10)
	}
	return nil
}
