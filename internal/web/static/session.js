// SessionView draws one session from its events: the header with status and controls, the
// final answer with what the winner produced, the steering bar, and the tabs: agents (a
// column each), timeline, answers, votes, files and cost. The same view serves the live
// stream and the replay. Keys: 1-9 an agent's column, g agents, t timeline, a answers,
// v votes, w files, c cost, ? help, Esc closes a dialog.
import { el, fmt, badge, modal, postJSON, api } from './dom.js';
import { renderMarkdown } from './md.js';
import { newModel, apply } from './state.js';
import { AgentsView } from './agents.js';
import { drawTimeline } from './timeline.js';
import { answersView, answerDetail, votesView, voteDetail } from './browse.js';
import { FilesView, artifactsView, memoryFilesView } from './files.js';
import { costView } from './cost.js';
import { SteerBar } from './steer.js';
import { decision } from './decision.js';
import { whyView } from './why.js';

const tabs = [['agents', 'Agents', 'g'], ['timeline', 'Timeline', 't'], ['answers', 'Answers', 'a'], ['votes', 'Votes', 'v'], ['files', 'Files', 'w'], ['cost', 'Cost', 'c']];

export class SessionView {
  constructor(id, mode, speed, actions) {
    this.id = id;
    this.mode = mode;
    this.actions = actions;
    this.m = newModel();
    this.tab = 'agents';
    this.drawn = {};
    this.pending = false;
    this.ended = false;
    this.agents = new AgentsView({
      live: () => this.mode === 'live' && this.m.status === 'running',
      stopAgent: (a) => this.stopAgent(a),
      open: (kind, key) => this.open(kind, key),
      decide: (p, d) => this.steer.decide(p, d),
    });
    this.files = new FilesView(id);
    this.steer = new SteerBar(id, this);
    this.build(speed);
    this.onKey = (e) => this.key(e);
    document.addEventListener('keydown', this.onKey);
  }

  destroy() { document.removeEventListener('keydown', this.onKey); }

