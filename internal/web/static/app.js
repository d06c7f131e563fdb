// The massgen dashboard: the session list, the new-run form, and one session view fed either
// live (server-sent events) or from a finished session's events (replay). Model text only ever
// reaches the page through textContent or the escaping Markdown renderer.
import { el, fmt, badge, api, ctrlEnter } from './dom.js';
import { SessionView } from './session.js';
import { showSetup } from './wizard.js';
import { showMemory } from './memory.js';

const main = document.getElementById('main');
let cleanup = null; // stops the current page's timers and streams

const sessionPath = /^\/(session|replay)\/(log_[0-9_]+\/turn_[0-9]+)$/;

function route() {
  if (cleanup) { cleanup(); cleanup = null; }
  const [path, query] = (location.hash.slice(1) || '/').split('?');
  const params = new URLSearchParams(query || '');
  document.querySelectorAll('nav a').forEach((a) => a.classList.toggle('active',
    (a.dataset.nav === 'list' && path === '/') || (a.dataset.nav === 'new' && path === '/new') || (a.dataset.nav === 'setup' && path === '/setup') || (a.dataset.nav === 'memory' && path === '/memory')));
  const m = path.match(sessionPath);
  if (path === '/') return showList();
  if (path === '/new') return showNew(params);
  if (path === '/setup') { cleanup = showSetup(main, params); return undefined; }
  if (path === '/memory') return showMemory(main, params);
  if (m) return showSession(m[2], m[1] === 'session' ? 'live' : 'replay', params);
  main.replaceChildren(el('p', { class: 'empty', text: 'Nothing here. ' }, el('a', { href: '#/', text: 'Back to the sessions' })));
}

// The session list, refreshed every 3 s.
function showList() {
  const body = el('tbody');
  const error = el('p', { class: 'error', hidden: true });
  const table = el('table', { id: 'sessions', class: 'sessions' },
    el('thead', {}, el('tr', {}, columns.map((h) => el('th', { text: h })))), body);
  main.replaceChildren(el('section', {},
    el('div', { class: 'toolbar' }, el('h1', { text: 'Sessions' }), el('a', { class: 'button', href: '#/new', text: 'New run' })),
    error, el('div', { class: 'scroll-x' }, table)));
  let timer = null;
  let stopped = false;
  const load = async () => {
    try {
      const { sessions } = await (await api('/api/sessions')).json();
      error.hidden = true;
      body.replaceChildren(...sessions.map(row));
      if (!sessions.length) {
        body.append(el('tr', {}, el('td', { colspan: 9, class: 'empty' }, 'No sessions in the log directory yet. ',
          el('a', { href: '#/new', text: 'Start one.' }))));
      }
    } catch (e) {
      error.textContent = `Cannot load the sessions: ${e.message}`;
      error.hidden = false;
    }
    if (!stopped) timer = setTimeout(load, 3000);
  };
  cleanup = () => { stopped = true; clearTimeout(timer); };
  load();
}

const columns = ['Started', 'Question', 'Team', 'Status', 'Winner', 'Duration', 'Tokens', 'Cost', ''];

// row is one session; each cell names its column (data-label), which a phone shows in place
// of the header row.
function row(s) {
  const live = `#/session/${s.id}`;
  const replay = `#/replay/${s.id}`;
  const cells = [
    el('td', { class: 'nowrap when-cell', text: fmt.time(s.started_at) }),
    el('td', { class: 'question' }, el('a', { href: s.running ? live : replay, text: s.question || '(no question)', title: s.question })),
    el('td', { class: 'team-cell', text: s.team || '' }),
    el('td', {}, badge(s.running ? 'running' : s.status)),
    el('td', { class: 'winner-cell', text: s.winner || '' }),
    el('td', { class: 'num dur-cell', text: fmt.duration(s.duration_seconds) }),
    el('td', { class: 'num tokens-cell', text: (s.tokens?.estimated ? '≈' : '') + fmt.tokens(s.tokens?.total),
      title: `${s.tokens?.input} in, ${s.tokens?.output} out` + (s.tokens?.estimated ? ' (partly estimated: calls cut off before their usage was reported)' : '') }),
    el('td', { class: 'num', text: fmt.cost(s.cost_usd, s.cost_known !== false, s.tokens?.estimated) }),
    el('td', { class: 'nowrap links' }, s.running ? el('a', { href: live, text: 'live' }) : null, ' ',
      el('a', { href: replay, class: 'replay', text: 'replay' })),
  ];
  cells.forEach((c, i) => { if (columns[i]) c.dataset.label = columns[i]; });
  return el('tr', { 'data-id': s.id }, cells);
}

