package config

import (
	"strconv"
	"strings"
)

// QuickAgent builds the one-agent config behind the CLI's --backend/--model flags: agent id
// "agent1" with the given backend type, model, base URL and system message ("" leaves a value
// out, so the type's defaults apply). It is validated exactly like a file, so an unknown or
// unimplemented type gives the same errors; issues carry locations but no file positions.
// The Config is nil when the Report has errors.
func QuickAgent(backendType, model, baseURL, systemMessage string) (*Config, Report) {
	var kv []string
	for _, p := range [][2]string{{"type", backendType}, {"model", model}, {"base_url", baseURL}} {
		if p[1] != "" {
			kv = append(kv, p[0]+": "+strconv.Quote(p[1]))
		}
	}
	var b strings.Builder
	b.WriteString("agents:\n  - id: agent1\n    backend: {" + strings.Join(kv, ", ") + "}\n")
	if systemMessage != "" {
		b.WriteString("    system_message: " + strconv.Quote(systemMessage) + "\n")
	}
	cfg, rep := Parse("", []byte(b.String()))
	for _, list := range [][]Issue{rep.Errors, rep.Warnings} {
		for i := range list {
			list[i].Line, list[i].Column = 0, 0
		}
	}
	return cfg, rep
}
