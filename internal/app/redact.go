package app

import (
	"massgen/internal/lazy"

	"massgen/internal/config"
	"massgen/internal/redact"
)

// secretKey matches parameter names whose values must never be logged.
var secretKey = lazy.Regexp(`(?i)(api[_-]?key|token|secret|password|authorization|credential)`)

// Redacted returns the config as metadata.json shows it: every secret replaced, so the log
// directory can be shared.
func Redacted(cfg *config.Config) map[string]any {
	agents := make([]map[string]any, len(cfg.Agents))
	for i, a := range cfg.Agents {
		b := map[string]any{"type": a.Backend.Type, "model": a.Backend.Model}
		if a.Backend.BaseURL != "" {
			b["base_url"] = redact.URL(a.Backend.BaseURL) // user:password@ and ?key= stay out of the log
		}
		if a.Backend.APIVersion != "" {
			b["api_version"] = a.Backend.APIVersion
		}
		if a.Backend.APIKey != "" {
			b["api_key"] = redact.Marker
		}
		if len(a.Backend.Params) > 0 {
			b["params"] = redactValue(a.Backend.Params)
		}
		agents[i] = map[string]any{"id": a.ID, "backend": b}
		if a.SystemMessage != "" {
			agents[i]["system_message"] = a.SystemMessage
		}
	}
	o := cfg.Orchestrator
	return map[string]any{
		"agents": agents,
		"orchestrator": map[string]any{
			"voting_sensitivity":         o.VotingSensitivity,
			"answer_novelty_requirement": o.AnswerNovelty,
			"max_new_answers_per_agent":  o.MaxNewAnswersPerAgent,
			"final_answer_strategy":      o.FinalAnswerStrategy,
			"failure_budget":             o.FailureBudget,
			"max_cost_usd":               o.MaxCostUSD,
			"skip_coordination_rounds":   o.SkipCoordinationRounds,
		},
		"ui": map[string]any{"display_type": cfg.UI.DisplayType, "logging_enabled": cfg.UI.LoggingEnabled},
		"timeout_settings": map[string]any{
			"orchestrator_timeout_seconds": cfg.Timeouts.Orchestrator.Seconds(),
			"agent_timeout_seconds":        cfg.Timeouts.Agent.Seconds(),
			"presentation_timeout_seconds": cfg.Timeouts.Presentation.Seconds(),
		},
	}
}

func redactValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			if secretKey().MatchString(k) {
				out[k] = redact.Marker
				continue
			}
			out[k] = redactValue(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = redactValue(val)
		}
		return out
	}
	return v
}
