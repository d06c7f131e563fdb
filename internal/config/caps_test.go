package config

import "testing"

// The output caps (issue 9 item 6) are ordinary orchestrator keys: read, checked and
// suggested like the others, unset meaning the engine's defaults.
func TestParse_OutputCaps(t *testing.T) {
	cases := []struct {
		name  string
		yaml  string
		want  []string
		check func(t *testing.T, o Orchestrator)
	}{
		{"set", okAgents + "orchestrator:\n  max_response_chars: 5000\n  max_tool_calls_per_response: 4\n  max_answer_chars: 3000\n", nil,
			func(t *testing.T, o Orchestrator) {
				if o.MaxResponseChars != 5000 || o.MaxToolCallsPerResponse != 4 || o.MaxAnswerChars != 3000 {
					t.Errorf("caps = %d, %d, %d", o.MaxResponseChars, o.MaxToolCallsPerResponse, o.MaxAnswerChars)
				}
			}},
		{"unset", okAgents, nil, func(t *testing.T, o Orchestrator) {
			if o.MaxResponseChars != 0 || o.MaxToolCallsPerResponse != 0 || o.MaxAnswerChars != 0 {
				t.Errorf("unset caps = %d, %d, %d, want 0 (the engine's defaults)", o.MaxResponseChars, o.MaxToolCallsPerResponse, o.MaxAnswerChars)
			}
		}},
		{"too small", okAgents + "orchestrator:\n  max_response_chars: 0\n  max_tool_calls_per_response: -1\n  max_answer_chars: \"big\"\n",
			[]string{"E 5:23 orchestrator.max_response_chars | max_response_chars must be at least 1 | default 200000",
				"E 6:32 orchestrator.max_tool_calls_per_response | must be at least 1 | default 32",
				"E 7:21 orchestrator.max_answer_chars | max_answer_chars must be a whole number"}, nil},
		{"answer cap above the response cap", okAgents + "orchestrator:\n  max_answer_chars: 300000\n",
			[]string{"W 4:1 orchestrator | max_answer_chars (300000) is above max_response_chars (200000) | raise max_response_chars to at least 375000"}, nil},
		{"misspelt", okAgents + "orchestrator:\n  max_answer_char: 10\n",
			[]string{"E 5:3 orchestrator.max_answer_char | unknown orchestrator key `max_answer_char` | did you mean `max_answer_chars`?"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, rep := Parse("c.yaml", []byte(tc.yaml))
			checkIssues(t, rep, tc.want)
			if tc.check != nil {
				if cfg == nil {
					t.Fatalf("no config:\n%s", rep.Text())
				}
				tc.check(t, cfg.Orchestrator)
			}
		})
	}
}
