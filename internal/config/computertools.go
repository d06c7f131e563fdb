package config

import (
	"fmt"
	"strings"
)

// MassGen's browser and computer-use tools (massgen/tool/_browser_automation, _computer_use,
// _claude_computer_use, _gemini_computer_use), named in custom_tools; they run natively here
// (internal/browser, internal/desktop, internal/computer), not in Python.
const (
	ToolBrowserAutomation = "browser_automation"
	ToolComputerUse       = "computer_use"
	ToolClaudeComputerUse = "claude_computer_use"
	ToolGeminiComputerUse = "gemini_computer_use"
)

// computerToolDirs maps each tool to the folder of MassGen's tool package that holds it.
var computerToolDirs = map[string]string{
	ToolBrowserAutomation: "_browser_automation",
	ToolComputerUse:       "_computer_use",
	ToolClaudeComputerUse: "_claude_computer_use",
	ToolGeminiComputerUse: "_gemini_computer_use",
}

// ComputerTool returns which of MassGen's browser and computer-use tools the entry names, or
// "": its function is one of them and its path is MassGen's file or module for it (or absent,
// MassGen's built-in lookup).
func (c CustomTool) ComputerTool() string {
	fn := c.Function
	if fn == "simple_browser_automation" { // MassGen's alias
		fn = ToolBrowserAutomation
	}
	dir, ok := computerToolDirs[fn]
	if len(c.Command) > 0 || !ok {
		return ""
	}
	p := strings.ReplaceAll(strings.TrimSuffix(c.Path, ".py"), "\\", "/")
	p = strings.ReplaceAll(p, ".", "/")
	if c.Path == "" || strings.Contains(p, dir+"/") || strings.HasSuffix(p, dir) {
		return fn
	}
	return ""
}

// Builtin reports whether the entry names one of MassGen's tools that massgen runs natively
// (media, browser, computer use): no Python file is needed for it.
func (c CustomTool) Builtin() bool { return c.MediaTool() != "" || c.ComputerTool() != "" }

// computerPresetKeys are the settings of the browser and computer-use tools that only the
// config may give: where the browser may go. A model's arguments never change them.
var computerPresetKeys = []string{"allowed_domains", "blocked_domains"}

// computerToolChecks refuses what the browser and computer-use tools cannot do here, by name.
func computerToolChecks(w *walker, f field, e *customToolEntry) {
	for i, c := range e.out {
		name := c.ComputerTool()
		if name == "" {
			continue
		}
		for _, k := range computerPresetKeys {
			if _, ok := e.out[i].DefaultParams[k]; ok && e.defaults.at != nil {
				w.errf(*e.defaults.at, "move it to preset_args: a model may change default_params, not preset_args",
					"%s in default_params would let the model choose where the browser goes", k)
				return
			}
		}
		args := mergedArgs(c)
		if env, _ := args["environment"].(string); env != "" && env != "browser" && env != "linux" {
			w.errAt(f.loc, fmt.Sprintf("%s: environment %q is not built", name, clip(env)),
				"use environment: browser (a headless Chromium) or linux (a virtual X desktop massgen starts)", f.raw)
			return
		}
		if ec, _ := args["environment_config"].(map[string]any); ec != nil {
			if cn, ok := ec["container_name"]; ok && cn != nil {
				w.errAt(f.loc, fmt.Sprintf("%s: Docker environments (environment_config.container_name) are refused: no container engine runs here", name),
					"remove environment_config.container_name: with environment: linux massgen starts a virtual X desktop of its own", f.raw)
				return
			}
		}
		if bt, _ := args["browser_type"].(string); bt != "" && bt != "chromium" {
			w.errAt(f.loc, fmt.Sprintf("%s: browser_type %q is not built", name, clip(bt)), "use browser_type: chromium (Debian's chromium)", f.raw)
			return
		}
		if ec, _ := args["environment_config"].(map[string]any); ec != nil {
			if bt, _ := ec["browser_type"].(string); bt != "" && bt != "chromium" {
				w.errAt(f.loc, fmt.Sprintf("%s: browser_type %q is not built", name, clip(bt)), "use browser_type: chromium (Debian's chromium)", f.raw)
				return
			}
		}
	}
}

// mergedArgs is what a call gets besides the model's arguments: the defaults under the presets.
func mergedArgs(c CustomTool) map[string]any {
	out := map[string]any{}
	for k, v := range c.DefaultParams {
		out[k] = v
	}
	for k, v := range c.PresetArgs {
		out[k] = v
	}
	return out
}
