package durable

import (
	"fmt"
	"strings"
	"testing"

	"massgen/internal/config"
)

// The browser and computer-use tools drive a Chromium (and a virtual desktop) on this
// machine: Temporal refuses each of them by name.
func TestSupported_RefusesTheBrowserToolsByName(t *testing.T) {
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
		err := Supported(cfg)
		if err == nil || !strings.Contains(err.Error(), "custom_tools "+fn+" (a browser on this machine)") {
			t.Errorf("Supported = %v, want %s refused by name", err, fn)
		}
	}
}
