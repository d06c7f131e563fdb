package runlog

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"massgen/internal/event"
	"massgen/internal/private"
	"massgen/internal/provider"
	"massgen/internal/readmodel"
)

// conversation is an agent's prompt as its model calls rebuilt it: what context.txt shows.
type conversation struct {
	System   string
	Messages []provider.Message
}

func (c *conversation) apply(p event.ModelCalled) {
	if p.Fresh {
		c.System, c.Messages = p.System, nil
	}
	c.Messages = append(c.Messages, p.Messages...)
}

// snapshot returns a copy of the conversation as it is now.
func (c *conversation) snapshot() conversation {
	return conversation{System: c.System, Messages: slices.Clone(c.Messages)}
}

// conv returns agent id's conversation, empty before its first model call. Called by the writer goroutine.
func (r *Recorder) conv(id string) *conversation {
	c := r.convs[id]
	if c == nil {
		c = &conversation{}
		r.convs[id] = c
	}
	return c
}

// snapshotDir returns a new <agent>/<YYYYMMDD_HHMMSS_ffffff> folder name for a snapshot taken
// at t, adding _2, _3, ... when the agent already has one with that name. Called by the writer goroutine.
func (r *Recorder) snapshotDir(agent string, t time.Time) string {
	base := path.Join(r.attemptDir(), safeName(agent), folderTime(t))
	name := base
	for n := 2; r.folders[name]; n++ {
		name = fmt.Sprintf("%s_%d", base, n)
	}
	r.folders[name] = true
	return name
}

// folderTime formats t as MassGen names snapshot and log folders.
func folderTime(t time.Time) string {
	return fmt.Sprintf("%s_%06d", t.Format("20060102_150405"), t.Nanosecond()/1000)
}

// safeName makes an agent id usable as one path element.
func safeName(id string) string {
	id = strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 {
			return '_'
		}
		return r
	}, id)
	if id == "" || id == "." || id == ".." {
		return "_" + id
	}
	return id
}

// writeAnswer writes <agent>/<ts>/answer.txt, context.txt and the answer's changedoc.md. Called by the writer goroutine.
func (r *Recorder) writeAnswer(e event.Event, p event.AnswerSubmitted) {
	dir := r.snapshotDir(p.Agent, e.Time)
	r.writeFile(dir+"/answer.txt", []byte(p.Content))
	r.writeFile(dir+"/context.txt", []byte(r.conv(p.Agent).snapshot().text()))
	if p.Changedoc != "" {
		r.writeFile(dir+"/changedoc.md", []byte(p.Changedoc))
	}
	r.writePlan(p.Agent, dir+"/tasks/plan.json")
}

// writePlan writes agent's task plan (task planning) to rel, as MassGen's planning server
// writes tasks/plan.json: <agent>/tasks/plan.json is its plan now, and each answer folder holds
// the plan as it stood when the answer was given. An agent without a plan writes nothing.
// Called by the writer goroutine.
func (r *Recorder) writePlan(agent, rel string) {
	a := r.state.Agent(agent)
	if a == nil || a.Plan == nil {
		return
	}
	path := filepath.Join(r.dir, filepath.FromSlash(rel))
	if err := private.MkdirAll(filepath.Dir(path)); err != nil {
		r.fail(path, err)
		return
	}
	if err := private.WriteFileAtomic(path, indentJSON(map[string]any{"tasks": a.Plan})); err != nil {
		r.fail(path, err)
	}
}

// voteFile is vote.json: MassGen's fields, with answer_set_version instead of its iteration
// and round counters.
type voteFile struct {
	VoterID              string      `json:"voter_id"`
	VoterAnonID          string      `json:"voter_anon_id"`
	VotedFor             string      `json:"voted_for"`
	VotedForAnon         string      `json:"voted_for_anon"`
	VotedForLabel        string      `json:"voted_for_label"`
	Reason               string      `json:"reason"`
	Timestamp            string      `json:"timestamp"`
	UnixTimestamp        float64     `json:"unix_timestamp"`
	AnswerSetVersion     int         `json:"answer_set_version"`
	AvailableOptions     []string    `json:"available_options"`
	AvailableOptionsAnon []string    `json:"available_options_anon"`
	VoteContext          voteContext `json:"vote_context"`
}

type voteContext struct {
	TotalAgents       int    `json:"total_agents"`
	AgentsWithAnswers int    `json:"agents_with_answers"`
	CurrentTask       string `json:"current_task"`
}

