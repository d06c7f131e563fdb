package mcptool

import (
	"maps"
	"slices"
	"strings"
)

// secretSuffixes mark environment variables that hold credentials. A variable whose upper-cased
// name is one of these or ends with "_" + one of these is not passed to MCP servers unless the
// server's config sets it explicitly.
var secretSuffixes = []string{
	"API_KEY", "APIKEY", "TOKEN", "SECRET", "SECRET_KEY", "PASSWORD", "PASSWD",
	"ACCESS_KEY", "ACCESS_KEY_ID", "PRIVATE_KEY", "CREDENTIALS", "AUTH",
}

// isSecretName reports whether an environment variable looks like it holds a credential.
func isSecretName(name string) bool {
	n := strings.ToUpper(name)
	for _, s := range secretSuffixes {
		if n == s || strings.HasSuffix(n, "_"+s) {
			return true
		}
	}
	return false
}

// serverEnv builds a stdio server's environment: parent (KEY=VALUE entries) without secret-like
// variables, then extra, which overrides and may set secrets. The result is sorted by name.
func serverEnv(parent []string, extra map[string]string) []string {
	env := make(map[string]string, len(parent)+len(extra))
	for _, kv := range parent {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || isSecretName(k) {
			continue
		}
		env[k] = v
	}
	maps.Copy(env, extra)
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}
