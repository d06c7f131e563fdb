package prompt

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/provider"
)

func TestPlanningVerdict(t *testing.T) {
	for _, tc := range []struct {
		reply   string
		hold    bool
		blocked []string
		how     string
	}{
		{"IRREVERSIBLE: NO\nBLOCKED_TOOLS:", false, nil, "no irreversible"},
		{"IRREVERSIBLE: YES\nBLOCKED_TOOLS: mcp__chat__post, `send_email` ,", true, []string{"mcp__chat__post", "send_email"}, "irreversible actions needed"},
		{"**IRREVERSIBLE:** yes\n**BLOCKED_TOOLS:**", true, nil, "no tool named"},
		{"Thinking...\n  irreversible: No", false, nil, "no irreversible"},
		{"No, nothing here is irreversible.", false, nil, "said no"},
		{"Yes: it posts to Slack.", true, nil, "said yes"},
		{"Maybe yes, maybe no.", true, nil, "unclear"},
		{"", true, nil, "unclear"},
	} {
		hold, blocked, how := PlanningVerdict(tc.reply)
		if hold != tc.hold || !cmp.Equal(blocked, tc.blocked) || !strings.Contains(how, tc.how) {
			t.Errorf("PlanningVerdict(%q) = %v %q %q", tc.reply, hold, blocked, how)
		}
	}
}

func TestPlanningPrompts(t *testing.T) {
	check := PlanningCheck("  Post the news.  ", []provider.ToolSpec{{Name: "mcp__chat__post", Description: "Post a\nmessage."}, {Name: "mcp__chat__read"}})
	for _, want := range []string{"TASK:\nPost the news.\n", "- mcp__chat__post: Post a message.\n- mcp__chat__read\n", "IRREVERSIBLE: YES or NO\nBLOCKED_TOOLS:"} {
		if !strings.Contains(check, want) {
			t.Errorf("check lacks %q:\n%s", want, check)
		}
	}
	if got := Planning("", nil); !strings.Contains(got, PlanningInstruction) || !strings.Contains(got, "every MCP tool") {
		t.Errorf("Planning default = %q", got)
	}
	if got := Planning("Only plan.", []string{"mcp__a__b"}); !strings.Contains(got, "Only plan.\nHeld back until the final presentation: mcp__a__b") {
		t.Errorf("Planning custom = %q", got)
	}
}
