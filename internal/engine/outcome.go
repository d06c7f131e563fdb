package engine

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"massgen/internal/event"
)

// outcome maps the end reason to a session status and exit code.
func outcome(reason string) (status string, code int) {
	switch reason {
	case event.EndTimeout:
		return event.StatusTimeout, 3
	case event.EndInterrupted:
		return event.StatusInterrupted, 4
	case event.EndAllDead:
		return event.StatusFailed, 2
	}
	return event.StatusCompleted, 0
}

// errorFor is what the end of the session says about why coordination ended; nil after
// consensus. The budget's is informational (exit 0 when an answer exists), so that the user
// learns why coordination stopped early.
func (s *session) errorFor(reason string) error {
	switch reason {
	case event.EndTimeout:
		return errors.New("session timed out before the agents agreed")
	case event.EndInterrupted:
		return errors.New("interrupted")
	case event.EndAllDead:
		s.mu.Lock()
		why := strings.Join(s.deadWhy, "; ")
		s.mu.Unlock()
		if why == "" {
			return errors.New("every agent failed")
		}
		return fmt.Errorf("every agent failed: %s", why)
	case event.EndBudget:
		s.mu.Lock()
		spent := s.cost
		s.mu.Unlock()
		return fmt.Errorf("cost budget %s reached (%s spent)", dollars(s.o.Orchestrator.MaxCostUSD), dollars(spent))
	}
	return nil
}

// dollars formats a cost with at least two decimals and up to four: $5.00, $0.0015.
func dollars(v float64) string {
	t := strconv.FormatFloat(v, 'f', 4, 64)
	for strings.HasSuffix(t, "0") && len(t)-strings.IndexByte(t, '.') > 3 {
		t = t[:len(t)-1]
	}
	return "$" + t
}
