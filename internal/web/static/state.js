// The session model: events.jsonl envelopes folded into what every view draws. Pure data, no
// DOM: the live stream and the replay feed the same apply(). Items are append-only per agent;
// an item that changes later (a tool result arriving, a vote going stale) bumps its rev.
const keep = 64 * 1024; // streamed text kept per item, as the server's State does
const tail = (s) => (s.length > keep ? s.slice(s.length - keep) : s);
const workflow = new Set(['new_answer', 'vote']);
const maxPending = 64; // calls remembered as running per agent, as readmodel's maxPending

export function newModel() {
  return {
    question: '', turn: 1, settings: {}, agents: [], byId: {}, byLabel: {},
    answers: [], answerByLabel: {}, votes: [], final: null, presentation: '', presenter: '',
    winner: '', winnerLabel: '', answerLabel: '', tally: null, endReason: '', tie: false,
    status: 'running', error: '', exitCode: null, duration: null, start: null, last: null,
    version: 0, permissions: [], permById: {}, messages: [], notes: [], rev: 0,
    questions: [], qById: {},
    attempt: 0, maxAttempts: 0, restarts: [], evaluation: null, ended: false, verdicts: [],
  };
}

function agentOf(x, i) {
  return {
    ...x, index: i, status: 'waiting', detail: '', items: [], round: 0, context: [], vote: null,
    current: null, text: null, reasoning: null, tools: {}, answers: 0, votes: 0,
    usage: { input: 0, cached: 0, output: 0, reasoning: 0, cost: 0, calls: 0, estimated: false },
    rounds: [], toolCalls: 0, toolMs: 0, toolErrors: 0, timeUp: false,
    writing: '', pending: [], cutOff: [], dead: false,
  };
}

function item(a, kind, t, props) {
  const it = { kind, t, rev: 0, round: a.round, ...props };
  a.items.push(it);
  return it;
}

function round(a) { return a.rounds[a.rounds.length - 1]; }

