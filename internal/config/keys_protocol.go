package config

// This port's settings for what a session costs in input tokens (issue 12): how requests are
// laid out for the providers' prompt caches, and how much of its peers' work a large team's
// agent reads.

// Request layouts (orchestrator.turn_context, orchestrator.presentation_context).
const (
	// TurnShared: every turn starts from the shared prefix (tools, system, the task, the
	// current answers in label order), with what is the agent's own last.
	TurnShared = "shared"
	// TurnContinue: every turn continues the agent's conversation with an update listing
	// what changed.
	TurnContinue = "continue"
	// PresentContinue: the presenter's final presentation continues its last conversation.
	PresentContinue = "continue"
	// PresentFresh: the final presentation is a prompt of its own, as in MassGen.
	PresentFresh = "fresh"
)

// Peer views (orchestrator.peer_view).
const (
	PeerViewAuto    = "auto"
	PeerViewAll     = "all"
	PeerViewBounded = "bounded"
	// PeerViewAutoAbove is the team size past which peer_view: auto bounds the view.
	PeerViewAutoAbove = 8
	// DefaultPeerViewSize is peer_view_size's default: the answers an agent reads per turn.
	DefaultPeerViewSize = 6
)

func protocolKeys() []Key {
	return []Key{
		{Section: secOrch, Name: "turn_context", Type: TypeEnum, Enum: []string{TurnShared, TurnContinue}, Default: TurnShared,
			Status: Implemented, Since: "port",
			Doc: "How an agent's next turn starts: from the prefix every agent shares (the task, then the current answers in label order, " +
				"then what is the agent's own: its label and what it did last), which providers cache across turns and agents (shared), " +
				"or by continuing its conversation with an update listing only what changed (continue).",
			set: orch(func(o *Orchestrator, v value) { o.TurnContext = v.s })},
		{Section: secOrch, Name: "presentation_context", Type: TypeEnum, Enum: []string{PresentContinue, PresentFresh}, Default: PresentContinue,
			Status: Implemented, Since: "port",
			Doc: "How the final presentation starts: by continuing the presenter's last conversation, whose prefix the provider has " +
				"cached (continue), or with a prompt of its own holding the task, the votes and every answer, as in MassGen (fresh).",
			set: orch(func(o *Orchestrator, v value) { o.PresentationContext = v.s })},
		{Section: secOrch, Name: "peer_view", Type: TypeEnum, Enum: []string{PeerViewAuto, PeerViewAll, PeerViewBounded}, Default: PeerViewAuto,
			Status: Implemented, Since: "port",
			Doc: "Which peers' answers an agent reads each turn: every one (all), or at most peer_view_size of them, the leaders " +
				"by current votes first and then a sample that rotates from turn to turn (bounded); auto bounds the view past 8 agents. " +
				"An agent may vote only for an answer it was shown, and its vote counts while every answer it was shown is current. " +
				"Needs turn_context: shared.",
			set: orch(func(o *Orchestrator, v value) { o.PeerView = v.s })},
		{Section: secOrch, Name: "peer_view_size", Type: TypeInt, Default: "6", Status: Implemented, Since: "port",
			Doc:  "With a bounded peer_view: how many peers' answers an agent reads per turn (half of them, rounded up, the leaders).",
			hint: "use 2 or more", check: atLeast(2), ex: "4",
			set: orch(func(o *Orchestrator, v value) { o.PeerViewSize = v.n })},
	}
}

// protocolAfter checks the keys above against each other once the section is read.
func protocolAfter(w *walker, t *target, present map[string]field) {
	o := &t.cfg.Orchestrator
	if g, ok := present["peer_view"]; ok && o.PeerView == PeerViewBounded && o.TurnContext == TurnContinue {
		w.errf(g, "use `turn_context: shared` (the default), or `peer_view: all`",
			"`peer_view: bounded` needs `turn_context: shared`: a continued conversation keeps every answer it was ever shown")
	}
}
