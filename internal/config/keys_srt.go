package config

import (
	"errors"
	"massgen/internal/lazy"
	"os"
	"runtime"
	"strings"

	"massgen/internal/childproc"
)

// MassGen v0.1.96's OS sandbox for commands (command_line_execution_mode: srt, the
// command_line_srt_* keys of massgen/backend/_excluded_params.py), which this build runs on
// bubblewrap (command.SandboxOptions).

// executionModeKey is agents[].backend.command_line_execution_mode.
func executionModeKey() Key {
	return Key{Section: secBackend, Name: "command_line_execution_mode", Type: TypeEnum, Enum: []string{"local", "docker", "srt"},
		Accept: []string{"local", "srt"}, Default: "local", Status: Implemented, Since: "0.1.12", tool: true,
		Doc: "Where commands run: this machine (local), a Docker container, or the srt OS sandbox (v0.1.96; here on bubblewrap, on Linux; a coding-agent CLI runs whole in it).",
		Why: "Docker mode is not built", Instead: "use `srt` (commands in a bubblewrap sandbox) or `local`",
		check: executionMode, set: tools(func(t *Tools, v value) { t.ExecutionMode = v.s })}
}

func srtKeys() []Key {
	return []Key{
		{Section: secBackend, Name: "command_line_srt_network_allowed_domains", Type: TypeStrings, Status: Implemented, Since: "0.1.96",
			Needs: needsDocker, tool: true, ex: "[pypi.org]",
			Doc: "srt: the hosts commands may reach over HTTP and HTTPS, through a filtering proxy: example.com, or *.example.com for its subdomains. None by default.",
			raw: allowedDomains},
		{Section: secBackend, Name: "command_line_srt_deny_read", Type: TypeStrings, Status: Implemented, Since: "0.1.96", Needs: needsDocker, tool: true,
			Doc: "srt: paths the sandbox hides (~ is the home directory); command_line_srt_allow_read wins.",
			set: tools(func(t *Tools, v value) { t.SrtDenyRead = v.list })},
		{Section: secBackend, Name: "command_line_srt_allow_unix_sockets", Type: TypeStrings, Status: EmptyOnly, Since: "0.1.96", Needs: needsDocker,
			Doc:     "srt: unix sockets commands may connect to.",
			Why:     "the sandbox refuses every new unix socket (a seccomp filter, as srt does on Linux); exceptions are not built",
			Instead: "remove it, or use command_line_execution_mode: local for commands that need a local service"},
		{Section: secBackend, Name: "command_line_srt_read_mode", Type: TypeEnum, Enum: []string{"confined", "strict", "open"}, Default: "confined",
			Status: Implemented, Since: "0.1.96", Needs: needsDocker, tool: true,
			Doc: "srt: what the sandbox shows of the system, read-only: all but home directories (confined), only /usr, /bin, /sbin, /lib*, /etc and /opt (strict), or all but the usual secret stores (open).",
			set: tools(func(t *Tools, v value) { t.SrtReadMode = v.s })},
		{Section: secBackend, Name: "command_line_srt_allow_read", Type: TypeStrings, Status: Implemented, Since: "0.1.96", Needs: needsDocker, tool: true,
			Doc: "srt: further paths the sandbox shows read-only (~ is the home directory).",
			set: tools(func(t *Tools, v value) { t.SrtAllowRead = v.list })},
	}
}

// executionMode refuses docker, saying when no Docker daemon is here either, and warns that
// srt needs bubblewrap where it is missing: massgen then refuses to start, rather than run the
// commands unsandboxed.
func executionMode(w *walker, v *value) bool {
	switch v.s {
	case "docker":
		why := "Docker mode is not built"
		if missing := dockerMissing(); missing != "" {
			why += ", and no Docker daemon is reachable here (" + missing + ")"
		}
		w.errAt(v.f.loc, "`command_line_execution_mode: docker` is not supported yet: "+why,
			"use `srt` (commands in a bubblewrap sandbox) or `local`", v.f.keyN, v.f.raw)
		w.refused[v.f.loc] = true
		return false
	case "srt":
		// The cheap half of the check massgen makes before it starts (command.SandboxReady),
		// without starting a sandbox here.
		switch err := childproc.SandboxMissing(); {
		case errors.Is(err, childproc.ErrNotLinux):
			w.warnAt(v.f.loc, "command_line_execution_mode: srt runs on Linux only (it is built on bubblewrap)",
				"massgen refuses to start with it here; use `local` on "+runtime.GOOS, v.f.keyN)
		case err != nil:
			w.warnAt(v.f.loc, "command_line_execution_mode: srt needs bubblewrap (bwrap), which is not installed here",
				"install it before running (apt-get install bubblewrap); without it massgen stops at the start rather than run the commands unsandboxed", v.f.keyN)
		}
	}
	return true
}

// dockerMissing says why no Docker daemon can answer here, or "" when one may: a file check,
// not a call to the daemon.
func dockerMissing() string {
	if os.Getenv("DOCKER_HOST") != "" {
		return ""
	}
	if info, err := os.Stat("/var/run/docker.sock"); err == nil && info.Mode()&os.ModeSocket != 0 {
		return ""
	}
	return "/var/run/docker.sock does not exist and DOCKER_HOST is not set"
}

var domainName = lazy.Regexp(`^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// allowedDomains reads command_line_srt_network_allowed_domains: host names, each optionally
// *.-prefixed for its subdomains.
func allowedDomains(w *walker, t *target, f field) {
	items, _ := w.list(f)
	for _, it := range items {
		s, ok := w.str(it)
		if !ok {
			continue
		}
		d := strings.ToLower(strings.TrimSuffix(s, "."))
		switch {
		case d == "*" || d == "*.":
			w.errf(it, "list the hosts the commands need (*.example.com covers the subdomains of example.com); "+
				"commands that need the whole network run with command_line_execution_mode: local",
				"`%s` would allow every host", clip(s))
		case !domainName().MatchString(d) || len(d) > 253:
			w.errf(it, "write a host name such as pypi.org, or *.example.com for its subdomains (no scheme, port or path)",
				"`%s` is not a host name", clip(s))
		default:
			t.backend.Tools.SrtAllowedDomains = append(t.backend.Tools.SrtAllowedDomains, d)
		}
	}
}
