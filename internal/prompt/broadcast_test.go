package prompt

import (
	"strings"
	"testing"
)

// broadcast_sensitivity words the description; waiting by default offers ask_others alone,
// otherwise the two tools that collect answers too; the person is never asked by label.
func TestBroadcastTools(t *testing.T) {
	names := func(human bool, wait bool) string {
		var out []string
		for _, s := range BroadcastTools(human, "medium", wait, []string{"agent2"}) {
			out = append(out, s.Name)
		}
		return strings.Join(out, ",")
	}
	if got := names(false, true); got != "ask_others" {
		t.Errorf("waiting: %s", got)
	}
	if got := names(false, false); got != "ask_others,check_broadcast_status,get_broadcast_responses" {
		t.Errorf("not waiting: %s", got)
	}
	low, high := BroadcastTools(false, "low", true, nil)[0].Description, BroadcastTools(false, "high", true, nil)[0].Description
	if low == high || !strings.Contains(low, "only when you are blocked") || !strings.Contains(high, "Ask often") {
		t.Errorf("sensitivity:\nlow  %s\nhigh %s", low, high)
	}
	props := func(human bool) map[string]any {
		return BroadcastTools(human, "medium", true, []string{"agent2"})[0].Parameters["properties"].(map[string]any)
	}
	if _, ok := props(false)["target_agents"]; !ok {
		t.Error("agents mode offers no target_agents")
	}
	if _, ok := props(true)["target_agents"]; ok {
		t.Error("human mode offers target_agents")
	}
	if _, ok := props(false)["wait"]; ok {
		t.Error("wait offered while waiting is the default and nothing collects later")
	}
	if s := ShadowSystem("You are terse.", "high"); !strings.HasPrefix(s, "You are terse.\n\n---\n\n") || !strings.Contains(s, "Be thorough") {
		t.Errorf("shadow system %q", s)
	}
}
