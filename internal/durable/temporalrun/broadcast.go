package temporalrun

import (
	"context"

	"go.temporal.io/sdk/client"

	"massgen/internal/provider"
)

// Broadcast (ask_others with broadcast: agents) on Temporal: the asker's turn makes the side
// calls on its worker, reading each answering agent's conversation from the workflow: as its
// running turn began, or its last turn ended (what a running turn added since is not in it).

// QueryPeer answers an agent's conversation as it last sent it (its index given).
const QueryPeer = "massgen.peer"

// maxPeerBytes bounds a conversation the query answers, well inside Temporal's payload
// limit: the oldest messages after the first (the task) are left out past it.
const maxPeerBytes = 1 << 20

// peer is agent k's conversation as the workflow holds it, within maxPeerBytes: as its
// running turn's first call sent it, else as its last turn left it.
func (w *run) peer(k int) []provider.Message {
	if k < 0 || k >= len(w.convs) {
		return nil
	}
	msgs := w.convs[k].Msgs[:min(max(w.convs[k].Sent, 0), len(w.convs[k].Msgs))]
	if w.running[k] != nil {
		msgs = w.begun[k].Msgs
	}
	size := 0
	for _, m := range msgs {
		size += messageSize(m)
	}
	for len(msgs) > 2 && size > maxPeerBytes {
		size -= messageSize(msgs[1])
		msgs = append(msgs[:1:1], msgs[2:]...)
	}
	return msgs
}

func messageSize(m provider.Message) int {
	n := len(m.Content) + 100
	for _, tc := range m.ToolCalls {
		n += len(tc.Arguments) + 100
	}
	return n
}

// peerContext is engine.Options.PeerContext for a turn of workflow wid: it asks the
// workflow; nil without a client.
func peerContext(ctx context.Context, c client.Client, wid string) func(int) []provider.Message {
	if c == nil {
		return nil
	}
	return func(k int) []provider.Message {
		qctx, cancel := context.WithTimeout(ctx, signalTimeout)
		defer cancel()
		v, err := c.QueryWorkflow(qctx, wid, "", QueryPeer, k)
		var msgs []provider.Message
		if err != nil || v.Get(&msgs) != nil {
			return nil // the side call answers from the agent's system prompt alone
		}
		return msgs
	}
}

// agentIndex is the agent whose id is id, or fallback when none is.
func (w *run) agentIndex(id string, fallback int) int {
	if k := w.x.Index(id); k >= 0 {
		return k
	}
	return fallback
}