// The new-run form: a team and a question.
async function showNew(params) {
  const team = el('select', { id: 'team', name: 'team', required: true });
  const question = el('textarea', { id: 'question', name: 'question', rows: 4, required: true,
    placeholder: 'What should the team answer?' });
  question.value = params.get('q') || '';
  const submit = el('button', { type: 'submit', text: 'Run' });
  const error = el('p', { class: 'error', hidden: true });
  const form = el('form', { id: 'run-form', class: 'card' },
    el('label', { for: 'team', text: 'Team' }), team,
    el('label', { for: 'question', text: 'Question' }), question,
    el('div', { class: 'actions' }, submit, el('span', { class: 'muted small', text: ' Ctrl+Enter runs it · ' }),
      el('a', { href: '#/setup', text: 'Build a new team' })), error);
  main.replaceChildren(el('section', {}, el('h1', { text: 'New run' }), form));
  try {
    const { teams } = await (await api('/api/teams')).json();
    if (teams.length === 0) {
      submit.disabled = true;
      error.replaceChildren('No team yet: ', el('a', { href: '#/setup', text: 'build one' }), ' first.');
      error.hidden = false;
    }
    team.replaceChildren(...teams.map((t) => el('option', { value: t.name,
      selected: t.name === params.get('team'),
      text: `${t.name} (${t.agents.length} agent${t.agents.length === 1 ? '' : 's'}: ${t.agents.map((a) => a.model || a.backend).join(', ')})` })));
  } catch (e) {
    error.textContent = `Cannot load the teams: ${e.message}`;
    error.hidden = false;
  }
  question.focus();
  ctrlEnter(question, form);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    submit.disabled = true;
    error.hidden = true;
    try {
      const r = await api('/api/runs', { method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ team: team.value, question: question.value }) });
      const { id } = await r.json();
      location.hash = `#/session/${id}`;
    } catch (e) {
      error.textContent = `The run did not start: ${e.message}`;
      error.hidden = false;
      submit.disabled = false;
    }
  });
}

// One session: live over server-sent events, or replayed from its events at a speed
// (?speed=0, the default, shows the end at once).
function showSession(id, mode, params) {
  const speed = Number(params.get('speed') || 0);
  const view = new SessionView(id, mode, speed, {
    cancel: async () => { await api(`/api/sessions/${id}/cancel`, { method: 'POST' }); },
  });
  main.replaceChildren(view.root);
  const stop = () => view.destroy();
  if (mode === 'live') {
    const es = new EventSource(`/api/sessions/${id}/stream`);
    es.onmessage = (e) => view.apply(JSON.parse(e.data));
    es.addEventListener('end', (e) => { view.end(JSON.parse(e.data)); es.close(); });
    es.onerror = () => { if (es.readyState === EventSource.CLOSED) view.fail('The stream closed.'); };
    cleanup = () => { es.close(); stop(); };
    return;
  }
  let timer = null;
  cleanup = () => { clearTimeout(timer); stop(); };
  api(`/api/sessions/${id}/events`).then((r) => r.text()).then((text) => {
    const events = [];
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      try { events.push(JSON.parse(line)); } catch { /* a half-written last line */ }
    }
    // A log that stops before session_ended is a session whose process died: it ends as
    // incomplete, not running forever (end() keeps the status of a session that did end).
    const ended = { status: 'incomplete' };
    if (!speed) {
      events.forEach((e) => view.apply(e));
      view.end(ended);
      return;
    }
    // Replay at speed, with no pause longer than 1.5 s.
    const at = [];
    events.forEach((e, i) => {
      const gap = i ? (Date.parse(e.time) - Date.parse(events[i - 1].time)) / speed : 0;
      at.push(i ? at[i - 1] + Math.min(Math.max(gap, 0), 1500) : 0);
    });
    const start = performance.now();
    let i = 0;
    const tick = () => {
      const now = performance.now() - start;
      while (i < events.length && at[i] <= now) view.apply(events[i++]);
      if (i < events.length) timer = setTimeout(tick, Math.min(100, Math.max(0, at[i] - now)));
      else view.end(ended);
    };
    tick();
  }).catch((e) => view.fail(`Cannot load the session: ${e.message}`));
}

window.addEventListener('hashchange', route);
route();
api('/api/teams').then((r) => r.json()).then(({ version }) => {
  document.getElementById('version').textContent = version ? `massgen ${version}` : '';
}).catch(() => { /* the pages report their own errors */ });