// writeVote writes <agent>/<ts>/vote.json and context.txt. Called by the writer goroutine; the vote is
// already applied to r.state.
func (r *Recorder) writeVote(e event.Event, p event.VoteCast) {
	s := r.state
	voter := s.Agent(p.Agent)
	v := voteFile{
		VoterID:              p.Agent,
		VotedFor:             p.Target,
		VotedForAnon:         p.TargetLabel,
		VotedForLabel:        p.AnswerLabel,
		Reason:               p.Reason,
		Timestamp:            e.Time.Format(time.RFC3339Nano),
		UnixTimestamp:        unix(e.Time),
		AnswerSetVersion:     p.Version,
		AvailableOptions:     []string{},
		AvailableOptionsAnon: []string{},
		VoteContext:          voteContext{TotalAgents: len(s.Agents), CurrentTask: s.Question},
	}
	if voter != nil {
		v.VoterAnonID = voter.Label
	}
	for _, a := range s.AgentsWithAnswers() {
		v.AvailableOptions = append(v.AvailableOptions, a.ID)
		v.AvailableOptionsAnon = append(v.AvailableOptionsAnon, a.Label)
	}
	v.VoteContext.AgentsWithAnswers = len(v.AvailableOptions)
	dir := r.snapshotDir(p.Agent, e.Time)
	r.writeFile(dir+"/vote.json", indentJSON(v))
	r.writeFile(dir+"/context.txt", []byte(r.conv(p.Agent).snapshot().text()))
}

// finalContext is final/<winner>/context.txt: the winner's conversation, plus what MassGen's
// final snapshot adds, the answers and the current votes.
type finalContext struct {
	conversation
	Answers []finalAnswerEntry
	Votes   []finalVoteEntry
}

type finalAnswerEntry struct{ Label, Agent, Content string }

type finalVoteEntry struct{ Voter, VoterLabel, AnswerLabel, Reason string }

// writeFinal writes final/<winner>/answer.txt (the content exactly), context.txt and the final
// changedoc.md. Called by
// the writer goroutine.
func (r *Recorder) writeFinal(p event.FinalAnswer) {
	s := r.state
	ctx := finalContext{conversation: r.conv(p.Agent).snapshot(), Answers: []finalAnswerEntry{}, Votes: []finalVoteEntry{}}
	for _, a := range s.AgentsWithAnswers() {
		l := a.LatestAnswer()
		ctx.Answers = append(ctx.Answers, finalAnswerEntry{Label: l.Label, Agent: a.ID, Content: l.Content})
	}
	for _, a := range s.Agents {
		if v := a.Vote; s.Counts(v) {
			ctx.Votes = append(ctx.Votes, finalVoteEntry{Voter: a.ID, VoterLabel: a.Label, AnswerLabel: v.AnswerLabel, Reason: v.Reason})
		}
	}
	// With restarts, each attempt keeps its final answer in attempt_<k>/final/ and the turn's
	// final/ holds the latest attempt's (MassGen copies the last one up).
	for _, dir := range []string{path.Join(r.attemptDir(), "final", safeName(p.Agent)), "final/" + safeName(p.Agent)} {
		r.writeFile(dir+"/answer.txt", []byte(p.Content))
		r.writeFile(dir+"/context.txt", []byte(ctx.text()))
		if p.Changedoc != "" {
			r.writeFile(dir+"/changedoc.md", []byte(p.Changedoc))
		}
		if r.attemptDir() == "" {
			break
		}
	}
}

// attemptDir is the folder of the running attempt's snapshots, attempt_<k> (MassGen's layout
// when max_orchestration_restarts is above 0, attempt 1 included), "" without restarts.
// Called by the writer goroutine.
func (r *Recorder) attemptDir() string {
	if r.state.MaxAttempts == 0 {
		return ""
	}
	return fmt.Sprintf("attempt_%d", max(r.state.Attempt, 1))
}

// dropTurnFinal removes the turn's final/ when a restart sets its answer aside: until the next
// attempt presents, the turn has no final answer (attempt_<k>/final/ keeps the old one).
// Called by the writer goroutine.
func (r *Recorder) dropTurnFinal() {
	path := filepath.Join(r.dir, "final")
	if err := os.RemoveAll(path); err != nil {
		r.fail(path, err)
	}
}

