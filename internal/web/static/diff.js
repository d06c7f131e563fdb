// A line diff (longest common subsequence, trimmed of the common head and tail), drawn as a
// table of kept, added and removed lines. Texts over maxLines lines are compared by their head.
import { el } from './dom.js';

const maxLines = 4000;

export function diffLines(a, b) {
  const x = String(a ?? '').split('\n').slice(0, maxLines);
  const y = String(b ?? '').split('\n').slice(0, maxLines);
  let s = 0;
  while (s < x.length && s < y.length && x[s] === y[s]) s++;
  let ex = x.length;
  let ey = y.length;
  while (ex > s && ey > s && x[ex - 1] === y[ey - 1]) { ex--; ey--; }
  const n = ex - s;
  const m = ey - s;
  // lcs[i][j]: common lines of x[s+i..ex) and y[s+j..ey); rows as typed arrays.
  const lcs = Array.from({ length: n + 1 }, () => new Uint16Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i][j] = x[s + i] === y[s + j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const out = x.slice(0, s).map((l) => ({ op: ' ', text: l }));
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[s + i] === y[s + j]) { out.push({ op: ' ', text: x[s + i] }); i++; j++; }
    else if (i < n && (j >= m || lcs[i + 1][j] >= lcs[i][j + 1])) { out.push({ op: '-', text: x[s + i] }); i++; }
    else { out.push({ op: '+', text: y[s + j] }); j++; }
  }
  for (const l of x.slice(ex)) out.push({ op: ' ', text: l });
  return out;
}

// diffView draws the diff from a to b; unchanged runs longer than 6 lines are folded.
export function diffView(a, b, names = ['before', 'after']) {
  const lines = diffLines(a, b);
  const added = lines.filter((l) => l.op === '+').length;
  const removed = lines.filter((l) => l.op === '-').length;
  const body = el('div', { class: 'diff-body' });
  let run = [];
  const flush = (last) => {
    if (run.length > 6) {
      const head = last === 'start' ? [] : run.slice(0, 3);
      const foot = last === 'end' ? [] : run.slice(-3);
      head.forEach((l) => body.append(line(l)));
      body.append(el('div', { class: 'diff-fold', text: `… ${run.length - head.length - foot.length} unchanged lines` }));
      foot.forEach((l) => body.append(line(l)));
    } else run.forEach((l) => body.append(line(l)));
    run = [];
  };
  lines.forEach((l, k) => {
    if (l.op === ' ') { run.push(l); return; }
    flush(body.childElementCount ? '' : 'start');
    body.append(line(l));
    if (k === lines.length - 1) run = [];
  });
  flush('end');
  return el('div', { class: 'diff' },
    el('div', { class: 'diff-head' }, `${names[0]} → ${names[1]}: `,
      el('span', { class: 'diff-add', text: `+${added}` }), ' ', el('span', { class: 'diff-del', text: `−${removed}` }),
      added + removed === 0 ? ' (identical)' : ''),
    body);
}

function line(l) {
  return el('div', { class: `diff-line ${l.op === '+' ? 'add' : l.op === '-' ? 'del' : ''}` },
    el('span', { class: 'diff-op', text: l.op }), el('span', { text: l.text || ' ' }));
}
