// The Memory page (#/memory): what persistent memory stored, as `massgen memory list|search|
// forget` shows it, over /api/memory. Filters are the CLI's (agent, session, team, model);
// words search the text. Every memory reaches the page as text only.
import { el, fmt, postJSON, api, ctrlEnter } from './dom.js';

const filters = ['agent', 'session', 'team', 'model'];

export function showMemory(main, params) {
  const fields = Object.fromEntries(filters.map((f) => [f, el('input', { id: `mem-${f}`, name: f, type: 'text', maxlength: 1024, value: params.get(f) || '', placeholder: 'any' })]));
  const q = el('input', { id: 'mem-q', name: 'q', type: 'search', maxlength: 1024, value: params.get('q') || '', placeholder: 'words in the memory' });
  const form = el('form', { class: 'card mem-form', id: 'mem-form' },
    el('label', {}, 'Search ', q),
    ...filters.map((f) => el('label', {}, `${f[0].toUpperCase()}${f.slice(1)} `, fields[f])),
    el('button', { type: 'submit', text: 'Show' }),
    el('button', { type: 'button', class: 'secondary danger', id: 'mem-forget-all', text: 'Forget what the filters select', onclick: () => forgetSelected() }));
  const info = el('p', { class: 'muted small', id: 'mem-info' });
  const error = el('p', { class: 'error', hidden: true, id: 'mem-error' });
  const list = el('ul', { class: 'mem-list', id: 'mem-list' });
  main.replaceChildren(el('section', {}, el('div', { class: 'toolbar' }, el('h1', { text: 'Memory' })),
    el('p', { class: 'muted small', text: 'The facts persistent memory stored (memory: {enabled: true}), as massgen memory lists them. Forgetting deletes them from the store for every team.' }),
    form, error, info, list));

  const query = () => {
    const p = new URLSearchParams();
    if (q.value.trim()) p.set('q', q.value.trim());
    for (const f of filters) if (fields[f].value.trim()) p.set(f, fields[f].value.trim());
    return p;
  };
  const fail = (msg) => { error.textContent = msg; error.hidden = false; };
  let seq = 0; // the newest load: an older answer arriving late is dropped
  const load = async () => {
    const mine = ++seq;
    error.hidden = true;
    try {
      const r = await (await api(`/api/memory?${query()}`)).json();
      if (mine !== seq) return;
      const shown = r.memories.length;
      info.textContent = `${r.total} ${r.total === 1 ? 'memory' : 'memories'}${r.truncated ? `, ${shown} shown${q.value.trim() ? ' (best first)' : ' (the newest)'}` : ''} · store ${r.store}`;
      if (r.notice) fail(r.notice);
      list.replaceChildren(...r.memories.map(item));
      if (!shown) list.append(el('li', { class: 'empty', text: 'No memories.' }));
    } catch (e) { fail(`Cannot load the memories: ${e.message}`); }
  };
  const forget = async (body, what) => {
    if (!confirm(`Forget ${what}? This cannot be undone.`)) return;
    try {
      const { forgotten } = await (await postJSON('/api/memory/forget', body)).json();
      info.textContent = `${forgotten} forgotten.`;
      await load();
    } catch (e) { fail(`Cannot forget: ${e.message}`); }
  };
  // forgetSelected forgets what the filters select: every memory when none is set.
  const forgetSelected = () => {
    const body = {};
    for (const f of filters) if (fields[f].value.trim()) body[f] = fields[f].value.trim();
    if (!Object.keys(body).length) body.all = true;
    forget(body, body.all ? 'every memory of the store' : `every memory with ${Object.entries(body).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  };
  const item = (m) => el('li', { class: 'mem', 'data-id': m.id },
    el('div', { class: 'mem-text', text: m.text }),
    el('div', { class: 'mem-meta muted small' },
      el('span', { text: `${m.agent}${m.winner ? ' (winner)' : ''}` }), ' · ',
      el('span', { text: `session ${m.session || '?'}, turn ${m.turn}` }), ' · ',
      el('span', { text: fmt.time(m.created) }), ' · ',
      el('code', { text: m.id }), ' ',
      el('button', { type: 'button', class: 'secondary small mem-forget', text: 'Forget', 'aria-label': `Forget memory ${m.id}`, onclick: () => forget({ ids: [m.id] }, `memory ${m.id}`) })));

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    history.replaceState(null, '', `#/memory${query().toString() ? `?${query()}` : ''}`);
    load();
  });
  ctrlEnter(q, form);
  load();
}