  build(speed) {
    this.statusEl = badge(this.mode === 'live' ? 'running' : 'replay');
    this.statusEl.id = 'session-status';
    this.questionEl = el('h1', { class: 'question', id: 'session-question', text: '…' });
    this.metaEl = el('div', { class: 'meta', id: 'session-meta' });
    this.turnsEl = el('nav', { class: 'meta turns', id: 'session-turns', 'aria-label': 'Turns of this session', hidden: true });
    const controls = el('div', { class: 'controls' });
    if (this.mode === 'live') {
      this.answerNowBtn = el('button', { type: 'button', id: 'answer-now', text: 'Answer now', title: 'End coordination: the best answer so far is presented', onclick: () => this.answerNow() });
      this.stopBtn = el('button', { type: 'button', class: 'secondary', id: 'stop-session', text: 'Stop', onclick: () => this.stop() });
      controls.append(this.answerNowBtn, this.stopBtn, el('a', { href: `#/replay/${this.id}`, text: 'Replay' }));
    } else {
      controls.append(el('span', { class: 'tag', id: 'replay-tag', text: 'replay' }),
        ...[['instant', 0], ['1×', 1], ['4×', 4], ['16×', 16]].map(([t, v]) =>
          el('a', { href: `#/replay/${this.id}?speed=${v}`, class: v === speed ? 'active' : '', text: t })));
    }
    this.finalEl = el('div', { class: 'markdown', id: 'final-answer' });
    this.winnerEl = el('p', { class: 'winner', id: 'winner' });
    this.artifactsEl = el('div');
    this.whyEl = el('div', { class: 'why-box' });
    this.finalBox = el('section', { class: 'card final-box', hidden: true, id: 'final-box' },
      el('h2', { text: 'Final answer' }), this.winnerEl, this.finalEl, this.whyEl, this.artifactsEl);
    this.errorEl = el('p', { class: 'error', hidden: true, id: 'session-error' });
    this.tabBar = el('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Session views' });
    this.panes = {};
    for (const [key, label, k] of tabs) {
      const b = el('button', { type: 'button', role: 'tab', id: `tab-${key}`, 'data-tab': key, 'aria-controls': `pane-${key}`,
        'aria-keyshortcuts': k, text: label, onclick: () => this.show(key) });
      b.append(el('kbd', { text: k.toUpperCase() }));
      b.addEventListener('keydown', (e) => this.tabKey(e, key));
      this.tabBar.append(b);
      this.panes[key] = el('section', { class: 'pane-box', role: 'tabpanel', id: `pane-${key}`, 'aria-labelledby': `tab-${key}`, hidden: true });
    }
    this.panes.agents.append(this.agents.root);
    this.panes.files.append(this.files.root);
    this.root = el('div', { class: 'session', 'data-mode': this.mode },
      el('div', { class: 'session-head' },
        el('div', { class: 'head-left' },
          el('div', { class: 'crumbs' }, el('a', { href: '#/', text: 'Sessions' }), ` / ${this.id}`),
          this.questionEl, this.metaEl, this.turnsEl),
        el('div', { class: 'head-right' }, this.statusEl, controls)),
      this.errorEl, this.finalBox, this.steer.root, this.tabBar, ...Object.values(this.panes), this.steer.after);
    this.show('agents', false);
    this.loadTurns();
  }

  // loadTurns links the other turns of this session (a follow-up is the next turn of the
  // same log folder): the server lists the turn folders.
  async loadTurns() {
    try {
      const { turns, decision: told } = await (await api(`/api/sessions/${this.id}`)).json();
      // The server's record of an ended turn carries the verifiers' verdicts, which the
      // events folded here may not (yet) hold.
      if (told?.verifiers?.length) { this.toldVerifiers = told.verifiers; this.schedule(); }
      const [log, turn] = this.id.split('/');
      const here = Number(turn.slice('turn_'.length));
      if (!turns || turns.length < 2) { this.turnsEl.hidden = true; return; }
      const page = this.mode === 'live' ? 'session' : 'replay';
      this.turnsEl.replaceChildren('Turns of this session: ', ...turns.flatMap((n, i) => [i ? ' · ' : '',
        n === here ? el('strong', { 'aria-current': 'page', text: `turn ${n}` })
          : el('a', { href: `#/${page}/${log}/turn_${n}`, 'data-turn': n, text: `turn ${n}` })]));
      this.turnsEl.hidden = false;
    } catch { /* the links are a convenience: the page works without them */ }
  }

  show(key, focus = true) {
    this.tab = key;
    for (const b of this.tabBar.children) {
      const on = b.dataset.tab === key;
      b.setAttribute('aria-selected', String(on));
      b.tabIndex = on ? 0 : -1;
      b.classList.toggle('active', on);
      if (on && focus) b.focus();
    }
    for (const [k, p] of Object.entries(this.panes)) p.hidden = k !== key;
    if (key === 'files') this.files.load(this.ended);
    this.drawn[key] = -1;
    this.schedule();
  }

  tabKey(e, key) {
    const i = tabs.findIndex((t) => t[0] === key);
    const to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[e.key];
    if (to == null) return;
    e.preventDefault();
    this.show(tabs[(to + tabs.length) % tabs.length][0]);
  }

  key(e) {
    if (e.ctrlKey || e.metaKey || e.altKey || document.querySelector('dialog[open]')) return;
    if (/^(INPUT|TEXTAREA|SELECT)$/.test(e.target.tagName) || e.target.isContentEditable) return;
    const t = tabs.find((x) => x[2] === e.key.toLowerCase());
    if (t) { e.preventDefault(); this.show(t[0]); return; }
    if (/^[1-9]$/.test(e.key) && +e.key <= this.m.agents.length) {
      e.preventDefault();
      this.show('agents', false);
      this.agents.focus(+e.key - 1);
      return;
    }
    if (e.key === '?') {
      e.preventDefault();
      modal('Keyboard', el('table', { class: 'keys' }, el('tbody', {},
        [['1–9', "an agent's column"], ...tabs.map((x) => [x[2].toUpperCase(), x[1]]), ['← →', 'the next or previous tab'], ['Enter', 'open the focused timeline node'],
          ['Ctrl+Enter', 'send a message or form'], ['Esc', 'close this dialog'], ['?', 'this help']]
          .map(([k, v]) => el('tr', {}, el('td', {}, el('kbd', { text: k })), el('td', { text: v }))))));
    }
  }

  apply(e) {
    const first = e.type === 'session_started';
    apply(this.m, e);
    if (first) this.agents.build(this.m);
    this.schedule();
  }

  schedule() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => this.render());
  }

  render() {
    this.pending = false;
    const m = this.m;
    this.questionEl.textContent = m.question || '…';
    const status = this.mode === 'replay' && m.status === 'running' && !this.ended ? 'replaying' : m.status;
    this.statusEl.className = `badge status-${status}`;
    this.statusEl.textContent = status;
    const dur = m.duration ?? (m.last != null ? (m.last - m.start) / 1000 : null);
    const cost = m.agents.reduce((s, a) => s + a.usage.cost, 0);
    const tokens = m.agents.reduce((s, a) => s + a.usage.input + a.usage.output, 0);
    const budget = m.settings.max_cost_usd;
    this.metaEl.textContent = [`${m.agents.length} agents`, m.turn > 1 ? `turn ${m.turn}` : '',
      m.maxAttempts ? `attempt ${m.attempt}/${m.maxAttempts}` : '', fmt.duration(dur), `${fmt.tokens(tokens)} tokens`,
      costText(m, cost) + (budget ? ` of ${fmt.dollars(budget)}` : '')].filter(Boolean).join(' · ');
    const running = this.mode === 'live' && m.status === 'running';
    if (this.stopBtn) this.stopBtn.hidden = !running;
    if (this.answerNowBtn) this.answerNowBtn.hidden = !running || m.endReason !== '' || !m.answers.length;
    if (m.error && m.status !== 'completed') { this.errorEl.textContent = m.error; this.errorEl.hidden = false; }
    this.agents.render(m);
    this.steer.render(m, this.mode === 'live');
    this.renderFinal();
    const p = this.panes[this.tab];
    if (this.drawn[this.tab] === m.rev && this.tab !== 'timeline') return;
    switch (this.tab) {
      case 'timeline': {
        const w = Math.max(p.clientWidth - 4, 320);
        if (this.drawn.timeline === m.rev && this.drawnWidth === w) return;
        this.drawnWidth = w;
        p.replaceChildren(el('div', { class: 'scroll-x timeline-box' }, drawTimeline(m, w, (k, key) => this.open(k, key))),
          el('p', { class: 'legend muted small' }, '● answer  ◆ vote (dashed: stale)  ◎ final answer · arrows: answer → answers it had seen, vote → the answer it chose'));
        break;
      }
      case 'answers':
        if (this.drawnAnswers === `${m.answers.length}/${this.selected}/${m.answerLabel}`) break;
        this.drawnAnswers = `${m.answers.length}/${this.selected}/${m.answerLabel}`;
        p.replaceChildren(answersView(m, this.selected, (l) => { this.selected = l; this.schedule(); }));
        break;
      case 'votes':
        p.replaceChildren(votesView(m));
        break;
      case 'cost':
        p.replaceChildren(costView(m, this.latency));
        this.fetchLatency();
        break;
      default:
    }
    this.drawn[this.tab] = m.rev;
  }

  // fetchLatency asks the server for the critical path of the events drawn so far, at most one
  // request at a time and one a second; the answer redraws the cost pane.
  fetchLatency() {
    const rev = this.m.rev;
    if (this.latencyRev === rev || this.latencyBusy) return;
    this.latencyBusy = true;
    const wait = Math.max(0, 1000 - (Date.now() - (this.latencyAt || 0)));
    setTimeout(() => api(`/api/sessions/${this.id}`).then((r) => r.json()).then((d) => {
      this.latency = d.latency || null;
      this.latencyRev = rev;
      this.drawn.cost = null;
    }).catch(() => { this.latencyRev = rev; }).finally(() => {
      this.latencyBusy = false;
      this.latencyAt = Date.now();
      this.schedule();
    }), wait);
  }

  open(kind, key) {
    const m = this.m;
    if (kind === 'answer' && m.answerByLabel[key]) modal(`Answer ${key}`, answerDetail(m, m.answerByLabel[key]));
    else if (kind === 'vote' && m.votes[key]) modal(`Vote by ${m.byId[m.votes[key].agent]?.label}`, voteDetail(m, m.votes[key]));
    else if (kind === 'subagent' && key) {
      // Its log folder is inside this turn's: the file links open its events and status.
      const dir = `subagents/${key.id}/turn_1`;
      const body = el('div', {},
        el('div', { class: 'kv' }, el('span', { class: 'muted', text: 'status' }), el('span', { text: key.status })),
        el('div', { class: 'kv' }, el('span', { class: 'muted', text: 'task' }), el('pre', { class: 'code', text: key.task })),
        key.error ? el('div', { class: 'kv' }, el('span', { class: 'muted', text: 'error' }), el('span', { text: key.error })) : null,
        key.logDir ? el('div', { class: 'kv' }, el('span', { class: 'muted', text: 'log folder' }), el('code', { text: key.logDir }), ' ',
          el('a', { href: this.files.url(`${dir}/events.jsonl`), target: '_blank', text: 'events' }), ' ',
          el('a', { href: this.files.url(`${dir}/status.json`), target: '_blank', text: 'status' })) : null);
      if (key.answer) {
        const ans = el('div', { class: 'markdown' });
        ans.innerHTML = renderMarkdown(key.answer);
        body.append(ans);
      }
      modal(`Subagent ${key.id}`, body);
    } else if (kind === 'final' && m.final) {
      const body = el('div', { class: 'markdown' });
      body.innerHTML = renderMarkdown(m.final.content);
      modal('Final answer', body);
    }
  }

  renderFinal() {
    const m = this.m;
    const text = m.final?.content ?? (m.presentation || null);
    if (text == null) return;
    this.finalBox.hidden = false;
    const w = m.byId[m.winner];
    const notes = [m.final?.fallback ? 'its stored answer' : '', m.final?.truncated ? 'cut off' : '', m.final == null ? 'presenting…' : '',
      m.endReason === 'answer_now' ? 'asked for with Answer now' : ''].filter(Boolean);
    this.winnerEl.textContent = w ? `Winner: ${w.label} (${w.id})${m.answerLabel ? ` with ${m.answerLabel}` : ''}${notes.length ? ` · ${notes.join(' · ')}` : ''}` : '';
    if (text !== this.shownFinal) {
      this.shownFinal = text;
      this.finalEl.innerHTML = renderMarkdown(text);
    }
    this.finalEl.classList.toggle('streaming', m.final == null);
    // The decision is redrawn only when it changes (a restart clears it, verdicts add to it).
    const d = decision(m);
    if (d && !d.verifiers.length && this.toldVerifiers) d.verifiers = this.toldVerifiers;
    const key = d ? JSON.stringify(d) : '';
    if (key !== this.shownWhy) {
      this.shownWhy = key;
      const v = whyView(d);
      this.whyEl.replaceChildren(...(v ? [v] : []));
    }
    if (this.ended && m.winner && !this.artifactsShown) {
      this.artifactsShown = true;
      this.files.load(true).then(() => {
        const a = artifactsView(this.files, m.winner);
        const mem = memoryFilesView(this.files, m.winner);
        this.artifactsEl.replaceChildren(...[a, mem].filter(Boolean));
      });
    }
  }

  end(info) {
    if (info?.status && this.m.status === 'running') this.m.status = info.status;
    if (!this.ended) this.loadTurns();
    this.ended = true;
    this.schedule();
  }

  fail(msg) {
    this.errorEl.textContent = msg;
    this.errorEl.hidden = false;
  }

  async stop() {
    if (!confirm('Stop this session? The agents stop at once; the best answer so far is kept and the session ends as interrupted.')) return;
    try { await this.actions.cancel(); } catch (e) { this.fail(`Cannot stop the session: ${e.message}`); }
  }

  async answerNow() {
    try { await postJSON(`/api/sessions/${this.id}/answer-now`); } catch (e) { this.fail(`Answer now failed: ${e.message}`); }
  }

  async stopAgent(a) {
    if (!confirm(`Stop ${a.label} (${a.id})? It answers and votes no more; its answers stay.`)) return;
    try { await postJSON(`/api/sessions/${this.id}/agents/${encodeURIComponent(a.id)}/stop`); } catch (e) { this.fail(`Cannot stop ${a.label}: ${e.message}`); }
  }
}

// costText is the session's cost for the header: "unknown" when every agent's model has no
// price, "≥$x, some prices unknown" when some have none.
function costText(m, cost) {
  const known = !m.agents.some((a) => a.unpriced && (a.usage.input || a.usage.output));
  const t = fmt.cost(cost, known, m.agents.some((a) => a.usage.estimated));
  return known || !cost ? t : `${t}, some prices unknown`;
}
