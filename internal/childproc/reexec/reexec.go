// Package reexec is massgen re-executed between massgen and a command (the "reexec" pattern):
// childproc's init, which supervises a command's process tree, and inside a sandbox the sandbox
// init and the exec stage. Its package initialiser recognises these by argv[0] and runs them
// to their end, so that they work in the massgen binary and in test binaries alike, before
// anything else of the program runs.
//
// Every start of a sandboxed command pays for two or three such runs, and Go runs a package's
// initialiser only after those of everything it imports, and of every package with a lower
// import path that is ready first. So this package imports nothing but the standard library's
// lowest layers, x/sys/unix and procfs (no net: the sandbox init's relay works on raw sockets),
// and its initialiser runs before those of the provider SDKs, grpc or the template packages,
// which such a run never pays (TestDeps, and cmd/massgen's TestStartupMeasures).
//
// childproc is the other side: it starts these stages and speaks to them with the names and
// types below.
package reexec

import (
	"errors"
	"strconv"
)

// The stages' setups are netstrings ("5:hello"), not JSON: encoding/json would bring reflect,
// whose initialisation the stages must not wait for. Strings hold any byte but NUL (they end
// up in argv and environ), which the sandbox's setup, passed as argv[1], needs.

// The argv[0] of each stage, and the file descriptors of the init's pipes to massgen: it reads
// its Setup from ControlFD, then waits for EOF there (massgen gone, or Kill); it writes
// "started" and, at the end, the command's status to StatusFD.
const (
	InitName  = "massgen-childproc-init"
	ProbeName = "massgen-childproc-probe" // exits 0 at once: what starting massgen costs
	ControlFD = 3
	StatusFD  = 4
	maxSetup  = 64 << 20
)

// Setup is what massgen tells the init, through the control pipe rather than argv or the
// environment, so that neither the init's cmdline nor its environ shows the command's.
type Setup struct {
	Mode     string // ModeNS, ModeFallback or ModeTree
	Path     string
	Args     []string
	Env      []string
	Linger   bool
	UID, GID int // the caller's ids, which the command keeps inside the namespaces
	PIDMax   int // ModeNS: set the namespace's pid_max (see setPIDMax)
}

// Encode is s as the init reads it.
func (s Setup) Encode() []byte {
	var e encoder
	e.str(s.Mode)
	e.str(s.Path)
	e.list(s.Args)
	e.list(s.Env)
	e.bool(s.Linger)
	e.int(int64(s.UID))
	e.int(int64(s.GID))
	e.int(int64(s.PIDMax))
	return e
}

// DecodeSetup reads what Encode wrote.
func DecodeSetup(b []byte) (Setup, error) {
	d := decoder{b: b}
	s := Setup{Mode: d.str(), Path: d.str(), Args: d.list(), Env: d.list(), Linger: d.bool(),
		UID: int(d.int()), GID: int(d.int()), PIDMax: int(d.int())}
	return s, d.end()
}

const (
	ModeNS       = "ns"
	ModeFallback = "fallback" // Confined without namespaces: Tree, and no CAP_SYS_PTRACE for root
	ModeTree     = "tree"
)

// A sandboxed command runs as: massgen's init (Confined's namespaces) -> bwrap -> massgen's
// sandbox init (PID 1 of the sandbox) -> massgen's exec stage, which sets the limits and the
// seccomp filter and execs the command. massgen's binary is shown read-only inside at
// SandboxInitPath for the last two; it holds no secret.
const (
	SandboxInitPath  = "/run/massgen/sandbox-init" // also the argv[0] that selects the init
	SandboxProxyPath = "/run/massgen/proxy.sock"   // the host's proxy socket, inside
	SandboxToolsPath = "/run/massgen/tools.sock"   // the host's tool socket, inside
	SandboxExecName  = "massgen-sandbox-exec"      // argv[0] of the exec stage
	PIDMaxSysctl     = "/proc/sys/kernel/pid_max"  // per PID namespace since Linux 6.14
)

