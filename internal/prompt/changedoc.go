package prompt

// ChangedocFile is where an agent keeps its decision journal, relative to its workspace
// (MassGen's name, so its prompts, skills and habits carry over).
const ChangedocFile = "tasks/changedoc.md"

// SelfLabel is what an agent writes in its changedoc where its own answer label belongs; it
// cannot know the label before the answer is accepted, so massgen fills it in then.
const SelfLabel = "[SELF]"

// ChangedocSection asks a coordinating agent to keep a decision journal beside its answer. It
// is one text for every round, so the system prompt stays the same all session (P10): the
// first-round and later-round instructions both live in it.
const ChangedocSection = `Decision journal (changedoc):
- Keep a decision journal in your workspace at ` + ChangedocFile + `. Create it before you build anything, and add
  each significant decision while you make it, not afterwards.
- If you build on another agent's answer, start from the changedoc shown with that answer (between <changedoc> and
  </changedoc>): copy it into your ` + ChangedocFile + `, keep what still holds, and record what you changed and why.
- Layout, in Markdown:
  # Change Document
  **Based on:** the answer label you started from (for example agent2.1), or "none"
  ## Summary
  Two or three sentences on the approach.
  ## Decisions
  ### DEC-001: a short title
  **Origin:** the label that introduced it, followed by "NEW" when no earlier answer had it
  **Choice:** what you decided
  **Why:** the reason
  **Alternatives considered:** what you rejected and why
  **Implementation:** relative/path:L10-25 -> symbol: what it does there
  ## Deliberation Trail
  One entry per answer this journal went through: which decisions it kept, changed or added.
- Write ` + SelfLabel + ` wherever your own answer's label belongs; it is replaced with the real label when your answer is accepted.
- The journal travels with your answer: keep it current before you call new_answer.
`

// ChangedocPresenter asks the presenter to leave the definitive journal with the final answer.
const ChangedocPresenter = " Also bring " + ChangedocFile + " in your workspace up to date as the definitive decision journal of " +
	"the final answer: keep the decisions that the final answer implements, drop the superseded ones, point every " +
	"Implementation line at the delivered files, and keep the Deliberation Trail."