// metadataFile is metadata.json.
type metadataFile struct {
	Version          string          `json:"version"`
	Question         string          `json:"question"`
	SessionID        string          `json:"session_id"`
	Turn             int             `json:"turn"`
	LogDir           string          `json:"log_dir"`
	ConfigPath       string          `json:"config_path"`
	ConfigHash       string          `json:"config_hash,omitempty"` // ours: what a resume checks
	Config           any             `json:"config"`
	Args             []string        `json:"args"`
	StartedAt        *string         `json:"started_at"`
	EndedAt          *string         `json:"ended_at"`
	DurationSeconds  float64         `json:"duration_seconds"`
	Status           string          `json:"status"`
	ExitCode         *int            `json:"exit_code"`
	Error            string          `json:"error,omitempty"`
	EndReason        *string         `json:"end_reason"`
	Winner           *string         `json:"winner"`
	FinalAnswerLabel *string         `json:"final_answer_label"`
	Agents           []metadataAgent `json:"agents"`
	Totals           metadataTotals  `json:"totals"`
	Resumed          []resumeJSON    `json:"resumed,omitempty"` // ours: each massgen resume
	// Ours: the process that writes the log.
	PID  int    `json:"pid,omitempty"`
	Host string `json:"host,omitempty"`
}

type metadataAgent struct {
	ID      string           `json:"id"`
	Label   string           `json:"label"`
	Backend string           `json:"backend"`
	Model   string           `json:"model"`
	Answers int              `json:"answers"`
	Votes   int              `json:"votes"`
	Status  readmodel.Status `json:"status"`
	Usage   tokensJSON       `json:"usage"`
	CostUSD float64          `json:"cost_usd"`
	// Ours: false when the model has no price and used tokens (cost_usd leaves them out).
	CostKnown bool   `json:"cost_known"`
	BaseURL   string `json:"base_url,omitempty"`
}

type metadataTotals struct {
	Answers      int        `json:"answers"`
	Votes        int        `json:"votes"`
	IgnoredVotes int        `json:"ignored_votes"`
	Usage        tokensJSON `json:"usage"`
	CostUSD      float64    `json:"cost_usd"`
	CostKnown    bool       `json:"cost_known"`
	// UnpricedModels are the models whose cost is unknown.
	UnpricedModels []string `json:"unpriced_models,omitempty"`
}

// metadataJSON renders metadata.json. A session without SessionEnded (the recording stopped
// early) has status "incomplete", no ended_at and no exit_code.
func metadataJSON(s *readmodel.State, meta Meta) []byte {
	m := metadataFile{
		Version:    meta.Version,
		Question:   s.Question,
		SessionID:  s.SessionID,
		Turn:       s.Turn,
		LogDir:     s.LogDir,
		ConfigPath: meta.ConfigPath,
		ConfigHash: meta.ConfigHash,
		Config:     meta.Config,
		Resumed:    resumesJSON(s),
		PID:        meta.PID,
		Host:       meta.Host,
		Args:       slices.Clone(meta.Args),
		StartedAt:  timeString(s.StartTime),
		Status:     "incomplete",
		EndReason:  optional(s.EndReason),
		Winner:     optional(s.Winner),
		Agents:     []metadataAgent{},
		Totals: metadataTotals{
			Answers:      s.Totals.Answers,
			Votes:        s.Totals.Votes,
			IgnoredVotes: s.Totals.IgnoredVotes,
			Usage:        toTokensJSON(s.Totals.Usage),
			CostUSD:      roundCost(s.Totals.CostUSD),
			CostKnown:    s.CostKnown(),

			UnpricedModels: s.UnpricedModels(),
		},
	}
	if m.Args == nil {
		m.Args = []string{}
	}
	end := s.LastTime
	if s.Ended {
		end = s.EndTime
		m.EndedAt = timeString(s.EndTime)
		m.Status, m.ExitCode, m.Error = s.SessionStatus, &s.ExitCode, s.SessionError
	}
	if !s.StartTime.IsZero() {
		m.DurationSeconds = max(0, end.Sub(s.StartTime).Seconds())
	}
	if s.Final != nil {
		m.FinalAnswerLabel = &s.Final.Label
	}
	for _, a := range s.Agents {
		m.Agents = append(m.Agents, metadataAgent{
			ID: a.ID, Label: a.Label, Backend: a.Backend, Model: a.Model,
			Answers: len(a.Answers), Votes: a.VotesCast, Status: a.Status,
			Usage: toTokensJSON(a.Usage), CostUSD: roundCost(a.CostUSD), CostKnown: a.CostKnown(), BaseURL: a.BaseURL,
		})
	}
	b, err := marshalIndent(m)
	if err != nil {
		// Only Config can fail to encode; say so in its place rather than lose the file.
		m.Config = fmt.Sprintf("config not encodable: %v", err)
		b, _ = marshalIndent(m)
	}
	return b
}

func timeString(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.Format(time.RFC3339Nano)
	return &s
}

// indentJSON encodes v (built from strings, numbers and provider messages, which cannot fail)
// as indented JSON with a trailing newline.
func indentJSON(v any) []byte {
	b, err := marshalIndent(v)
	if err != nil {
		b = fmt.Appendf(nil, "%q\n", "encode: "+err.Error())
	}
	return b
}
