package config

import (
	"strings"
	"testing"
)

// peer_view: bounded needs the shared turn layout; the two settings are read into the config.
func TestProtocolKeys(t *testing.T) {
	const agents = "agents:\n  - id: a\n    backend: {type: scripted, answers: [hi]}\n"
	cfg, rep := Parse("ok.yaml", []byte(agents+"orchestrator:\n  turn_context: continue\n  presentation_context: fresh\n  peer_view: all\n  peer_view_size: 3\n"))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	if o := cfg.Orchestrator; o.TurnContext != TurnContinue || o.PresentationContext != PresentFresh || o.PeerView != PeerViewAll || o.PeerViewSize != 3 {
		t.Errorf("orchestrator %+v", o)
	}
	_, rep = Parse("bad.yaml", []byte(agents+"orchestrator:\n  turn_context: continue\n  peer_view: bounded\n"))
	if rep.OK() || !strings.Contains(rep.Text(), "`peer_view: bounded` needs `turn_context: shared`") {
		t.Errorf("bounded with continue: %s", rep.Text())
	}
}
