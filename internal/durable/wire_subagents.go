package durable

import (
	"encoding/json"
	"strconv"
	"time"

	"massgen/internal/config"
)

// subagentsDoc writes the agents' subagent keys (coordination.enable_subagents) into coord:
// the worker holding the session runs the subagents.
func subagentsDoc(coord obj, s config.Subagents) {
	if !s.Enabled {
		return
	}
	coord["enable_subagents"] = true
	for k, d := range map[string]time.Duration{"subagent_default_timeout": s.DefaultTimeout, "subagent_min_timeout": s.MinTimeout,
		"subagent_max_timeout": s.MaxTimeout} {
		if d > 0 {
			coord[k] = json.Number(strconv.FormatFloat(d.Seconds(), 'g', -1, 64))
		}
	}
	putInt(coord, "subagent_max_concurrent", s.MaxConcurrent)
	putStr(coord, "subagent_runtime_mode", s.RuntimeMode)
	if s.NoBackground {
		coord["background_subagents"] = obj{"enabled": false}
	}
	if s.Types != nil { // empty offers none; nil (unset) the default ones
		coord["subagent_types"] = s.Types
	}
}
