package temporalrun

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"massgen/internal/app"
	"massgen/internal/event"
)

// The load's sessions with tools: quickTeam with workspaces, so that each is held by one
// worker (a claim, a release, snapshots through the store). The writer (the winner) writes a
// note; the reader, slower, reads it from the writer's snapshot before answering.

// peerNote is what the writer writes and the reader reads.
const peerNote = "Paris lies on the Seine."

// toolLoadTeam is quickTeam with file tools: agent3 (long) writes note.txt in its workspace
// and answers at once; agent2 (medium) waits 300 ms a call, then reads note.txt from
// agent3's snapshot (<run>/snapshots/agent3, two levels above its own workspace).
var toolLoadTeam = `
agents:
  - id: short
    backend: {type: scripted, model: s1, answers: ["Paris."], vote: longest}
  - id: medium
    backend:
      type: scripted
      model: s2
      latency: 300ms
      cwd: ws
      tool_calls: [{name: read_file, args: {path: ../../snapshots/agent3/note.txt}}]
      answers: ["The capital is Paris."]
      vote: longest
  - id: long
    backend:
      type: scripted
      model: s3
      cwd: ws
      tool_calls: [{name: write_file, args: {path: note.txt, content: "` + peerNote + `"}}]
      answers: ["The capital of France is Paris, on the Seine."]
      vote: longest
`

// toolStats is what one session with tools did, read from its events and log folder; the
// store's copies are what a held session makes (locally there is no store).
type toolStats struct {
	PeerRead bool // the reader found the writer's note
	Moved    bool // a "moved" event: the session went to another worker with its workspaces
	// Puts are the snapshots and the final workspace put in the store; Gets the copies out
	// of it (restored workspaces and the caller's copy of the winner's).
	Puts, Gets int
}

// checkTools says what is wrong with a finished session of toolLoadTeam ("" when nothing
// is): the winner's note must be in <log>/final/<winner>/workspace.
func checkTools(res app.Result, evs []event.Event) (string, toolStats) {
	var st toolStats
	b, err := os.ReadFile(filepath.Join(res.Dir, "final", res.Winner, "workspace", "note.txt"))
	if err != nil || string(b) != peerNote {
		return fmt.Sprintf("%s: the winner's note in final/%s/workspace is %q (%v)", res.Dir, res.Winner, b, err), st
	}
	st.Puts, st.Gets = 1, 1 // the winner's workspace, into the store and out of it
	for _, e := range evs {
		switch p := e.Payload.(type) {
		case event.ToolResult:
			if p.Agent == "medium" && p.Tool == "read_file" && !p.IsError && strings.Contains(p.Content, peerNote) {
				st.PeerRead = true
			}
		case event.AnswerSubmitted:
			if !e.Preview && p.Agent != "short" { // the agents with workspaces
				st.Puts++
			}
		case event.ToolServerStatus:
			if p.Server == event.ServerWorkspace && p.Status == "moved" {
				st.Moved = true
				if i := strings.LastIndex(p.Detail, ": "); i >= 0 {
					st.Gets += len(strings.Split(p.Detail[i+2:], ", "))
				}
			}
		}
	}
	return "", st
}

// checkHeld checks what a load through Temporal did with its sessions with tools: the
// readers found the peer's note, the killed worker held some and all of them moved on with
// their workspaces, and nothing is left in the store or the surviving workers' workspaces.
func checkHeld(tb testing.TB, r loadReport) {
	tb.Helper()
	// The reader reads once, 300 ms into its turn: on a loaded machine the writer's snapshot
	// is sometimes not there yet (2 of 250 in a run). None would be if the holder did not
	// show the agents each other's snapshots.
	if r.PeerReads < r.ToolSessions/2 {
		tb.Errorf("%d of %d sessions with tools found the peer's note", r.PeerReads, r.ToolSessions)
	}
	if r.HeldAtKill == 0 {
		tb.Error("the killed worker held no session with tools")
	}
	// Its turns fail after 5 s (heartbeat, or waiting for it to take them), 10 s when the
	// session's workflow task was on the killed worker too; then another worker claims it.
	if r.Moved == 0 || r.MovedOn > 15*time.Second {
		tb.Errorf("%d of the %d sessions the killed worker held moved with their workspaces, the last claimed again %s after the kill (want within 15 s)",
			r.Moved, r.HeldAtKill, r.MovedOn)
	}
	if r.StoreLeft != 0 || r.WorkspacesLeft != 0 {
		tb.Errorf("%d entries left in the store, %d folders in the surviving workers' workspaces", r.StoreLeft, r.WorkspacesLeft)
	}
}

// busiestHolder picks the worker process to kill: the one holding the most of the running
// sessions with tools (the first when none holds any), so that the kill hits held sessions.
func busiestHolder(ctx context.Context, tb testing.TB, c client.Client, procs []*exec.Cmd, running map[int]bool, wids *sync.Map) int {
	held := make([]int, len(procs))
	for k := range running {
		wid, ok := wids.Load(k)
		if !ok {
			continue
		}
		cs, _, err := claims(ctx, c, wid.(string))
		if err != nil {
			tb.Logf("the claims of %s: %v", wid, err)
			continue
		}
		for i, p := range procs {
			if holdsAt(cs, p.Process.Pid, time.Now()) {
				held[i]++
			}
		}
	}
	return slices.Index(held, slices.Max(held))
}

