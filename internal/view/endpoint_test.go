package view

import (
	"bytes"
	"strings"
	"testing"

	"massgen/internal/event"
)

// Before any request the plain header and the automation lines say where each agent's key
// goes, and mark an endpoint that is not the provider's default.
func TestHeader_MarksACustomEndpoint(t *testing.T) {
	st := event.SessionStarted{Question: "q", Agents: []event.AgentInfo{
		{ID: "a", Label: "agent1", Backend: "openai", Model: "gpt-5", BaseURL: "http://127.0.0.1:4000/v1", CustomEndpoint: true},
		{ID: "b", Label: "agent2", Backend: "openai", Model: "gpt-5", BaseURL: "https://api.openai.com/v1"},
	}}
	var plain, auto bytes.Buffer
	NewPlain(&plain).Handle(event.Event{Seq: 1, Payload: st})
	NewAutomation(&auto).Handle(event.Event{Seq: 1, Payload: st})
	for _, tc := range []struct{ out, want, not string }{
		{plain.String(), "agent1 = a (openai gpt-5 at http://127.0.0.1:4000/v1, NOT the provider's default endpoint)", ""},
		{plain.String(), "agent2 = b (openai gpt-5 at https://api.openai.com/v1)\n", ""},
		{auto.String(), "WARNING: agent1 (a) sends its requests and API key to http://127.0.0.1:4000/v1, not openai's default endpoint", "agent2"},
	} {
		if !strings.Contains(tc.out, tc.want) || tc.not != "" && strings.Contains(tc.out, tc.not) {
			t.Errorf("want %q (and no %q) in:\n%s", tc.want, tc.not, tc.out)
		}
	}
}
