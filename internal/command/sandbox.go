package command

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"massgen/internal/childproc"
	"massgen/internal/workspace"
)

// SandboxOptions configure MassGen's command_line_execution_mode: srt (v0.1.96), its OS
// sandbox for commands, which this build runs on bubblewrap (childproc.Sandbox). What a
// sandboxed command sees of the file system is what the agent holds, derived from the same
// grants as the file tools, at the moment the command starts:
//
//   - its workspace, writable; the shared snapshots, read-only; its context paths read-only,
//     or writable for the final presenter where the config says so, with their protected
//     paths and MassGen's default exclusions (.git, node_modules, ...) read-only there;
//   - inside context paths, what the file tools conceal is hidden too: massgen's folders
//     (.massgen, massgen_logs) and files that commonly hold secrets (.env, *.pem, ...);
//   - massgen's own trees (the run's workspaces of other agents, the logs) are hidden
//     wherever they lie, and so are its secrets (sandbox_hide.go): ~/.massgen, the files
//     Hide names, and secret files in massgen's working folder, the workspace and snapshots;
//   - the rest of the system read-only, as ReadMode says; /etc/shadow and similar files
//     hidden; an empty, writable home directory and /tmp that vanish with the command; /proc
//     of its own processes only; a minimal /dev; no network (the loopback is its own).
type SandboxOptions struct {
	// ReadMode (command_line_srt_read_mode) is what shows of the system: "confined" (the
	// default) shows all of it read-only except home directories (/home, /root and $HOME);
	// "strict" shows only /usr, /bin, /sbin, /lib*, /etc and /opt; "open" shows everything,
	// home directories too, except MassGen's list of secret stores there (~/.ssh, ~/.aws, ...).
	ReadMode string
	// AllowRead (command_line_srt_allow_read) are further paths shown read-only; DenyRead
	// (command_line_srt_deny_read) are paths hidden. ~ is the home directory; AllowRead wins
	// where both hold a path, as in MassGen; neither reaches massgen's own trees.
	AllowRead, DenyRead []string
	// AllowedDomains (command_line_srt_network_allowed_domains) are the hosts commands may
	// reach, over HTTP and HTTPS through a filtering proxy (netProxy): example.com, or
	// *.example.com for its subdomains. Without any, the sandbox has no way out.
	AllowedDomains []string
	// Limits bound each command's processes (childproc.DefaultLimits where zero).
	Limits childproc.Limits
	// Hide are files massgen read keys from (the .env files it loads, a config file holding a
	// key), hidden wherever they lie, in every read mode; ~ is the home directory. The
	// sandbox also hides ~/.massgen, and secret files in massgen's working folder, itself.
	Hide []string
}

// Read modes of command_line_srt_read_mode.
const (
	ReadConfined = "confined"
	ReadStrict   = "strict"
	ReadOpen     = "open"
)

// maxContextScan bounds the entries of one context path scanned for what to hide before each
// sandboxed command.
var maxContextScan = 200_000

// strictSystem are what ReadStrict shows: enough to run programs.
var strictSystem = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"}

// hostSecrets are system files hidden in every mode: password hashes and host keys.
var hostSecrets = []string{"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/security/opasswd"}

// homeSecrets are MassGen's secret stores in a home directory, hidden in ReadOpen
// (massgen/filesystem_manager/_srt_manager.py, _DEFAULT_DENY_READ_HOME_RELATIVE).
var homeSecrets = []string{".ssh", ".aws", ".gnupg", ".netrc", ".npmrc", ".pypirc", ".docker/config.json",
	".git-credentials", ".kube", ".azure", ".config/gcloud", ".config/gh"}

// Sandboxed reports whether command_line_execution_mode mode runs commands in the sandbox
// ("srt"); "local" and "" run them on this machine.
func Sandboxed(mode string) bool { return mode == "srt" }

// Ready reports an unknown read mode, or why no sandbox can run here (SandboxReady): the one
// check before commands, or a coding-agent CLI, are given a sandbox.
func (o *SandboxOptions) Ready() error {
	if err := o.Validate(); err != nil {
		return err
	}
	return SandboxReady()
}

// Validate reports an unknown read mode.
func (o *SandboxOptions) Validate() error {
	switch o.ReadMode {
	case "", ReadConfined, ReadStrict, ReadOpen:
		return nil
	}
	return fmt.Errorf("command_line_srt_read_mode %q: use confined, strict or open", o.ReadMode)
}

