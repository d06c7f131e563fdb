package event

import "encoding/json"

// kind is one payload type as the log names it, with the decoder of its data.
type kind struct {
	name   string
	decode func(json.RawMessage) (Payload, error)
}

func kindOf[T Payload]() kind {
	var zero T
	return kind{zero.Type(), func(b json.RawMessage) (Payload, error) {
		var v T
		err := json.Unmarshal(b, &v)
		return v, err
	}}
}

// kinds is every payload type: the one list reading a log knows them from. A type not in it
// cannot be read back (TestKinds_EveryPayload checks the package's types against it).
var kinds = []kind{
	kindOf[SessionStarted](),
	kindOf[TurnStarted](),
	kindOf[ModelCalled](),
	kindOf[TextDelta](),
	kindOf[ReasoningDelta](),
	kindOf[ToolCalled](),
	kindOf[ToolCallStreaming](),
	kindOf[ToolRejected](),
	kindOf[ToolResult](),
	kindOf[ToolOutput](),
	kindOf[ToolImage](),
	kindOf[ToolServerStatus](),
	kindOf[PlanningDecided](),
	kindOf[PersonasGenerated](),
	kindOf[SubtasksAssigned](),
	kindOf[AgentStopped](),
	kindOf[PartsIntegrated](),
	kindOf[QuestionParaphrased](),
	kindOf[RoundTimeout](),
	kindOf[VoteDeferred](),
	kindOf[AgentWaiting](),
	kindOf[EnforcementSent](),
	kindOf[AnswerSubmitted](),
	kindOf[VoteCast](),
	kindOf[ChecklistSubmitted](),
	kindOf[VoteIgnored](),
	kindOf[AgentError](),
	kindOf[AgentDead](),
	kindOf[UsageReported](),
	kindOf[AgentSession](),
	kindOf[CoordinationEnded](),
	kindOf[FinalStarted](),
	kindOf[FinalAnswer](),
	kindOf[SessionEnded](),
	kindOf[SessionResumed](),
	kindOf[PermissionAsked](),
	kindOf[PermissionDecided](),
	kindOf[HumanInput](),
	kindOf[SubagentStarted](),
	kindOf[SubagentFinished](),
	kindOf[CriteriaEmerged](),
	kindOf[RoundEvaluated](),
	kindOf[MemoryRetrieved](),
	kindOf[MemoryStored](),
	kindOf[ContextCompressed](),
	kindOf[MemoryTrouble](),
	kindOf[BroadcastAsked](),
	kindOf[BroadcastAnswered](),
	kindOf[BroadcastDone](),
	kindOf[TaskPlanChanged](),
	kindOf[PostEvaluationStarted](),
	kindOf[AnswerSubmittedFinal](),
	kindOf[OrchestrationRestarted](),
}

// decoders is kinds by name.
var decoders = func() map[string]func(json.RawMessage) (Payload, error) {
	m := make(map[string]func(json.RawMessage) (Payload, error), len(kinds))
	for _, k := range kinds {
		m[k.name] = k.decode
	}
	return m
}()
