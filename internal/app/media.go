package app

import (
	"slices"

	"massgen/internal/config"
	"massgen/internal/media"
	"massgen/internal/tool"
	"massgen/internal/workspace"
)

// isMediaTool reports whether a custom_tools entry names one of MassGen's media tools, which
// run natively (internal/media) instead of in Python.
func isMediaTool(c config.CustomTool) bool { return c.MediaTool() != "" }

// addMediaTools appends agent a's media tools to set: read_media and generate_media as its
// config (and the orchestrator's) turns them on, and the media tools its custom_tools name.
func addMediaTools(set tool.Set, a config.Agent, cfg *config.Config, ws *workspace.Agent, getenv func(string) string) (tool.Set, error) {
	m := a.Backend.Tools.Media.Over(cfg.Orchestrator.Media)
	var custom []config.CustomTool
	for _, c := range a.Backend.Tools.CustomTools {
		if isMediaTool(c) {
			custom = append(custom, c)
		}
	}
	if !m.Enabled() && len(custom) == 0 {
		return set, nil
	}
	// MassGen's configs turn enable_file_generation on and name the tool in custom_tools too:
	// the entry gives it (under its name), once.
	if slices.ContainsFunc(custom, func(c config.CustomTool) bool { return c.MediaTool() == "text_to_file_generation" }) {
		m.FileGeneration = false
	}
	if ws == nil { // needsWorkspace gives every agent with media tools a workspace
		return set, errorf(ExitExecution, "agent %s: the media tools have no workspace", a.ID)
	}
	o := media.Options{Workspace: ws, Media: m, Own: a.Backend.Type, OwnModel: a.Backend.Model, Backends: mediaBackends(a.Backend, getenv)}
	set = append(set, media.Tools(o)...)
	for _, c := range custom {
		t, err := media.Custom(o, c)
		if err != nil {
			return set, errorf(ExitConfig, "agent %s: %v", a.ID, err)
		}
		if _, dup := set.Find(t.Spec.Name); dup {
			return set, errorf(ExitConfig, "agent %s: %s is offered twice (enable_multimodal_tools already offers it); remove the custom_tools entry",
				a.ID, t.Spec.Name)
		}
		set = append(set, t)
	}
	return set, nil
}

// mediaBackends are the providers the media tools of an agent on backend own may call: each
// with the key and endpoint an agent of that type would use (the agent's own for its type).
func mediaBackends(own config.Backend, getenv func(string) string) map[string]media.Backend {
	out := map[string]media.Backend{}
	for _, name := range config.MediaBackends {
		b := config.Backend{Type: name, BaseURL: config.BackendTypes[name].DefaultBaseURL}
		if own.Type == name {
			b = own // its base URL is resolved already (withBaseURLs)
		} else if u, _, err := BaseURL(b, getenv); err == nil {
			b.BaseURL = u
		} else {
			continue // a bad variable is reported for the agents that use it
		}
		key, from, err := APIKey(b, getenv)
		if err == nil && key != "" {
			out[name] = media.Backend{Name: name, APIKey: key, KeyEnv: from, BaseURL: b.BaseURL}
		}
	}
	return out
}