// apply folds one event {seq, time, type, data} into m.
export function apply(m, e) {
  const d = e.data || {};
  const t = Date.parse(e.time);
  if (m.start == null) m.start = t;
  m.last = t;
  m.rev++;
  const a = d.agent ? m.byId[d.agent] : null;
  switch (e.type) {
    case 'session_started':
      m.question = d.question || '';
      m.turn = d.turn || 1;
      m.settings = d.settings || {};
      m.history = d.history || [];
      m.start = t;
      m.agents = (d.agents || []).map(agentOf);
      m.byId = Object.fromEntries(m.agents.map((x) => [x.id, x]));
      m.byLabel = Object.fromEntries(m.agents.map((x) => [x.label, x]));
      if (m.settings.max_orchestration_restarts > 0) { m.attempt = 1; m.maxAttempts = 1 + m.settings.max_orchestration_restarts; }
      break;
    case 'turn_started':
      if (!a) break;
      endStreams(m, a);
      endCalls(a);
      a.round++;
      a.status = 'working';
      a.detail = '';
      // The answers this turn sees: each available agent's latest answer so far.
      a.context = (d.available || []).map((l) => latestOf(m, l)).filter(Boolean).map((x) => x.label);
      a.rounds.push({ n: a.round, start: t, end: null, input: 0, cached: 0, output: 0, reasoning: 0, cost: 0, calls: 0, tools: 0, toolMs: 0, outcome: '' });
      break;
    case 'model_called':
      if (a && a.status !== 'presenting') { a.status = 'working'; a.detail = d.attempt > 1 ? `attempt ${d.attempt} of 3` : ''; }
      if (a) { endStreams(m, a); endCalls(a); }
      break;
    case 'text_delta':
      if (d.presentation && m.evaluation && !m.evaluation.decision && m.evaluation.agent === d.agent) {
        // The post-evaluation's text, not the final answer's (readmodel's Evaluation).
        m.evaluation.text = tail(m.evaluation.text + d.text);
        if (m.evaluation.item) { m.evaluation.item.text = m.evaluation.text; m.evaluation.item.rev++; }
        break;
      }
      if (d.presentation) {
        m.presentation = tail(m.presentation + d.text);
        if (a?.presenting) { a.presenting.text = m.presentation; a.presenting.rev++; }
        break;
      }
      if (!a) break;
      if (!a.text) a.text = item(a, 'text', t, { text: '' });
      a.text.text = tail(a.text.text + d.text);
      a.text.rev++;
      break;
    case 'reasoning_delta':
      if (!a) break;
      if (!a.reasoning) a.reasoning = item(a, 'reasoning', t, { text: '', presentation: !!d.presentation });
      a.reasoning.text = tail(a.reasoning.text + d.text);
      a.reasoning.rev++;
      break;
    case 'tool_call_streaming':
      if (a) { a.writing = d.tool; a.detail = `writing ${d.tool} (${d.bytes} bytes)`; }
      break;
    case 'tool_called': {
      if (a) written(a);
      if (!a || workflow.has(d.call?.name)) break;
      const it = item(a, 'tool', t, { name: d.call?.name || '?', args: d.call?.arguments || '', id: d.call?.id, result: null, output: '' });
      if (it.id) a.tools[it.id] = it;
      if (it.id && a.pending.length < maxPending) a.pending.push(it);
      a.toolCalls++;
      if (round(a)) round(a).tools++;
      break;
    }
    case 'tool_output': {
      const it = a?.tools[d.call_id];
      if (it) { it.output = tail(it.output + d.text); it.rev++; }
      break;
    }
    case 'tool_image': {
      // A screenshot the tool saved: the newest few, shown with the call as they come.
      const it = a?.tools[d.call_id];
      if (it) { it.images = [...(it.images || []), { path: d.path, thumb: d.thumb || '' }].slice(-4); it.rev++; }
      break;
    }
    case 'tool_result': {
      if (!a) break;
      let it = a.tools[d.call_id];
      if (!it) it = item(a, 'tool', t, { name: d.from_code ? d.tool + ' (from code)' : d.tool, args: '', id: d.call_id, output: '' });
      a.pending = a.pending.filter((x) => x.id !== d.call_id);
      Object.assign(it, { result: d.content, isError: !!d.is_error, truncated: !!d.truncated, ms: d.duration_ms || 0 });
      it.rev++;
      a.toolMs += d.duration_ms || 0;
      if (d.is_error) a.toolErrors++;
      if (round(a)) round(a).toolMs += d.duration_ms || 0;
      break;
    }
    case 'tool_rejected':
      if (!a) break;
      written(a);
      a.pending = a.pending.filter((x) => x.id !== d.call_id);
      item(a, 'note', t, { level: 'warn', text: `${d.tool} was refused: ${d.error}` });
      break;
    case 'enforcement_sent':
      // After a soft round timeout this message carries the time-up note, told already as
      // the timeout: every view (plain, TUI, here) shows one line for it, not a reminder too.
      if (a && a.timeUp) { a.timeUp = false; break; }
      if (a) item(a, 'note', t, { level: 'warn', text: 'made no workflow call and was reminded to answer or vote' });
      break;
    case 'agent_waiting':
      if (a) { a.status = 'waiting'; a.detail = d.reason; }
      break;
    // Task planning: the agent's plan as its last change left it (the whole plan each time).
    case 'task_plan_changed':
      if (a) { a.plan = d.tasks || []; a.planRev = (a.planRev || 0) + 1; }
      break;
    // Decomposition mode: each agent's part, its stop, and the parts at the end.
    case 'subtasks_assigned':
      for (const s of d.subtasks || []) {
        const x = m.byId[s.agent];
        if (x) { x.subtask = s.text || ''; x.part = 'working'; x.detail = s.text ? `subtask: ${s.text}` : 'no subtask: picks its part'; }
      }
      break;
    case 'agent_stopped':
      if (!a) break;
      endStreams(m, a);
      a.writing = '';
      if (d.stale) {
        a.status = 'restarting';
        item(a, 'note', t, { level: 'warn', text: 'stop not counted: new work arrived meanwhile' });
        break;
      }
      a.status = 'done';
      a.part = d.status;
      a.detail = `${d.status}: ${d.summary}`;
      item(a, 'note', t, { level: 'info', text: `stopped (${d.status}): ${d.summary}` });
      if (round(a)) round(a).outcome = `stopped (${d.status})`;
      break;
    case 'parts_integrated':
      for (const p of d.parts || []) {
        const x = m.byId[p.agent];
        if (!x) continue;
        x.part = p.status;
        const bad = p.status === 'unfinished' || p.status === 'failed';
        if (bad) item(x, 'note', t, { level: 'warn', text: `part ${p.status}: ${p.why}` });
      }
      if (m.byId[d.presenter]) {
        for (const c of d.conflicts || []) {
          const copies = Object.entries(c.copies || {}).map(([l, p]) => `${l}'s at ${p}`).join(', ');
          item(m.byId[d.presenter], 'note', t, { level: 'warn', text: `conflict: ${c.path} written differently by several parts; ${c.kept}'s kept, ${copies}` });
        }
      }
      break;
    case 'vote_deferred':
      if (a) item(a, 'note', t, { level: 'warn', text: `voted for ${d.target_label} before everyone answered; waiting for ${(d.waiting || []).join(', ')}` });
      break;
    case 'round_timeout':
      if (a && d.phase !== 'cut') a.timeUp = true;
      if (a) item(a, 'note', t, { level: 'warn', text: `round ${d.round} ${d.phase === 'cut' ? 'was cut off' : 'ran out of time'} after ${Math.round(d.elapsed_seconds)} s` });
      break;
    case 'answer_submitted': {
      if (!a) break;
      // A new answer wakes every agent that stopped on its part (decomposition mode).
      for (const x of m.agents || []) {
        if (x !== a && (x.part === 'complete' || x.part === 'blocked')) { x.part = 'working'; x.status = 'restarting'; }
      }
      endStreams(m, a, d.content);
      a.writing = '';
      const prev = latestOf(m, a.label);
      if (prev) { prev.superseded = true; prev.rev++; }
      a.answers++;
      a.status = 'answered';
      a.detail = '';
      for (const id of d.invalidated || []) {
        const v = m.byId[id];
        if (v?.vote) { v.vote.stale = true; v.vote.staleBy = d.label; v.vote.rev++; }
        if (v) { v.vote = null; if (v !== a) v.status = 'restarting'; }
      }
      a.vote = null;
      const ans = { label: d.label, agent: a.id, content: d.content, t, version: d.version, confidence: d.confidence ?? null, k: a.answers, context: a.context.filter((l) => l !== d.label), superseded: false, rev: 0 };
      m.answers.push(ans);
      m.answerByLabel[d.label] = ans;
      item(a, 'answer', t, { answer: ans });
      m.version = Math.max(m.version, d.version || 0);
      if (round(a)) round(a).outcome = `answered ${d.label}`;
      break;
    }
    case 'vote_cast': {
      if (!a) break;
      endStreams(m, a);
      a.writing = '';
      const v = { agent: a.id, answerLabel: d.answer_label, targetLabel: d.target_label, target: d.target, reason: d.reason, version: d.version,
        scoped: !!d.scoped, confidence: d.confidence ?? null, t, stale: false, ignored: false, rev: 0 };
      m.votes.push(v);
      a.vote = v;
      a.votes++;
      a.status = 'voted';
      a.detail = '';
      item(a, 'vote', t, { vote: v });
      if (round(a)) round(a).outcome = `voted for ${d.answer_label}`;
      break;
    }
    case 'vote_ignored': {
      if (!a) break;
      endStreams(m, a);
      written(a);
      const target = latestOf(m, d.target_label);
      const v = { agent: a.id, answerLabel: target?.label || d.target_label, targetLabel: d.target_label, reason: d.reason, version: d.seen_version, t, stale: true, ignored: true, rev: 0 };
      m.votes.push(v);
      item(a, 'vote', t, { vote: v });
      a.status = 'restarting';
      if (round(a)) round(a).outcome = 'stale vote';
      break;
    }
    case 'agent_error':
      if (!a) break;
      endCalls(a);
      a.status = d.fatal ? 'error' : d.timeout ? 'timeout' : 'retrying';
      a.detail = d.fatal ? d.message : `retrying (${d.consecutive}/${d.budget} failed): ${d.message}`;
      item(a, 'note', t, { level: 'error', text: d.message });
      break;
    case 'agent_dead':
      if (!a) break;
      endStreams(m, a);
      endCalls(a);
      a.status = /stopped/.test(d.reason || '') ? 'stopped' : 'dead';
      a.dead = true; // final for the attempt, whatever follows (readmodel's Dead)
      a.detail = d.reason;
      item(a, 'note', t, { level: 'error', text: `out of the session: ${d.reason}` });
      break;
    case 'subagent_started':
      if (a) item(a, 'subagent', t, { id: d.id, kind: d.kind || '', task: d.task, background: !!d.background, logDir: d.log_dir || '', status: 'running', answer: '', error: '' });
      break;
    case 'subagent_finished': {
      if (!a) break;
      let it = a.items.find((x) => x.kind === 'subagent' && x.id === d.id);
      if (!it) it = item(a, 'subagent', t, { id: d.id, kind: '', task: '', background: !!d.background, logDir: d.log_dir || '' });
      Object.assign(it, { status: d.status, answer: d.answer || '', error: d.error || '', cost: d.cost_usd });
      it.rev++;
      break;
    }
    case 'criteria_emerged': {
      // criteria_mode: the emerged criteria, shown in the feed of the agent that proposed
      // them (or that the critic was billed to); the session keeps the whole list.
      m.criteria = d.criteria || [];
      const who = d.source === 'subagent' ? `critic on version ${d.version}` : 'proposed';
      const added = (d.added || []).map((c) => `${c.id} [${c.category}]: ${c.text}`);
      if (a && d.warning) item(a, 'note', t, { level: 'warn', text: `criteria (${who}): ${d.warning}` });
      if (a && added.length) item(a, 'note', t, { level: 'info', text: `new criteria (${who}): ${added.join(' · ')}` });
      if (a && (d.evicted || []).length) item(a, 'note', t, { level: 'info', text: `criteria dropped: ${d.evicted.join(', ')}` });
      break;
    }
    case 'answer_verified':
      // orchestrator.verifiers: one verifier's check of a candidate answer, in the checker's
      // feed and in the decision record (decision.js).
      m.verdicts.push({ verifier: d.verifier, aspect: d.aspect, agent: d.agent, subagent_id: d.subagent_id || '',
        candidate: d.candidate, answer_label: d.answer_label, verdict: d.verdict, reason: d.reason || '' });
      if (a) item(a, 'note', t, { level: d.verdict === 'pass' ? 'info' : 'warn',
        text: `verifier ${d.verifier} (${d.aspect}) on ${d.answer_label}: ${d.verdict}${d.reason ? ': ' + d.reason : ''}` });
      break;
    case 'round_evaluated':
      if (a) item(a, 'note', t, d.warning ? { level: 'warn', text: `round evaluator: ${d.warning}` }
        : { level: 'info', text: `round evaluator on version ${d.version}: ${d.report}` });
      break;
    case 'human_input':
      if (a) item(a, 'note', t, { level: 'human', text: `read your message: ${d.text}` });
      if (!m.messages.some((x) => x.id === d.id)) m.messages.push({ id: d.id, text: d.text, t });
      break;
    case 'permission_asked': {
      const p = { id: d.id ?? d.ID, agent: d.agent ?? d.Agent, action: d.action ?? d.Action, target: d.target ?? d.Target, rule: d.rule ?? d.Rule, t, decision: '', by: '', rev: 0 };
      m.permissions.push(p);
      m.permById[p.id] = p;
      const pa = m.byId[p.agent];
      if (pa) { pa.status = 'asking'; pa.detail = `asks to ${p.action} ${p.target}`; item(pa, 'permission', t, { perm: p }); }
      break;
    }
    case 'broadcast_asked': {
      // An agent's ask_others question (coordination.broadcast): to the other agents, or to
      // the person (human), who answers it from the Steer card.
      if (m.qById[d.id]) break;
      const q = { id: d.id, agent: d.agent, text: d.question || '', human: !!d.human, targets: d.targets || [], answers: [], status: '', note: '', t, rev: 0 };
      m.questions.push(q);
      m.qById[q.id] = q;
      if (a) item(a, 'question', t, { q });
      break;
    }
    case 'broadcast_answered': {
      const q = m.qById[d.id];
      if (q) { q.answers.push({ responder: d.responder, content: d.content || '', error: !!d.error }); q.rev++; }
      break;
    }
    case 'broadcast_done': {
      const q = m.qById[d.id];
      if (q) { q.status = d.status || 'complete'; q.note = d.note || ''; q.rev++; }
      break;
    }
    case 'permission_decided': {
      const p = m.permById[d.id ?? d.ID];
      if (p) { p.decision = d.decision ?? d.Decision; p.by = d.by ?? d.By ?? ''; p.rev++; }
      const pa = m.byId[d.agent ?? d.Agent];
      if (pa && pa.status === 'asking') { pa.status = 'working'; pa.detail = ''; }
      break;
    }
    case 'usage': {
      if (!a) break;
      const u = d.usage || {};
      const add = (x) => {
        x.input += u.input_tokens || 0; x.cached += u.cached_input_tokens || 0; x.output += u.output_tokens || 0;
        x.reasoning += u.reasoning_tokens || 0; x.cost += d.cost_usd || 0; x.calls++;
      };
      add(a.usage);
      if (u.estimated) a.usage.estimated = true;
      if (round(a)) add(round(a));
      break;
    }
    case 'coordination_ended':
      m.ended = true;
      m.endReason = d.reason;
      m.winner = d.winner || '';
      m.winnerLabel = d.winner_label || '';
      m.answerLabel = d.answer_label || '';
      m.tie = !!d.tie;
      m.tally = d.tally || [];
      for (const x of m.agents) {
        endStreams(m, x);
        cutOff(x);
        if (round(x) && round(x).end == null) round(x).end = t;
        if (['working', 'waiting', 'restarting', 'retrying', 'asking'].includes(x.status)) x.status = d.reason === 'interrupted' ? 'interrupted' : 'done';
      }
      break;
    case 'final_started':
      m.presentation = '';
      m.presenter = d.agent;
      m.winner = m.winner || d.winner || d.agent;
      if (a) { a.status = 'presenting'; a.detail = d.note || ''; a.presenting = item(a, 'presentation', t, { text: '', mode: d.mode, done: false }); }
      break;
    case 'final_answer':
      m.final = { content: d.content, fallback: !!d.fallback, truncated: !!d.truncated, truncatedBy: d.truncated_by, agent: d.agent, label: d.label, t };
      m.winner = m.winner || d.agent;
      if (a) {
        endStreams(m, a);
        a.status = 'winner';
        a.detail = '';
        if (!a.presenting) a.presenting = item(a, 'presentation', t, { text: '', mode: d.mode });
        Object.assign(a.presenting, { text: d.content, done: true, fallback: !!d.fallback });
        a.presenting.rev++;
      }
      break;
    case 'post_evaluation_started':
      m.attempt = d.attempt; m.maxAttempts = d.max_attempts;
      m.evaluation = { agent: d.agent, attempt: d.attempt, debug: !!d.debug, text: '', decision: '', auto: false, why: '' };
      if (a) {
        a.status = 'evaluating'; a.detail = `checks the final answer of attempt ${d.attempt}/${d.max_attempts}`;
        m.evaluation.item = item(a, 'evaluation', t, { text: '', attempt: d.attempt, debug: !!d.debug, decision: '', why: '' });
      }
      break;
    case 'final_submitted':
      if (m.evaluation) Object.assign(m.evaluation, { decision: 'submit', auto: !!d.auto, why: d.why || '' });
      if (m.evaluation?.item) Object.assign(m.evaluation.item, { decision: 'submit', why: d.why || '', rev: m.evaluation.item.rev + 1 });
      if (a) { a.status = 'winner'; a.detail = ''; }
      break;
    case 'orchestration_restarted':
      // A new attempt: its coordination starts from nothing; usage and cost add up.
      if (m.evaluation) m.evaluation.decision = 'restart';
      if (m.evaluation?.item) Object.assign(m.evaluation.item, { decision: 'restart', rev: m.evaluation.item.rev + 1 });
      m.restarts.push({ attempt: d.attempt, agent: d.agent, reason: d.reason, instructions: d.instructions });
      m.attempt = d.attempt; m.maxAttempts = d.max_attempts;
      Object.assign(m, { answers: [], answerByLabel: {}, votes: [], final: null, presentation: '', presenter: '', winner: '', winnerLabel: '',
        answerLabel: '', tally: null, endReason: '', tie: false, version: 0, ended: false, verdicts: [] });
      for (const x of m.agents) {
        endStreams(m, x);
        endCalls(x);
        Object.assign(x, { status: 'waiting', detail: '', vote: null, current: null, answers: 0, presenting: null, context: [], dead: false });
        item(x, 'restart', t, { attempt: d.attempt, maxAttempts: d.max_attempts, reason: d.reason, instructions: d.instructions, by: d.agent });
      }
      break;
    case 'session_ended':
      m.status = d.status;
      m.error = d.error || '';
      m.exitCode = d.exit_code;
      m.duration = d.duration_seconds;
      for (const x of m.agents) {
        endStreams(m, x);
        cutOff(x);
        if (round(x) && round(x).end == null) round(x).end = t;
        if (['working', 'presenting', 'answered', 'voted', 'waiting', 'restarting', 'retrying', 'asking'].includes(x.status)) {
          x.status = d.status === 'interrupted' && x.status !== 'voted' ? 'interrupted' : 'done';
        }
      }
      break;
    default:
  }
  for (const x of m.agents) if (x.status !== 'working' && round(x) && round(x).end == null && !['working', 'presenting'].includes(x.status)) round(x).end = t;
}

