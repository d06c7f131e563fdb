package provider

import "testing"

func TestProgress(t *testing.T) {
	for _, tc := range []struct {
		before, after int
		want          bool
	}{
		{0, 5, true},                   // the first bytes
		{5, 900, false},                // within the first step
		{900, ProgressStep + 10, true}, // passed a step
		{ProgressStep + 10, ProgressStep + 20, false},
		{2*ProgressStep - 1, 2 * ProgressStep, true},
		{7, 7, false}, // nothing new
	} {
		p, ok := Progress("c1", "new_answer", tc.before, tc.after)
		if ok != tc.want || ok && (p != ToolCallProgress{ID: "c1", Name: "new_answer", Bytes: tc.after}) {
			t.Errorf("Progress(%d, %d) = %+v, %v; want %v", tc.before, tc.after, p, ok, tc.want)
		}
	}
}
