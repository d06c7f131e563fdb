// Package memory is persistent semantic memory (MassGen's memory: block) and the policy that
// keeps a conversation inside its model's context window. After a turn, each agent's model
// extracts facts from what it answered; they are embedded through the agent's provider and
// stored in a private vector store; at the start of a later turn or session the facts nearest
// to the question are put into the agent's system prompt. The pure parts (which memories an
// agent may see, the extraction prompt and its parsing, the compression plan) do no I/O.
package memory

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"massgen/internal/provider"
)

// Embedder turns texts into vectors through a provider's embeddings API.
type Embedder interface {
	// Model names the vectors' space, "backend/model": only vectors of one model compare.
	Model() string
	// Embed returns one vector per text, in order, and the usage the call was billed.
	Embed(ctx context.Context, texts []string) ([][]float32, provider.Usage, error)
}

// Complete asks the agent's own model one question (system and user text) and returns its
// reply and usage.
type Complete func(ctx context.Context, system, user string) (string, provider.Usage, error)

// Scope is where a turn stands: memories are kept per team, per session and per agent.
type Scope struct {
	Team    string // the team's identity (its config)
	Session string // memory.persistent_memory.session_name, else the log session
	Run     string // the log session this process writes (log_<timestamp>)
	Turn    int
	Agent   string
	// HistoryIntact is set while the conversation still holds every earlier turn of Run
	// verbatim (nothing compressed): their facts would then only repeat it.
	HistoryIntact bool
	// ExcludeRecent is memory.retrieval.exclude_recent.
	ExcludeRecent bool
}

// Visible reports whether the agent of sc may be shown m: a memory of its team and session
// that is its own, or a winner's from a finished turn (MassGen's cross-agent sharing of
// winners' knowledge; an unfinished turn's facts would leak what peers are still writing).
// With ExcludeRecent, the facts of earlier turns still in the conversation are left out.
func Visible(m Memory, sc Scope) bool {
	if m.Team != sc.Team || m.Session != sc.Session {
		return false
	}
	sameRun := m.Run == sc.Run
	if sameRun && m.Turn >= sc.Turn {
		return false
	}
	if sc.ExcludeRecent && sameRun && sc.HistoryIntact {
		return false
	}
	return m.Agent == sc.Agent || m.Winner
}

// Block is the system-prompt section that carries hits; "" for none. It never names an agent:
// agents know each other only by anonymous labels.
func Block(hits []Hit, self string) string {
	if len(hits) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Relevant memories\n\nFacts remembered from earlier turns and sessions; they may be out of date, so check them before relying on them:\n")
	for _, h := range hits {
		from := ""
		if h.Agent != self {
			from = "(from an earlier winning answer) "
		}
		fmt.Fprintf(&b, "- %s%s\n", from, oneLine(h.Text))
	}
	return b.String()
}

const extractSystem = `You keep a long-term memory for an assistant. From the exchange below, list the facts worth remembering in later conversations: concrete, self-contained statements (names, numbers, decisions, preferences, findings, what worked and why) that would still make sense months later without the conversation.
Leave out: opinions about other answers, votes, instructions about formatting, generic advice, and anything secret (keys, passwords, tokens).
Reply with JSON only: {"facts": ["...", "..."]} (at most 20 facts, one sentence each; {"facts": []} when nothing is worth keeping).`

// ExtractionPrompt is the system and user text that asks a model for the facts of one turn.
func ExtractionPrompt(question, answer string) (system, user string) {
	return extractSystem, "Question:\n" + clip(question, 20000) + "\n\nAnswer:\n" + clip(answer, 60000)
}