// endStreams closes an agent's open text and reasoning items; text that only repeats the answer
// it submitted (models that write the answer out and then call new_answer) is hidden.
function endStreams(m, a, answer) {
  if (a.text && answer != null && a.text.text.trim() === String(answer).trim()) { a.text.hidden = true; a.text.rev++; }
  a.text = null;
  a.reasoning = null;
}

// written ends the call the agent was writing: it is complete, or refused.
function written(a) {
  if (a.writing && a.detail.startsWith('writing ')) a.detail = '';
  a.writing = '';
}

// endCalls forgets the agent's calls in progress: a new model call starts after the last
// response's tools have all run, and a failed turn or a dead agent ends them. Those are not
// cut off by the end of the session (readmodel's toolCalls folds the same).
function endCalls(a) {
  a.writing = '';
  a.pending = [];
}

// cutOff marks what the end of coordination or of the session cut off: the call the agent
// was writing (its detail says so instead of "writing ...") and the tools that had no result.
function cutOff(a) {
  if (a.writing) {
    if (a.cutOff.length < maxPending) a.cutOff.push({ tool: a.writing, writing: true });
    a.detail = `cut off while writing ${a.writing}`;
  }
  for (const it of a.pending) {
    if (a.cutOff.length < maxPending) a.cutOff.push({ tool: it.name, writing: false });
    it.cut = true;
    it.rev++;
  }
  a.writing = '';
  a.pending = [];
}

// latestOf returns agent label's newest answer so far, or null.
export function latestOf(m, label) {
  const a = m.byLabel[label];
  if (!a) return null;
  for (let i = m.answers.length - 1; i >= 0; i--) if (m.answers[i].agent === a.id) return m.answers[i];
  return null;
}

// winningAnswer is the answer the winner presented from.
export function winningAnswer(m) {
  return m.answerByLabel[m.answerLabel] || (m.winner ? latestOf(m, m.byId[m.winner]?.label) : null);
}
