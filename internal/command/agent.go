package command

import (
	"errors"
	"slices"
	"strings"
	"sync"

	"massgen/internal/workspace"
)

// agent is one agent's commands: its workspace, and the background shells and network proxies
// its commands started. The run stops and closes it with the workspace (workspace.Resident).
type agent struct {
	ws     *workspace.Agent
	shells shellSet // background shells (shells.go)

	proxyMu sync.Mutex
	proxies map[string]*netProxy // by allowed domains; nil once closed (netproxy.go)
	closed  bool
}

// attachTo is the commands of ws, attached to its run; once the run is closed they refuse to
// start anything.
func attachTo(ws *workspace.Agent) *agent {
	a := &agent{ws: ws}
	if ws.Attach(a) != nil {
		a.Stop()
		_ = a.Close()
	}
	return a
}

// Stop stops the background shells, all at once, and refuses new ones.
func (a *agent) Stop() { a.shells.stopAll() }

// Close stops the network proxies and refuses new ones.
func (a *agent) Close() error {
	a.proxyMu.Lock()
	defer a.proxyMu.Unlock()
	a.closed = true
	var errs []error
	for _, p := range a.proxies {
		errs = append(errs, p.Close())
	}
	a.proxies = nil
	return errors.Join(errs...)
}

// proxyFor is the agent's network proxy for the allowed domains, started on first use.
func (a *agent) proxyFor(domains []string) (*netProxy, error) {
	key := strings.Join(domains, "\x00")
	a.proxyMu.Lock()
	defer a.proxyMu.Unlock()
	if a.closed {
		return nil, errors.New("the session has ended")
	}
	if p := a.proxies[key]; p != nil {
		return p, nil
	}
	p, err := startProxy(slices.Clone(domains))
	if err != nil {
		return nil, err
	}
	if a.proxies == nil {
		a.proxies = map[string]*netProxy{}
	}
	a.proxies[key] = p
	return p, nil
}
