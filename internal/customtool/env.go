package customtool

import "strings"

// envNames are the variables tools get from massgen's environment: where things are, how to
// print them, and which Python to use. An allow-list, as for execute_command, because no list
// of credential names is ever complete; an entry's env_passthrough adds to it. A name ending
// in * is a prefix.
var envNames = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_*", "TERM", "TZ", "TMPDIR",
	"PYTHONPATH", "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "PYENV_*"}

// baseEnv keeps the variables of env that envNames or pass name.
func baseEnv(env, pass []string) []string {
	var out []string
	for _, kv := range env {
		name, _, ok := strings.Cut(kv, "=")
		if ok && name != "" && (named(name, envNames) || named(name, pass)) {
			out = append(out, kv)
		}
	}
	return out
}

// pythonEnv is baseEnv with Python told to keep its output unbuffered and UTF-8, and to leave
// no __pycache__ beside the tool files.
func pythonEnv(env, pass []string) []string {
	return append(baseEnv(env, pass), "PYTHONUNBUFFERED=1", "PYTHONIOENCODING=utf-8", "PYTHONDONTWRITEBYTECODE=1")
}

func named(name string, patterns []string) bool {
	for _, p := range patterns {
		if prefix, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(name, prefix) || p == name {
			return true
		}
	}
	return false
}
