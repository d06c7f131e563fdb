package event

// What is decided before coordination: planning mode's check, personas and paraphrases.

// PlanningDecided: planning mode's check before coordination. When HoldBack is set, the MCP
// tools in Held (every MCP tool when Held is empty) refuse to run until the winner presents.
type PlanningDecided struct {
	Agent    string   `json:"agent,omitempty"` // who judged; "" when no check was needed
	HoldBack bool     `json:"hold_back"`
	Held     []string `json:"held,omitempty"`
	Reason   string   `json:"reason"`
	Reply    string   `json:"reply,omitempty"` // the judge's reply, cut to a few hundred bytes
}

// PersonasGenerated: persona_generator's call before coordination wrote one persona per
// agent, added to its coordination system prompt. Agent is whose model wrote them. Warning,
// when set, says why some or all are built-in fallbacks instead (the call failed or its reply
// could not be read); the session goes on either way. FromTurn, when set, says the personas
// were not written now but kept from that earlier turn of the session
// (persona_generator.persist_across_turns): no call was made.
type PersonasGenerated struct {
	Agent    string    `json:"agent"`
	Mode     string    `json:"mode"` // perspective | implementation | methodology
	Personas []Persona `json:"personas"`
	Warning  string    `json:"warning,omitempty"`
	FromTurn int       `json:"from_turn,omitempty"`
}

// Persona is one agent's generated persona.
type Persona struct {
	Agent    string `json:"agent"`
	Label    string `json:"label"`
	Text     string `json:"text"`
	Fallback bool   `json:"fallback,omitempty"`
}

// QuestionParaphrased: orchestrator.dspy's calls before coordination gave each agent a
// checked paraphrase of the question, which it reads after the original. Writer is whose
// spending the calls count under (the first agent), Model the model that wrote them.
// Cached marks variants taken from the cache (no call made). An agent whose variant failed
// (Fallback) reads the original question alone; Why says what failed. Votes and the final
// answer still answer the original question.
type QuestionParaphrased struct {
	Writer   string       `json:"writer"`
	Model    string       `json:"model"`
	Strategy string       `json:"strategy"`
	Cached   bool         `json:"cached,omitempty"`
	Variants []Paraphrase `json:"variants"`
	Warning  string       `json:"warning,omitempty"`
}

// Paraphrase is the question as one agent reads it.
type Paraphrase struct {
	Agent    string `json:"agent"`
	Label    string `json:"label"`
	Text     string `json:"text,omitempty"`
	Fallback bool   `json:"fallback,omitempty"`
	Why      string `json:"why,omitempty"`
}
