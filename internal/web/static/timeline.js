// The timeline swimlane: an SVG with a lane per agent and time running left to right. Answers
// are circles, votes diamonds (dashed and grey when stale), the final answer a ring; arrows go
// from each answer to the answers it had seen, from each vote to the answer it chose, and from
// the final answer to the winning answer. A node opens its answer or vote on click or Enter.
import { winningAnswer } from './state.js';

const NS = 'http://www.w3.org/2000/svg';
const gutter = 120;
const laneH = 64;
const top = 34;
const gap = 26; // least distance between two nodes of a lane

function svg(tag, attrs = {}, ...kids) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v != null) e.setAttribute(k, v);
  for (const k of kids) if (k) e.append(k);
  return e;
}

export function drawTimeline(m, width, open) {
  const lanes = m.agents.length;
  const end = Math.max(m.last ?? m.start, m.start + 1000);
  const span = end - m.start;
  const inner = Math.max(width - gutter - 40, 200);
  const xOf = (t) => gutter + ((t - m.start) / span) * inner;
  const yOf = (agentId) => top + (m.byId[agentId]?.index ?? 0) * laneH + laneH / 2;

  // Nodes in time order, pushed right where a lane would overlap.
  const nodes = [];
  for (const ans of m.answers) nodes.push({ kind: 'answer', t: ans.t, agent: ans.agent, key: ans.label, text: ans.label.replace(/^agent/, 'a'), ans });
  m.votes.forEach((v, k) => nodes.push({ kind: 'vote', t: v.t, agent: v.agent, key: k, text: `→${v.answerLabel.replace(/^agent/, 'a')}`, vote: v }));
  if (m.final) nodes.push({ kind: 'final', t: m.final.t, agent: m.final.agent, key: 'final', text: 'final' });
  nodes.sort((a, b) => a.t - b.t);
  const lastX = {};
  let maxX = 0;
  for (const n of nodes) {
    n.x = Math.max(xOf(n.t), (lastX[n.agent] ?? -Infinity) + gap);
    n.y = yOf(n.agent);
    lastX[n.agent] = n.x;
    maxX = Math.max(maxX, n.x);
  }
  const w = Math.max(width, maxX + 60);
  const h = top + lanes * laneH + 10;
  const root = svg('svg', { class: 'timeline', width: w, height: h, viewBox: `0 0 ${w} ${h}`, role: 'img', 'aria-label': 'Timeline of answers and votes' });
  root.append(svg('defs', {},
    svg('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
      svg('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrowhead' }))));

  // Lanes and the time axis.
  m.agents.forEach((a, i) => {
    const y = top + i * laneH;
    root.append(svg('rect', { x: 0, y, width: w, height: laneH, class: i % 2 ? 'lane odd' : 'lane' }));
    const name = svg('text', { x: 10, y: y + laneH / 2 - 2, class: 'lane-label' });
    name.textContent = a.label;
    const id = svg('text', { x: 10, y: y + laneH / 2 + 13, class: 'lane-id' });
    id.textContent = a.id.length > 16 ? `${a.id.slice(0, 15)}…` : a.id;
    root.append(name, id);
  });
  const step = niceStep(span / 1000 / Math.max(1, inner / 90));
  for (let s = 0; s <= span / 1000 + 1e-9; s += step) {
    const x = xOf(m.start + s * 1000);
    root.append(svg('line', { x1: x, x2: x, y1: top - 6, y2: h - 10, class: 'tick' }));
    const lbl = svg('text', { x, y: top - 12, class: 'tick-label', 'text-anchor': 'middle' });
    lbl.textContent = `${+s.toFixed(1)}s`;
    root.append(lbl);
  }

  // Arrows under the nodes.
  const byAnswer = Object.fromEntries(nodes.filter((n) => n.kind === 'answer').map((n) => [n.key, n]));
  const arrows = svg('g', { class: 'arrows' });
  const arrow = (from, to, kind, stale) => {
    if (!from || !to) return;
    const dx = to.x - from.x;
    const dy = to.y - from.y;
    const len = Math.hypot(dx, dy) || 1;
    const r = 11;
    const sx = from.x + (dx / len) * r * (from === to ? 0 : 1);
    const sy = from.y + (dy / len) * r;
    const ex = to.x - (dx / len) * r;
    const ey = to.y - (dy / len) * r;
    const bend = from.y === to.y ? -18 : 0;
    const mx = (sx + ex) / 2;
    const my = (sy + ey) / 2 + bend;
    arrows.append(svg('path', { d: `M${sx},${sy} Q${mx},${my} ${ex},${ey}`, class: `arrow ${kind}${stale ? ' stale' : ''}`, 'data-kind': kind, 'marker-end': 'url(#arrow)'}));
  };
  for (const n of nodes) {
    if (n.kind === 'answer') for (const l of n.ans.context) arrow(n, byAnswer[l], 'context');
    if (n.kind === 'vote') arrow(n, byAnswer[n.vote.answerLabel], 'vote', n.vote.stale);
    if (n.kind === 'final') arrow(n, byAnswer[winningAnswer(m)?.label], 'final');
  }
  root.append(arrows);

  for (const n of nodes) {
    const stale = n.kind === 'vote' && n.vote.stale;
    const won = n.kind === 'answer' && n.key === m.answerLabel;
    const g = svg('g', { class: `node ${n.kind}${stale ? ' stale' : ''}${won ? ' won' : ''}`, 'data-kind': n.kind, 'data-key': String(n.key),
      transform: `translate(${n.x},${n.y})`, tabindex: 0, role: 'button', 'aria-label': label(n) });
    const title = svg('title');
    title.textContent = label(n);
    g.append(title);
    if (n.kind === 'answer') g.append(svg('circle', { r: 10 }));
    else if (n.kind === 'vote') g.append(svg('rect', { x: -7, y: -7, width: 14, height: 14, transform: 'rotate(45)' }));
    else g.append(svg('circle', { r: 12, class: 'ring' }), svg('circle', { r: 6 }));
    const t = svg('text', { y: n.kind === 'vote' ? 22 : -15, 'text-anchor': 'middle', class: 'node-label' });
    t.textContent = n.text;
    g.append(t);
    const go = () => open(n.kind, n.key);
    g.addEventListener('click', go);
    g.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); go(); } });
    root.append(g);
  }
  return root;
}

function label(n) {
  if (n.kind === 'answer') return `answer ${n.key}`;
  if (n.kind === 'vote') return `vote for ${n.vote.answerLabel}${n.vote.stale ? ' (stale)' : ''}`;
  return 'final answer';
}

function niceStep(s) {
  for (const v of [0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600]) if (v >= s) return v;
  return 7200;
}
