// SessionView folds a session's events (the events.jsonl envelopes) into its state and draws
// it: a column per agent with its streaming text, the answers and votes, the tally, the winner
// and the final answer. The same view serves the live stream and the replay.
import { el, fmt, badge } from './dom.js';
import { renderMarkdown } from './md.js';

const keep = 64 * 1024; // streamed text kept per agent, as the server's State does
const tail = (s) => (s.length > keep ? s.slice(s.length - keep) : s);
const workflowTools = new Set(['new_answer', 'vote']);

export class SessionView {
  constructor(id, mode, speed, actions) {
    this.id = id;
    this.mode = mode;
    this.actions = actions;
    this.s = {
      question: '', agents: [], byId: {}, version: 0, feed: [], winner: '', winnerLabel: '', tally: null,
      presentation: '', final: null, fallback: false, status: 'running', endReason: '', error: '',
      usage: { input: 0, output: 0 }, cost: 0, start: null, last: null, duration: null,
    };
    this.fed = 0;
    this.shownFinal = null;
    this.pending = false;
    this.build(speed);
  }

  build(speed) {
    this.statusEl = badge('running');
    this.statusEl.id = 'session-status';
    this.questionEl = el('h1', { class: 'question', id: 'session-question', text: '…' });
    this.metaEl = el('div', { class: 'meta' });
    const controls = el('div', { class: 'controls' });
    if (this.mode === 'live') {
      this.stopBtn = el('button', { type: 'button', class: 'secondary', text: 'Stop', onclick: () => this.stop() });
      controls.append(this.stopBtn, el('a', { href: `#/replay/${this.id}`, text: 'Replay' }));
    } else {
      controls.append(el('span', { class: 'muted', text: 'Replay' }),
        ...[['instant', 0], ['1×', 1], ['4×', 4], ['16×', 16]].map(([t, v]) =>
          el('a', { href: `#/replay/${this.id}?speed=${v}`, class: v === speed ? 'active' : '', text: t })));
    }
    this.agentsEl = el('div', { class: 'agents', id: 'agents' });
    this.feedEl = el('ol', { class: 'feed', id: 'feed' });
    this.tallyEl = el('div', { class: 'tally', id: 'tally' });
    this.winnerEl = el('p', { class: 'winner', id: 'winner' });
    this.finalEl = el('div', { class: 'markdown', id: 'final-answer' });
    this.finalBox = el('section', { class: 'card final-box', hidden: true },
      el('h2', { text: 'Final answer' }), this.winnerEl, this.finalEl);
    this.errorEl = el('p', { class: 'error', hidden: true });
    this.root = el('div', { class: 'session', 'data-mode': this.mode },
      el('div', { class: 'session-head' },
        el('div', {},
          el('div', { class: 'crumbs' }, el('a', { href: '#/', text: 'Sessions' }), ` / ${this.id}`),
          this.questionEl, this.metaEl),
        el('div', { class: 'head-right' }, this.statusEl, controls)),
      this.errorEl, this.finalBox, this.agentsEl,
      el('div', { class: 'columns' },
        el('section', { class: 'card' }, el('h2', { text: 'Answers and votes' }), this.feedEl),
        el('section', { class: 'card' }, el('h2', { text: 'Tally' }), this.tallyEl)));
  }

  label(a) { return a ? `${a.label} (${a.id})` : 'an agent'; }

  note(t, kind, text, content, reason) { this.s.feed.push({ t, kind, text, content, reason }); }

