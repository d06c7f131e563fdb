package config

import (
	"strings"
	"testing"
)

// MassGen's browser and computer-use entries are built in (no file needed), and what cannot
// run here is refused by name.
func TestParse_ComputerTools(t *testing.T) {
	entry := func(fn, dir, extra string) string {
		return net(`      custom_tools:
        - name: [` + fn + `]
          category: automation
          path: massgen/tool/` + dir + `/` + fn + `_tool.py
          function: [` + fn + `]
` + extra)
	}
	cases := []struct {
		name, yaml, want string // want "" parses, else an error containing it
		tool             string
	}{
		{"browser_automation", entry("browser_automation", "_browser_automation",
			"          preset_args: {blocked_domains: [ads.example.com]}\n          default_params: {headless: false, screenshot: true}\n"), "", "browser_automation"},
		{"claude, browser", entry("claude_computer_use", "_claude_computer_use",
			"          preset_args: {environment: browser, display_width: 1024, display_height: 768, max_iterations: 25, headless: false, browser_type: chromium}\n"), "", "claude_computer_use"},
		{"claude in Docker", entry("claude_computer_use", "_claude_computer_use",
			"          preset_args: {environment: linux, environment_config: {container_name: cua-container, display: \":99\"}}\n"), "Docker environments", ""},
		{"firefox", entry("claude_computer_use", "_claude_computer_use",
			"          preset_args: {environment_config: {browser_type: firefox}}\n"), "browser_type \"firefox\" is not built", ""},
		{"windows", entry("claude_computer_use", "_claude_computer_use", "          preset_args: {environment: windows}\n"), "environment \"windows\" is not built", ""},
		{"openai computer_use", entry("computer_use", "_computer_use",
			"          default_params: {environment: browser, display_width: 1920, display_height: 1080, max_iterations: 30, include_reasoning: true, model: computer-use-preview, environment_config: {browser_type: chromium, headless: false}}\n"), "", "computer_use"},
		{"openai computer_use on a Mac", entry("computer_use", "_computer_use", "          default_params: {environment: mac}\n"), "environment \"mac\" is not built", ""},
		{"gemini computer use", entry("gemini_computer_use", "_gemini_computer_use",
			"          preset_args: {environment: browser, display_width: 1440, display_height: 900, max_iterations: 25, include_thoughts: true, environment_config: {headless: false, browser_type: chromium}}\n"), "", "gemini_computer_use"},
		{"gemini computer use in Docker", entry("gemini_computer_use", "_gemini_computer_use",
			"          preset_args: {environment: linux, environment_config: {container_name: cua-container}}\n"), "Docker environments", ""},
		{"domains a model could change", entry("browser_automation", "_browser_automation",
			"          default_params: {allowed_domains: [example.com]}\n"), "allowed_domains in default_params", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, rep := Parse("c.yaml", []byte(c.yaml))
			if c.want != "" {
				if rep.OK() || !strings.Contains(rep.Text(), c.want) {
					t.Fatalf("want an error containing %q:\n%s", c.want, rep.Text())
				}
				return
			}
			if !rep.OK() || len(rep.Warnings) > 0 {
				t.Fatalf("want no problem:\n%s", rep.Text())
			}
			ct := cfg.Agents[0].Backend.Tools.CustomTools[0]
			if ct.ComputerTool() != c.tool || !ct.Builtin() {
				t.Errorf("ComputerTool() = %q, want %q (built in)", ct.ComputerTool(), c.tool)
			}
		})
	}
	// A file of one's own with the same function name is not MassGen's tool.
	cfg, _ := Parse("c.yaml", []byte(net("      custom_tools:\n        - {path: mine/tools.py, function: browser_automation}\n")))
	if ct := cfg.Agents[0].Backend.Tools.CustomTools[0]; ct.ComputerTool() != "" {
		t.Errorf("mine/tools.py is taken for MassGen's tool")
	}
}
