package event

// Broadcast events (coordination.broadcast, MassGen's ask_others): an agent asks a question,
// the other agents answer through side calls on copies of their conversations (agents), or a
// person answers (human) through the same broker as permission asks; the question ends
// complete, timed out, or cancelled with the session.

// BroadcastAsked: Agent asked a question with ask_others. ID names it in every later event and
// in the answer a view or an --inbox-dir file gives.
type BroadcastAsked struct {
	Agent    string `json:"agent"`
	ID       string `json:"id"`
	Question string `json:"question"`
	// Targets are the ids of the agents asked; empty when a person is asked (Human).
	Targets []string `json:"targets,omitempty"`
	Human   bool     `json:"human,omitempty"`
	// Wait is whether the asker waits for the answers (broadcast_wait_by_default, or the
	// call's wait argument); when false it collects them later with get_broadcast_responses.
	Wait           bool    `json:"wait"`
	TimeoutSeconds float64 `json:"timeout_seconds"`
}

// BroadcastAnswered: one answer to question ID. Responder is the answering agent's id, or
// ResponderHuman; Error marks a side call that failed (Content says why).
type BroadcastAnswered struct {
	Agent     string `json:"agent"` // who asked
	ID        string `json:"id"`
	Responder string `json:"responder"`
	Content   string `json:"content"`
	Error     bool   `json:"error,omitempty"`
}

// ResponderHuman is the Responder of a person's answer.
const ResponderHuman = "human"

// How a question ended (BroadcastDone.Status), MassGen's BroadcastStatus values.
const (
	BroadcastComplete  = "complete"  // every answer expected came
	BroadcastTimeout   = "timeout"   // broadcast_timeout passed first, or nobody could answer
	BroadcastCancelled = "cancelled" // the session ended while it waited
)

// BroadcastDone: question ID stopped collecting answers. Note says why when no answer came
// (nobody to ask, the person skipped, the timeout).
type BroadcastDone struct {
	Agent   string `json:"agent"`
	ID      string `json:"id"`
	Status  string `json:"status"`
	Answers int    `json:"answers"`
	Note    string `json:"note,omitempty"`
}

func (BroadcastAsked) Type() string    { return "broadcast_asked" }
func (BroadcastAnswered) Type() string { return "broadcast_answered" }
func (BroadcastDone) Type() string     { return "broadcast_done" }