  // apply folds one event {seq, time, type, data}.
  apply(e) {
    const s = this.s;
    const d = e.data || {};
    const t = Date.parse(e.time);
    if (s.start == null) s.start = t;
    s.last = t;
    const a = d.agent ? s.byId[d.agent] : null;
    switch (e.type) {
      case 'session_started':
        s.question = d.question || '';
        s.start = t;
        s.agents = (d.agents || []).map((x) => ({ ...x, status: 'waiting', stream: '', reasoning: '', answers: 0, votes: 0, vote: null }));
        s.byId = Object.fromEntries(s.agents.map((x) => [x.id, x]));
        this.buildAgents();
        break;
      case 'turn_started':
        if (a) { a.stream = ''; a.reasoning = ''; a.status = 'working'; }
        break;
      case 'model_called':
        if (a && a.status !== 'presenting') a.status = 'working';
        break;
      case 'text_delta':
        if (d.presentation) s.presentation += d.text;
        else if (a) { a.stream = tail(a.stream + d.text); a.status = 'working'; }
        break;
      case 'reasoning_delta':
        if (a && !d.presentation) a.reasoning = tail(a.reasoning + d.text);
        break;
      case 'tool_called':
        if (a && !workflowTools.has(d.call?.name)) this.note(t, 'tool', `${this.label(a)} called ${d.call?.name}`);
        break;
      case 'planning_decided': {
        const held = d.hold_back ? `${(d.held || []).join(', ') || 'every MCP tool'} held back until the final presentation` : 'nothing held back';
        this.note(t, 'tool', `planning mode: ${held} (${d.reason})`);
        break;
      }
      case 'tool_rejected':
        this.note(t, 'warn', `${this.label(a)}: ${d.tool} rejected: ${d.error}`);
        break;
      case 'enforcement_sent':
        this.note(t, 'warn', `${this.label(a)} made no workflow call and was reminded to answer or vote`);
        break;
      case 'answer_submitted': {
        if (a) { a.answers++; a.status = 'answered'; a.vote = null; }
        s.version = d.version;
        const lost = (d.invalidated || []).map((v) => s.byId[v]).filter(Boolean);
        for (const v of lost) { v.vote = null; v.status = 'restarting'; }
        this.note(t, 'answer', `${this.label(a)} answered ${d.label}` +
          (lost.length ? `; the votes of ${lost.map((v) => v.label).join(', ')} no longer count` : ''), d.content);
        break;
      }
      case 'vote_cast':
        if (a) { a.votes++; a.status = 'voted'; a.vote = { answer: d.answer_label, version: d.version }; }
        this.note(t, 'vote', `${this.label(a)} voted for ${d.answer_label}`, null, d.reason);
        break;
      case 'vote_ignored':
        if (a) a.status = 'restarting';
        this.note(t, 'warn', `${this.label(a)} voted for ${d.target_label} after new answers arrived; it continues`);
        break;
      case 'agent_error':
        if (a) a.status = d.timeout ? 'timeout' : 'error';
        this.note(t, 'error', `${this.label(a)}: ${d.message}`);
        break;
      case 'agent_dead':
        if (a) a.status = 'dead';
        this.note(t, 'error', `${this.label(a)} is out: ${d.reason}`);
        break;
      case 'usage':
        s.usage.input += d.usage?.input_tokens || 0;
        s.usage.output += d.usage?.output_tokens || 0;
        s.cost += d.cost_usd || 0;
        break;
      case 'coordination_ended':
        s.endReason = d.reason;
        s.winner = d.winner || '';
        s.winnerLabel = d.winner_label || '';
        s.tally = d.tally || [];
        for (const x of s.agents) if (x.status === 'working' && x !== s.byId[s.winner]) x.status = 'completed';
        this.note(t, 'end', d.winner
          ? `Coordination ended (${d.reason}): ${d.winner_label} (${d.winner}) wins with ${d.answer_label}${d.tie ? ', a tie broken by order' : ''}`
          : `Coordination ended (${d.reason}) with no answer`);
        break;
      case 'final_started':
        s.presentation = '';
        s.winner = s.winner || d.agent;
        if (a) a.status = 'presenting';
        break;
      case 'final_answer':
        s.final = d.content;
        s.fallback = !!d.fallback;
        s.winner = s.winner || d.agent;
        if (a) a.status = 'completed';
        this.note(t, 'final', `${this.label(a)} presented the final answer${d.fallback ? ' (its stored answer)' : ''}`);
        break;
      case 'session_ended':
        s.status = d.status;
        s.error = d.error || '';
        s.duration = d.duration_seconds;
        for (const x of s.agents) if (['working', 'presenting', 'answered', 'voted', 'waiting'].includes(x.status)) x.status = 'completed';
        break;
      default:
    }
    this.schedule();
  }

  buildAgents() {
    this.agentsEl.replaceChildren(...this.s.agents.map((a) => {
      a.badgeEl = badge(a.status);
      a.reasonEl = el('span', { class: 'reasoning' });
      a.textEl = el('span', { class: 'text' });
      a.preEl = el('pre', { class: 'stream' }, a.reasonEl, a.textEl);
      a.countEl = el('div', { class: 'counts' });
      return el('article', { class: 'agent card', 'data-agent': a.id },
        el('header', {}, el('div', {}, el('strong', { text: a.label }), ' ', el('span', { text: a.id })), a.badgeEl),
        el('div', { class: 'model muted', text: [a.backend, a.model].filter(Boolean).join(' · ') }),
        a.preEl, a.countEl);
    }));
  }

