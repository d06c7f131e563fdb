// Small DOM helpers shared by the dashboard's pages.

export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v == null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) if (c != null) e.append(c instanceof Node ? c : String(c));
  return e;
}

export const fmt = {
  duration(s) {
    if (s == null || isNaN(s)) return '';
    if (s < 60) return `${s.toFixed(1)} s`;
    const m = Math.floor(s / 60);
    return m < 60 ? `${m} min ${Math.round(s % 60)} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
  },
  tokens(n) { return n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : n >= 1e4 ? `${(n / 1e3).toFixed(1)}k` : String(n ?? 0); },
  ms(v) { return v == null ? '' : v < 1000 ? `${Math.round(v)} ms` : `${(v / 1000).toFixed(1)} s`; },
  // The Go side's usage.Amount: "unknown" when nothing of the cost is known, "≥$x" when part
  // is (known false), "≈" for estimates; never $0 for an unknown cost.
  dollars(c) { c = c || 0; return `$${c < 0.01 ? c.toFixed(4) : c < 1 ? c.toFixed(3) : c.toFixed(2)}`; },
  cost(c, known = true, estimated = false) {
    const n = (estimated ? '≈' : '') + fmt.dollars(c);
    if (known) return n;
    return c ? `≥${n}` : 'unknown';
  },
  time(iso) {
    if (!iso) return '';
    const d = new Date(iso);
    return d.toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });
  },
};

export function badge(status) {
  return el('span', { class: `badge status-${status || 'unknown'}`, text: status || 'unknown' });
}


export const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

// modal shows content in a dialog that Esc, the close button or a click outside closes; focus
// goes into it and back where it was afterwards.
export function modal(title, content) {
  const back = document.activeElement;
  const close = () => { dlg.close(); dlg.remove(); back?.focus?.(); };
  const dlg = el('dialog', { class: 'modal', 'aria-label': title },
    el('header', {}, el('h2', { text: title }), el('button', { type: 'button', class: 'icon', 'aria-label': 'Close', text: '×', onclick: close })),
    el('div', { class: 'modal-body' }, content));
  dlg.addEventListener('click', (e) => { if (e.target === dlg) close(); });
  dlg.addEventListener('close', () => dlg.remove());
  document.body.append(dlg);
  dlg.showModal();
  return dlg;
}

// api fetches a dashboard endpoint; a failure throws with the server's message.
export async function api(path, opts = {}) {
  const r = await fetch(path, { credentials: 'same-origin', ...opts });
  if (!r.ok) {
    let msg = `${r.status} ${r.statusText}`;
    try { msg = (await r.json()).error?.message || msg; } catch { /* not JSON */ }
    const err = new Error(msg);
    err.status = r.status;
    throw err;
  }
  return r;
}

export function postJSON(path, body) {
  return api(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body ?? {}) });
}

// ctrlEnter makes Ctrl+Enter (Cmd+Enter) in a field submit its form.
export function ctrlEnter(field, form) {
  field.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); form.requestSubmit(); }
  });
}