// describe tells the model what its sandboxed commands can reach.
func (o *SandboxOptions) describe() string {
	system := "the rest of the system read-only, without home directories"
	switch o.ReadMode {
	case ReadStrict:
		system = "of the rest of the system only /usr, /bin, /lib, /etc and /opt, read-only"
	case ReadOpen:
		system = "the rest of the system read-only, without the usual secret stores (~/.ssh, ~/.aws, ...)"
	}
	home := " an empty home directory and"
	if o.ReadMode == ReadOpen {
		home = ""
	}
	lim := o.Limits
	if lim.Processes <= 0 {
		lim.Processes = childproc.DefaultLimits.Processes
	}
	network := "there is no network (not even this machine's services)"
	if len(o.AllowedDomains) > 0 {
		network = fmt.Sprintf("the network is reachable only over HTTP and HTTPS, through the proxy that HTTP_PROXY and HTTPS_PROXY name, and only to %s",
			strings.Join(o.AllowedDomains, ", "))
	}
	return fmt.Sprintf("They run in a sandbox: they see your workspace (writable), the shared snapshots and your context paths (as granted), "+
		"%s;%s a /tmp that vanish when the command ends; %s; no unix sockets; at most %d processes at once. Secret files (.env, keys) and massgen's own files are hidden, in your workspace too.",
		system, home, network, lim.Processes)
}

// sandbox is the childproc.Sandbox of a command the agent starts now; home is the home
// directory of the command's environment.
func (a *agent) sandbox(o *SandboxOptions, home string) (*childproc.Sandbox, error) {
	sb, m, err := a.sandboxMounts(o, home)
	if err != nil {
		return nil, err
	}
	sb.Mounts = m.list
	return sb, nil
}

// sandboxMounts is sandbox with its Mounts still open to additions that keep hidden what
// must stay so.
func (a *agent) sandboxMounts(o *SandboxOptions, home string) (*childproc.Sandbox, *mounts, error) {
	if err := o.Validate(); err != nil {
		return nil, nil, err
	}
	home = cleanHome(home)
	sb := &childproc.Sandbox{Limits: o.Limits, Base: baseView(o.ReadMode, home)}
	sight := a.ws.Sight()
	roots := sight.Roots
	private := privateTrees(sight.Hidden)
	secrets, err := sandboxSecrets(o, home, roots, private, sight.Named)
	if err != nil {
		return nil, nil, err
	}
	hidden := slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(private), secrets...))))
	m := &mounts{hidden: hidden}
	if home != "" && o.ReadMode != ReadOpen {
		m.add(childproc.Mount{Kind: childproc.Scratch, Dst: home}) // for tools that write caches there
	}
	for _, h := range hidden {
		m.add(childproc.Mount{Kind: childproc.Hidden, Dst: h})
	}
	for _, p := range o.DenyRead {
		if p = expandHome(p, home); p != "" {
			m.add(childproc.Mount{Kind: childproc.Hidden, Dst: p})
		}
	}
	for _, raw := range o.AllowRead {
		p := expandHome(raw, home)
		if p == "" || !exists(p) {
			continue
		}
		if i := slices.IndexFunc(hidden, func(h string) bool { return workspace.Within(h, p) }); i >= 0 {
			return nil, nil, fmt.Errorf("command_line_srt_allow_read: %s is inside %s, massgen's own or a file that may hold keys, which commands never see", raw, hidden[i])
		}
		m.tree(childproc.ReadOnly, p, p)
	}
	slices.SortStableFunc(roots, func(x, y workspace.Root) int { return len(x.Path) - len(y.Path) })
	for _, g := range roots {
		kind := childproc.ReadOnly
		if g.Writable {
			kind = childproc.Writable
		}
		m.tree(kind, g.Path, g.Path)
		if g.Context && !g.File {
			if err := m.contextInside(g, g.Writable, sight.Named); err != nil {
				return nil, nil, err
			}
		}
	}
	if len(o.AllowedDomains) > 0 {
		p, err := a.proxyFor(o.AllowedDomains)
		if err != nil {
			return nil, nil, err
		}
		sb.Proxy = p.path
	}
	return sb, m, nil
}

// mounts builds a sandbox's Mounts: tree shows a folder and then hides again the private
// trees below it, which it would otherwise show.
type mounts struct {
	hidden []string
	list   []childproc.Mount
}

func (m *mounts) add(x childproc.Mount) { m.list = append(m.list, x) }

func (m *mounts) tree(kind childproc.MountKind, src, dst string) {
	m.add(childproc.Mount{Kind: kind, Src: src, Dst: dst})
	for _, h := range m.hidden {
		if workspace.Within(dst, h) && !workspace.Within(h, dst) {
			m.add(childproc.Mount{Kind: childproc.Hidden, Dst: h})
		}
	}
}

