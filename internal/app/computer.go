package app

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"

	"massgen/internal/browser"
	"massgen/internal/computer"
	"massgen/internal/config"
	"massgen/internal/tool"
)

// isComputerTool reports whether a custom_tools entry names one of MassGen's browser and
// computer-use tools, which run natively (internal/browser, internal/desktop, internal/computer).
func isComputerTool(c config.CustomTool) bool { return c.ComputerTool() != "" }

// computerTools gives the browser and computer-use tools the agent's custom_tools name. Each
// agent has one browser, started by its first call and kept for the run (a workspace
// resident: it stops with the workspace).
func (b *toolBuild) computerTools(ctx context.Context, at *agentTools) error {
	a := at.agent
	var lazy *browser.Lazy
	var desks *computer.Desktops
	for _, c := range a.Backend.Tools.CustomTools {
		name := c.ComputerTool()
		if name == "" {
			continue
		}
		if at.ws == nil { // needsWorkspace gives every agent with these tools a workspace
			return errorf(ExitExecution, "agent %s: %s has no workspace", a.ID, c.Label())
		}
		policy, presets, err := domainPolicy(c)
		if err != nil {
			return errorf(ExitConfig, "agent %s: %s: %v", a.ID, c.Label(), err)
		}
		if lazy == nil {
			lazy = browser.NewLazy(browser.Options{Dir: at.ws.Dir(), Policy: policy,
				Profile: filepath.Join(b.tb.run.Dir(), "browser", at.ws.Label())})
			if err := at.ws.Attach(lazy); err != nil {
				return errorf(ExitExecution, "agent %s: %v", a.ID, err)
			}
		} else if !samePolicy(lazy.Options().Policy, policy) {
			return errorf(ExitConfig, "agent %s: %s: give every browser tool of one agent the same allowed_domains and blocked_domains (they share one browser)", a.ID, c.Label())
		}
		var t tool.Tool
		switch name {
		case config.ToolBrowserAutomation:
			t = browser.AutomationTool(config.ExposedCustomToolName(c.Name), lazy)
		case config.ToolClaudeComputerUse, config.ToolComputerUse, config.ToolGeminiComputerUse:
			if desks == nil {
				// One desktop for the agent's computer-use tools. The desktop's Chromium has a
				// profile of its own: one Chromium per profile.
				bo := lazy.Options()
				bo.Profile += "-desktop"
				backends := map[string]computer.Backend{}
				for name, mb := range mediaBackends(a.Backend, b.o.Getenv) {
					backends[name] = computer.Backend{APIKey: mb.APIKey, KeyEnv: mb.KeyEnv, BaseURL: mb.BaseURL}
				}
				desks = computer.NewDesktops(computer.Options{Backends: backends, Browser: bo})
				if err := at.ws.Attach(desks); err != nil {
					return errorf(ExitExecution, "agent %s: %v", a.ID, err)
				}
			}
			exposed := config.ExposedCustomToolName(c.Name)
			switch name {
			case config.ToolClaudeComputerUse:
				t = computer.ClaudeTool(exposed, desks)
			case config.ToolComputerUse:
				t = computer.OpenAITool(exposed, desks)
			default:
				t = computer.GeminiTool(exposed, desks)
			}
		default:
			return errorf(ExitConfig, "agent %s: %s is not built", a.ID, name)
		}
		if c.Description != "" {
			t.Spec.Description = c.Description
		}
		t = tool.WithPresets(t, presets, c.DefaultParams)
		if _, dup := at.set.Find(t.Spec.Name); dup {
			return errorf(ExitConfig, "agent %s: %s is offered twice", a.ID, t.Spec.Name)
		}
		at.set = append(at.set, t)
	}
	return nil
}

// domainPolicy reads allowed_domains and blocked_domains from an entry's preset_args (the
// config checks they are not in default_params, where the model could change them) and
// returns the other presets.
func domainPolicy(c config.CustomTool) (*browser.Policy, map[string]any, error) {
	presets := maps.Clone(c.PresetArgs)
	var lists [2][]string
	for i, k := range []string{"allowed_domains", "blocked_domains"} {
		v, ok := presets[k]
		if !ok {
			continue
		}
		delete(presets, k)
		items, isList := v.([]any)
		if !isList && v != nil {
			return nil, nil, fmt.Errorf("preset_args.%s must be a list of host names", k)
		}
		for _, it := range items {
			s, isStr := it.(string)
			if !isStr {
				return nil, nil, fmt.Errorf("preset_args.%s must be a list of host names, not %v", k, it)
			}
			lists[i] = append(lists[i], s)
		}
	}
	p, err := browser.NewPolicy(lists[0], lists[1])
	if err != nil {
		return nil, nil, fmt.Errorf("preset_args.%w", err)
	}
	return p, presets, nil
}

func samePolicy(a, b *browser.Policy) bool {
	return fmt.Sprint(a.Allowed, a.Blocked) == fmt.Sprint(b.Allowed, b.Blocked)
}
