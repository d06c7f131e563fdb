package event

// Events of steering: what a person watching a session (the dashboard) did to it while it ran.

// EndAnswerNow: coordination was ended by a person asking for the best answer so far
// ("Answer Now"); the winner presents as after consensus.
const EndAnswerNow = "answer_now"

// HumanInput: a message a person sent to the agents mid-run (MassGen's human input queue) was
// delivered to Agent, appended to what its next model call reads, at a turn boundary or after
// a tool round. ID numbers the message within the session, from 1; every live agent gets each
// message once.
type HumanInput struct {
	Agent string `json:"agent"`
	ID    int    `json:"id"`
	Text  string `json:"text"`
}

func (HumanInput) Type() string { return "human_input" }
