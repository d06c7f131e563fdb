package engine

import (
	"context"

	"massgen/internal/event"
)

// compact compresses agent i's conversation when its Compact says it nears the context
// window. The compressed conversation is sent whole, as a fresh one, so the log (and resume)
// holds exactly what the model reads next. A failed compression is reported and the call goes
// on with the conversation as it is: the provider may still take it.
func (s *session) compact(ctx context.Context, i int, c *conversation) {
	a := s.agents[i]
	if a.Compact == nil {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, s.o.Timeouts.Agent)
	defer cancel()
	out, err := a.Compact(cctx, c.system, c.msgs)
	if out != nil {
		s.account(i, out.Usage, false)
	}
	if err != nil {
		s.publish(event.MemoryTrouble{Agent: a.ID, Stage: "compress", Message: err.Error()})
		return
	}
	if out == nil || len(out.Messages) == 0 {
		return
	}
	c.msgs, c.sent = out.Messages, 0
	s.publish(event.ContextCompressed{Agent: a.ID, TokensBefore: out.Before, TokensAfter: out.After, Window: out.Window,
		Messages: out.Dropped, Saved: out.Saved})
}
