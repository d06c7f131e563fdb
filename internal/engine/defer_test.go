package engine

import (
	"testing"
	"testing/synctest"
	"time"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/tool"
)

// defer_peer_updates_until_restart: a peer's answer that lands while an agent works reaches
// it when its next turn starts, not mid-turn; it writes its own answer meanwhile.
func TestRun_DeferPeerUpdatesUntilRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := researcher(2, 10*time.Second)
		as := agents(r, delayed("Lyon is not it; Paris.", 5*time.Second))
		as[0].Tools = tool.Set{slowTool("mcp__kb__slow", 0)}
		res, evs := run(t, t.Context(), Options{Agents: as, Orchestrator: config.Orchestrator{DeferPeerUpdatesUntilRestart: true}})
		if res.ExitCode != 0 {
			t.Fatalf("result %+v", res)
		}
		if updates, _, _ := countUpdates(r); updates != 0 {
			t.Errorf("%d mid-turn updates with defer_peer_updates_until_restart", updates)
		}
		if a := ofType[event.AnswerSubmitted](evs); len(a) != 2 {
			t.Errorf("answers %+v, want the researcher's own too", a)
		}
		if st := evs[0].Payload.(event.SessionStarted); !st.Settings.DeferPeerUpdatesUntilRestart {
			t.Error("session_started does not record the setting")
		}
	})
}