  schedule() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => this.render());
  }

  render() {
    this.pending = false;
    const s = this.s;
    this.questionEl.textContent = s.question || '…';
    this.statusEl.className = `badge status-${s.status}`;
    this.statusEl.textContent = s.status;
    const dur = s.duration ?? (s.last != null ? (s.last - s.start) / 1000 : null);
    this.metaEl.textContent = [`${s.agents.length} agents`, fmt.duration(dur),
      `${fmt.tokens(s.usage.input + s.usage.output)} tokens`, fmt.cost(s.cost)].filter(Boolean).join(' · ');
    if (this.stopBtn) this.stopBtn.hidden = s.status !== 'running';
    if (s.error && s.status !== 'completed') { this.errorEl.textContent = s.error; this.errorEl.hidden = false; }
    for (const a of s.agents) {
      if (!a.badgeEl) continue;
      a.badgeEl.className = `badge status-${a.status}`;
      a.badgeEl.textContent = a.status;
      if (a.textEl.textContent !== a.stream || a.reasonEl.textContent !== a.reasoning) {
        a.reasonEl.textContent = a.reasoning;
        a.textEl.textContent = a.stream;
        a.preEl.scrollTop = a.preEl.scrollHeight;
      }
      a.countEl.textContent = `${a.answers} answer${a.answers === 1 ? '' : 's'} · ${a.votes} vote${a.votes === 1 ? '' : 's'}` +
        (a.vote && a.vote.version === s.version ? ` · votes for ${a.vote.answer}` : '');
    }
    if (this.fed < s.feed.length) {
      const f = this.feedEl;
      const atEnd = f.scrollHeight - f.scrollTop - f.clientHeight < 40;
      for (; this.fed < s.feed.length; this.fed++) f.append(this.feedItem(s.feed[this.fed]));
      if (atEnd) f.scrollTop = f.scrollHeight;
    }
    this.renderTally();
    this.renderFinal();
  }

  feedItem(f) {
    const when = el('span', { class: 'when', text: `+${((f.t - this.s.start) / 1000).toFixed(1)}s` });
    const li = el('li', { class: `feed-${f.kind}` });
    if (f.content != null) {
      const body = el('div', { class: 'markdown' });
      body.innerHTML = renderMarkdown(f.content);
      li.append(el('details', {}, el('summary', {}, when, ' ', f.text), body));
    } else {
      li.append(when, ' ', el('span', { text: f.text }));
    }
    if (f.reason) li.append(el('div', { class: 'reason', text: f.reason }));
    return li;
  }

  renderTally() {
    const s = this.s;
    let rows;
    if (s.tally) { // the final count, per agent
      rows = s.tally.map((c) => ({ key: c.label, who: `${c.label} (${c.agent})`, votes: c.votes,
        voters: (c.voters || []).map((v) => s.byId[v]?.label || v) }));
    } else { // current votes, per answer
      const by = new Map();
      for (const a of s.agents) {
        if (!a.vote || a.vote.version !== s.version) continue;
        const r = by.get(a.vote.answer) || { key: a.vote.answer, who: a.vote.answer, votes: 0, voters: [] };
        r.votes++;
        r.voters.push(a.label);
        by.set(a.vote.answer, r);
      }
      rows = [...by.values()];
    }
    const key = JSON.stringify(rows) + s.winnerLabel;
    if (key === this.tallyKey) return;
    this.tallyKey = key;
    if (!rows.length) {
      this.tallyEl.replaceChildren(el('p', { class: 'muted', text: 'No current votes.' }));
      return;
    }
    const won = (k) => s.winnerLabel && (k === s.winnerLabel || k.startsWith(`${s.winnerLabel}.`));
    this.tallyEl.replaceChildren(el('table', {},
      el('thead', {}, el('tr', {}, el('th', { text: s.tally ? 'Agent' : 'Answer' }), el('th', { text: 'Votes' }), el('th', { text: 'Voters' }))),
      el('tbody', {}, rows.map((r) => el('tr', { class: won(r.key) ? 'won' : '' },
        el('td', { text: r.who }), el('td', { class: 'num', text: String(r.votes) }), el('td', { text: r.voters.join(', ') }))))));
  }

  renderFinal() {
    const s = this.s;
    const text = s.final ?? (s.presentation || null);
    if (text == null) return;
    this.finalBox.hidden = false;
    const w = s.byId[s.winner];
    this.winnerEl.textContent = w ? `Winner: ${w.label} (${w.id})${s.fallback ? ' · its stored answer' : ''}${s.final == null ? ' · presenting…' : ''}` : '';
    if (text !== this.shownFinal) {
      this.shownFinal = text;
      this.finalEl.innerHTML = renderMarkdown(text);
    }
    this.finalEl.classList.toggle('streaming', s.final == null);
  }

  end(info) {
    if (info?.status && this.s.status === 'running') this.s.status = info.status;
    this.schedule();
  }

  fail(msg) {
    this.errorEl.textContent = msg;
    this.errorEl.hidden = false;
  }

  async stop() {
    try { await this.actions.cancel(); } catch (e) { this.fail(`Cannot stop the session: ${e.message}`); }
  }
}