// movedOn adds session k, if the killed worker (pid) held it at the kill, to r's held
// sessions: when another worker claimed it, and whether its events say it moved. A session
// claimed more than once otherwise moved away from a live worker: r.Reclaimed.
func movedOn(ctx context.Context, tb testing.TB, c client.Client, r *loadReport, wids *sync.Map, k, pid int, killedAt time.Time, moved bool) {
	wid, ok := wids.Load(k)
	if !ok {
		return
	}
	cs, wait, err := claims(ctx, c, wid.(string))
	if err != nil {
		tb.Errorf("the claims of %s: %v", wid, err)
		return
	}
	r.TurnWait = max(r.TurnWait, wait)
	if !holdsAt(cs, pid, killedAt) {
		if slices.ContainsFunc(cs[min(1, len(cs)):], func(c claim) bool { return c.Queue != "" }) {
			r.Reclaimed++
			tb.Logf("session %d (%s) was claimed again without a kill: %+v", k, wid, cs)
		}
		return
	}
	r.HeldAtKill++
	if moved {
		r.Moved++
	}
	i := slices.IndexFunc(cs, func(c claim) bool { return c.At.After(killedAt) && c.Queue != "" })
	if i < 0 {
		tb.Errorf("session %d (%s) was held by the killed worker and never claimed again: %+v", k, wid, cs)
		return
	}
	if d := cs[i].At.Sub(killedAt); d > r.MovedOn {
		r.MovedOn, r.lastMoved = d, wid.(string)
	}
}

// claim is one completed ClaimActivity of a session: the task queue of the worker that took
// it, and when; or, with Queue "", a completed ReleaseActivity.
type claim struct {
	Queue string
	At    time.Time
}

// claims lists a session's completed claims and releases in order, and the longest any of
// its turns that started waited for a worker to take it.
func claims(ctx context.Context, c client.Client, wid string) ([]claim, time.Duration, error) {
	it := c.GetWorkflowHistory(ctx, wid, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	scheduled := map[int64]string{}
	at := map[int64]time.Time{}
	var out []claim
	var wait time.Duration
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return nil, 0, err
		}
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
			scheduled[e.GetEventId()], at[e.GetEventId()] = a.GetActivityType().GetName(), e.GetEventTime().AsTime()
		}
		if a := e.GetActivityTaskStartedEventAttributes(); a != nil && scheduled[a.GetScheduledEventId()] == TurnActivity {
			wait = max(wait, e.GetEventTime().AsTime().Sub(at[a.GetScheduledEventId()]))
		}
		a := e.GetActivityTaskCompletedEventAttributes()
		if a == nil {
			continue
		}
		switch scheduled[a.GetScheduledEventId()] {
		case ReleaseActivity:
			out = append(out, claim{At: e.GetEventTime().AsTime()})
		case ClaimActivity:
			var r ClaimResult
			if err := converter.GetDefaultDataConverter().FromPayloads(a.GetResult(), &r); err != nil {
				return nil, 0, err
			}
			out = append(out, claim{Queue: r.Queue, At: e.GetEventTime().AsTime()})
		}
	}
	return out, wait, nil
}

// holdsAt reports whether the worker process pid held the session at time at: it claimed the
// session last before then, and had not released it.
func holdsAt(cs []claim, pid int, at time.Time) bool {
	i := slices.IndexFunc(cs, func(c claim) bool { return c.At.After(at) })
	if i < 0 {
		i = len(cs)
	}
	return i > 0 && strings.Contains(cs[i-1].Queue, fmt.Sprintf("-%d-", pid))
}

// activityTimes sums a workflow's activities by type: how many ran and how long they took
// from scheduled to closed.
func activityTimes(c client.Client, wid string) string {
	it := c.GetWorkflowHistory(context.Background(), wid, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	type sched struct {
		name string
		at   time.Time
	}
	open := map[int64]sched{}
	n, total := map[string]int{}, map[string]time.Duration{}
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return err.Error()
		}
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
			open[e.GetEventId()] = sched{a.GetActivityType().GetName(), e.GetEventTime().AsTime()}
			continue
		}
		var id int64
		switch {
		case e.GetActivityTaskCompletedEventAttributes() != nil:
			id = e.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()
		case e.GetActivityTaskFailedEventAttributes() != nil:
			id = e.GetActivityTaskFailedEventAttributes().GetScheduledEventId()
		case e.GetActivityTaskTimedOutEventAttributes() != nil:
			id = e.GetActivityTaskTimedOutEventAttributes().GetScheduledEventId()
		default:
			continue
		}
		if s, ok := open[id]; ok {
			n[s.name]++
			total[s.name] += e.GetEventTime().AsTime().Sub(s.at)
		}
	}
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(n)) {
		parts = append(parts, fmt.Sprintf("%s %d× %s", strings.TrimPrefix(name, "massgen."), n[name], (total[name]/time.Duration(n[name])).Round(time.Millisecond)))
	}
	return strings.Join(parts, ", ")
}

// cpuTime is the CPU time process pid (0: this one) has used so far, from /proc.
func cpuTime(pid int) time.Duration {
	p := "/proc/self/stat"
	if pid > 0 {
		p = fmt.Sprintf("/proc/%d/stat", pid)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return 0
	}
	// The fields after the command name, which ends with the last ")": state is field 3,
	// utime and stime (clock ticks, 100 a second) fields 14 and 15.
	_, rest, _ := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	var ticks int64
	for _, s := range f[11:13] {
		var n int64
		fmt.Sscan(s, &n)
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}