// ParseFacts reads a model's extraction reply: {"facts": [...]} or a bare list, inside a code
// fence or not. Facts are trimmed, cut to MaxFactChars, deduplicated and capped at
// MaxFactsPerTurn; a reply that holds no such JSON is an error.
func ParseFacts(reply string) ([]string, error) {
	s := strings.TrimSpace(reply)
	s = strings.TrimPrefix(s, "```json")
	s = strings.TrimPrefix(s, "```")
	s = strings.TrimSuffix(strings.TrimSpace(s), "```")
	var list []string
	var obj struct {
		Facts []string `json:"facts"`
	}
	if start := strings.IndexAny(s, "{["); start >= 0 {
		s = s[start:]
	}
	dec := json.NewDecoder(strings.NewReader(s))
	switch {
	case strings.HasPrefix(s, "{") && dec.Decode(&obj) == nil:
		list = obj.Facts
	case strings.HasPrefix(s, "[") && dec.Decode(&list) == nil:
	default:
		return nil, errors.New(`the model's reply is not {"facts": [...]}`)
	}
	var out []string
	seen := map[string]bool{}
	for _, f := range list {
		f = oneLine(f)
		if f == "" || seen[strings.ToLower(f)] {
			continue
		}
		seen[strings.ToLower(f)] = true
		out = append(out, clip(f, MaxFactChars))
		if len(out) == MaxFactsPerTurn {
			break
		}
	}
	return out, nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// clip cuts s to at most n bytes on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// NewID is a random memory id.
func NewID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "mem_" + hex.EncodeToString(b[:])
}

// Recall returns the memories of sc's agent nearest to query, at most limit of them, and what
// embedding the query was billed.
func Recall(ctx context.Context, st *Store, emb Embedder, sc Scope, query string, limit int) ([]Hit, provider.Usage, error) {
	if limit <= 0 || strings.TrimSpace(query) == "" {
		return nil, provider.Usage{}, nil
	}
	// Nothing the agent may see: no embedding to pay for.
	if len(st.List(ctx, func(m Memory) bool { return m.Model == emb.Model() && Visible(m, sc) })) == 0 {
		return nil, provider.Usage{}, nil
	}
	vecs, u, err := emb.Embed(ctx, []string{clip(query, 8000)})
	if err != nil {
		return nil, u, fmt.Errorf("embeddings (%s): %w", emb.Model(), err)
	}
	if len(vecs) != 1 {
		return nil, u, fmt.Errorf("embeddings (%s): %d vectors for 1 text", emb.Model(), len(vecs))
	}
	hits, err := st.Query(ctx, emb.Model(), vecs[0], limit, func(m Memory) bool { return Visible(m, sc) })
	return hits, u, err
}

// Spent is what remembering one turn was billed: the extraction by the agent's model and the
// embeddings.
type Spent struct {
	Extract, Embed provider.Usage
}

// Remember extracts the facts of one agent's turn with its model, removes secrets with
// scrub, embeds and stores them. It returns how many were stored.
func Remember(ctx context.Context, st *Store, emb Embedder, ask Complete, sc Scope, question, answer string, winner bool,
	scrub func(string) string, now time.Time) (int, Spent, error) {
	var spent Spent
	if strings.TrimSpace(answer) == "" {
		return 0, spent, nil
	}
	system, user := ExtractionPrompt(scrub(question), scrub(answer))
	reply, u, err := ask(ctx, system, user)
	spent.Extract = u
	if err != nil {
		return 0, spent, fmt.Errorf("fact extraction: %w", err)
	}
	facts, err := ParseFacts(reply)
	if err != nil {
		return 0, spent, fmt.Errorf("fact extraction: %w", err)
	}
	// Secrets go before anything is embedded or stored, whatever the model copied.
	var kept []string
	for _, f := range facts {
		if f = strings.TrimSpace(scrub(f)); f != "" {
			kept = append(kept, f)
		}
	}
	if len(kept) == 0 {
		return 0, spent, nil
	}
	vecs, u, err := emb.Embed(ctx, kept)
	spent.Embed = u
	if err != nil {
		return 0, spent, fmt.Errorf("embeddings (%s): %w", emb.Model(), err)
	}
	if len(vecs) != len(kept) {
		return 0, spent, fmt.Errorf("embeddings (%s): %d vectors for %d facts", emb.Model(), len(vecs), len(kept))
	}
	mems := make([]Memory, len(kept))
	for i, f := range kept {
		mems[i] = Memory{ID: NewID(), Text: f, Agent: sc.Agent, Team: sc.Team, Session: sc.Session, Run: sc.Run, Turn: sc.Turn,
			Winner: winner, Created: now, Model: emb.Model()}
	}
	if err := st.Add(ctx, mems, vecs); err != nil {
		return 0, spent, err
	}
	return len(mems), spent, nil
}
