package temporalrun

import (
	"strings"
	"testing"

	"massgen/internal/taskplan"
)

// An execution run's plan travels in every turn's input: one past the bound is refused with
// what to do, before the session starts; a plan of ordinary size goes.
func TestCheckPlanSeed(t *testing.T) {
	task := func(desc int) taskplan.Task {
		return taskplan.Task{ID: "T", Description: strings.Repeat("d", desc), Status: taskplan.Pending, Priority: "medium", Dependencies: []string{}}
	}
	big := make([]taskplan.Task, taskplan.MaxTasksCeiling)
	for k := range big {
		big[k] = task(taskplan.MaxDescBytes)
		big[k].Metadata = map[string]any{"verification": strings.Repeat("v", taskplan.MaxMetaBytes-100)}
	}
	tests := []struct {
		name  string
		tasks []taskplan.Task
		want  string
	}{
		{"none", nil, ""},
		{"ordinary", []taskplan.Task{task(200), task(300)}, ""},
		{"at the model's bounds", big, "over the 256 KiB a session on Temporal carries"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkPlanSeed(tt.tasks)
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("checkPlanSeed = %v, want %q", err, tt.want)
			}
		})
	}
}
