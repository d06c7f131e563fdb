package workspace

import "errors"

// Resident is something that runs in an agent's workspace beyond its files, whose life the
// run bounds: the command package's background shells and network proxies.
type Resident interface {
	// Stop ends what could still write into the workspace and refuses to start more; it
	// returns once that has ended. Run.StopResidents and Run.Close call it, perhaps both.
	Stop()
	// Close releases what is left, once the run ends (after Stop).
	Close() error
}

// Attach makes the run stop and close r with the agent's workspace. It fails once the run is
// closed.
func (a *Agent) Attach(r Resident) error {
	a.resMu.Lock()
	defer a.resMu.Unlock()
	if a.closed {
		return errors.New("the session has ended")
	}
	a.residents = append(a.residents, r)
	return nil
}

func (a *Agent) attached() []Resident {
	a.resMu.Lock()
	defer a.resMu.Unlock()
	return append([]Resident(nil), a.residents...)
}
