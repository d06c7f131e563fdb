package durable

import (
	"strings"
	"testing"

	"massgen/internal/config"
)

// The browser tools drive a Chromium on this machine: Temporal refuses them by name.
func TestSupported_RefusesTheBrowserToolsByName(t *testing.T) {
	cfg, rep := config.Parse("c.yaml", []byte(`
agents:
  - id: a
    backend:
      type: scripted
      answers: [x]
      custom_tools:
        - {name: [browser_automation], path: massgen/tool/_browser_automation/browser_automation_tool.py, function: [browser_automation]}
`))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	err := Supported(cfg)
	if err == nil || !strings.Contains(err.Error(), "custom_tools browser_automation (a browser on this machine)") {
		t.Fatalf("Supported = %v, want browser_automation refused by name", err)
	}
}