// contextInside hides what the file tools conceal inside the context path g (massgen's
// folders, secret files not named by a context path) and, when g is writable, shows its
// protected paths and default exclusions read-only. The read-only folders come first: they
// show the host's tree as it is, secrets included, which the hidden entries then cover.
func (m *mounts) contextInside(g workspace.Root, writable bool, named map[string]bool) error {
	var keep []string
	if writable {
		keep = append(keep, g.Protected...)
	}
	hide, err := scanConcealed(g.Path, named, func(p string, d fs.DirEntry) error {
		if writable && workspace.ReadOnlyInContext(d.Name()) && d.Type()&fs.ModeSymlink == 0 {
			keep = append(keep, p)
		}
		return nil
	})
	if errors.Is(err, errTooBig) {
		return fmt.Errorf("the context path %s holds more than %d files and folders, too many to check for secret files before each sandboxed command; "+
			"name a smaller folder in context_paths", g.Path, maxContextScan)
	}
	if err != nil {
		return fmt.Errorf("the context path %s cannot be read: %w", g.Path, err)
	}
	slices.SortStableFunc(keep, func(x, y string) int { return len(x) - len(y) })
	for _, p := range keep {
		if exists(p) {
			m.tree(childproc.ReadOnly, p, p)
		}
	}
	for _, p := range hide {
		m.add(childproc.Mount{Kind: childproc.Hidden, Dst: p})
	}
	return nil
}

var errTooBig = errors.New("too many entries")

// baseView is the system a sandbox shows in mode.
func baseView(mode, home string) []childproc.Mount {
	var out []childproc.Mount
	if mode == ReadStrict {
		for _, d := range strictSystem {
			info, err := os.Lstat(d)
			switch {
			case err != nil:
			case info.Mode()&os.ModeSymlink != 0:
				if target, err := os.Readlink(d); err == nil {
					out = append(out, childproc.Mount{Kind: childproc.Symlink, Src: target, Dst: d})
				}
			case info.IsDir():
				out = append(out, childproc.Mount{Kind: childproc.ReadOnly, Src: d, Dst: d})
			}
		}
	} else {
		out = append(out, childproc.Mount{Kind: childproc.ReadOnly, Src: "/", Dst: "/"})
		// Host sockets: a service behind one (a container daemon, the session bus) would run
		// commands outside the sandbox. The seccomp filter refuses new unix sockets; this
		// also keeps /run's sessions and keyrings out of sight.
		if info, err := os.Lstat("/var/run"); err == nil && info.IsDir() {
			out = append(out, childproc.Mount{Kind: childproc.Hidden, Dst: "/var/run"})
		}
	}
	switch mode {
	case ReadOpen:
		if home != "" {
			for _, s := range homeSecrets {
				out = append(out, childproc.Mount{Kind: childproc.Hidden, Dst: filepath.Join(home, s)})
			}
		}
	case ReadStrict:
	default:
		out = append(out, childproc.Mount{Kind: childproc.Hidden, Dst: "/home"}, childproc.Mount{Kind: childproc.Hidden, Dst: "/root"})
		if home != "" {
			out = append(out, childproc.Mount{Kind: childproc.Hidden, Dst: home})
		}
	}
	for _, s := range hostSecrets {
		out = append(out, childproc.Mount{Kind: childproc.Hidden, Dst: s})
	}
	if keys, err := filepath.Glob("/etc/ssh/ssh_host_*_key"); err == nil {
		for _, k := range keys {
			out = append(out, childproc.Mount{Kind: childproc.Hidden, Dst: k})
		}
	}
	return out
}

// privateTrees are massgen's trees to hide: the run's hidden paths, and the .massgen and
// massgen_logs folders that hold them (sessions, other runs).
func privateTrees(hidden []string) []string {
	out := slices.Clone(hidden)
	for _, h := range hidden {
		for p := h; p != filepath.Dir(p); p = filepath.Dir(p) {
			if slices.Contains(workspace.MassgenDirs(), filepath.Base(p)) && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	if wd, err := os.Getwd(); err == nil {
		for _, d := range workspace.MassgenDirs() {
			if p := filepath.Join(wd, d); exists(p) && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	slices.Sort(out)
	return out
}

// cleanHome is home when a sandbox can give it a scratch folder: absolute, and not the root
// or a system folder.
func cleanHome(home string) string {
	if home == "" || !filepath.IsAbs(home) {
		return ""
	}
	home = filepath.Clean(home)
	if real, err := filepath.EvalSymlinks(home); err == nil {
		home = real
	}
	if home == "/" || workspace.SystemPath(home) || slices.ContainsFunc(strictSystem, func(d string) bool { return workspace.Within(d, home) }) {
		return ""
	}
	return home
}

// expandHome makes p absolute: ~ is home, a relative path is relative to massgen's folder.
func expandHome(p, home string) string {
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		if home == "" {
			return ""
		}
		p = filepath.Join(home, strings.TrimPrefix(p, "~"))
	case !filepath.IsAbs(p):
		abs, err := filepath.Abs(p)
		if err != nil {
			return ""
		}
		p = abs
	}
	p = filepath.Clean(p)
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	}
	return p
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// envValue is the value of name in env, or "".
func envValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// sandboxEnv is env for a sandboxed command: TMPDIR is the sandbox's own /tmp, and proxy
// settings of this machine, useless inside, go (the sandbox's own proxy, if any, is added).
func sandboxEnv(env []string) []string {
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(name) {
		case "TMPDIR", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY":
			return true
		}
		return false
	})
	return append(out, "TMPDIR=/tmp")
}