// Where the sandbox init relays the proxy and the tool socket, on the sandbox's loopback
// (127.0.0.1): the ports, and the same as addresses for the command's environment.
const (
	ProxyPort = 3128
	ToolsPort = 3129
	ProxyAddr = "127.0.0.1:3128"
	ToolsAddr = "127.0.0.1:3129"
)

// SandboxSpec is what the sandbox init and the exec stage are told, as their argv[1].
type SandboxSpec struct {
	Path                 string // the command, as resolved on the host
	Linger, Proxy, Tools bool
	NProc, FSize         uint64
	CPU                  uint64 // seconds
	AS                   uint64
}

// Encode is s as the sandbox's stages read it.
func (s SandboxSpec) Encode() string {
	var e encoder
	e.str(s.Path)
	e.bool(s.Linger)
	e.bool(s.Proxy)
	e.bool(s.Tools)
	for _, n := range []uint64{s.NProc, s.FSize, s.CPU, s.AS} {
		e.str(strconv.FormatUint(n, 10))
	}
	return string(e)
}

// DecodeSandboxSpec reads what Encode wrote.
func DecodeSandboxSpec(b string) (SandboxSpec, error) {
	d := decoder{b: []byte(b)}
	s := SandboxSpec{Path: d.str(), Linger: d.bool(), Proxy: d.bool(), Tools: d.bool(),
		NProc: d.uint(), FSize: d.uint(), CPU: d.uint(), AS: d.uint()}
	return s, d.end()
}

type encoder []byte

func (e *encoder) str(s string) {
	*e = append(strconv.AppendInt(*e, int64(len(s)), 10), ':')
	*e = append(*e, s...)
}

func (e *encoder) list(l []string) {
	e.int(int64(len(l)))
	for _, s := range l {
		e.str(s)
	}
}

func (e *encoder) int(n int64) { e.str(strconv.FormatInt(n, 10)) }

func (e *encoder) bool(b bool) {
	if b {
		e.str("1")
	} else {
		e.str("0")
	}
}

// decoder reads an encoder's fields; after the first error every field is zero and end
// reports the error.
type decoder struct {
	b   []byte
	err error
}

var errSetup = errors.New("malformed setup")

func (d *decoder) str() string {
	if d.err != nil {
		return ""
	}
	i := 0
	for i < len(d.b) && i < 10 && d.b[i] >= '0' && d.b[i] <= '9' {
		i++
	}
	if i == 0 || i == len(d.b) || d.b[i] != ':' {
		d.err = errSetup
		return ""
	}
	n, err := strconv.Atoi(string(d.b[:i]))
	if err != nil || n > len(d.b)-i-1 {
		d.err = errSetup
		return ""
	}
	s := string(d.b[i+1 : i+1+n])
	d.b = d.b[i+1+n:]
	return s
}

func (d *decoder) list() []string {
	n := d.int()
	if n < 0 || n > int64(len(d.b)/2) { // each string takes at least "0:"
		d.err = errSetup
		return nil
	}
	l := make([]string, 0, n)
	for range n {
		l = append(l, d.str())
	}
	return l
}

func (d *decoder) int() int64 {
	n, err := strconv.ParseInt(d.str(), 10, 64)
	if err != nil && d.err == nil {
		d.err = errSetup
	}
	return n
}

func (d *decoder) uint() uint64 {
	n, err := strconv.ParseUint(d.str(), 10, 64)
	if err != nil && d.err == nil {
		d.err = errSetup
	}
	return n
}

func (d *decoder) bool() bool {
	switch d.str() {
	case "1":
		return true
	case "0":
		return false
	}
	if d.err == nil {
		d.err = errSetup
	}
	return false
}

func (d *decoder) end() error {
	if d.err == nil && len(d.b) != 0 {
		d.err = errSetup
	}
	return d.err
}
