package durable

import (
	"fmt"
	"testing"

	"massgen/internal/config"
)

// The browser and computer-use tools drive a Chromium (and a virtual desktop) on the worker
// that holds the session: they travel to the workers whole.
func TestEncode_CarriesTheBrowserTools(t *testing.T) {
	for fn, dir := range map[string]string{
		"browser_automation": "_browser_automation", "claude_computer_use": "_claude_computer_use",
		"computer_use": "_computer_use", "gemini_computer_use": "_gemini_computer_use",
	} {
		cfg, rep := config.Parse("c.yaml", []byte(fmt.Sprintf(`
agents:
  - id: a
    backend:
      type: scripted
      answers: [x]
      custom_tools:
        - {name: [%s], path: massgen/tool/%s/%s_tool.py, function: [%s]}
`, fn, dir, fn, fn)))
		if !rep.OK() {
			t.Fatal(rep.Text())
		}
		doc, err := Encode(cfg)
		if err != nil {
			t.Fatalf("%s: %v", fn, err)
		}
		back, err := DecodeConfig(doc)
		if err != nil {
			t.Fatal(err)
		}
		if got := back.Agents[0].Backend.Tools.CustomTools[0].ComputerTool(); got != fn {
			t.Errorf("the workers get computer tool %q, want %s", got, fn)
		}
	}
}
