// Cost and time: tokens (input, cached, output, reasoning), cost and tool use per agent and per
// round (an agent's coordination turn), the budget used against max_cost_usd, and the critical
// path: the model and tool calls that determined the end time, as the server computes it for
// massgen logs (latency, from /api/sessions/{id}; null until fetched).
import { el, fmt } from './dom.js';

const cols = ['', 'Calls', 'Input', 'Cached', 'Output', 'Reasoning', 'Cost', 'Tool calls', 'Tool time', 'Time', 'Outcome'];

export function costView(m, latency) {
  const total = m.agents.reduce((s, a) => s + a.usage.cost, 0);
  const budget = m.settings.max_cost_usd || 0;
  const unpriced = m.agents.filter((a) => a.unpriced);
  const rows = [];
  for (const a of m.agents) {
    const u = a.usage;
    const secs = a.rounds.reduce((s, r) => s + ((r.end ?? m.last) - r.start), 0) / 1000;
    rows.push(el('tr', { class: 'agent-row', 'data-agent': a.id },
      el('th', { scope: 'row', text: `${a.label} (${a.id})` }), num(u.calls), num(u.input), num(u.cached), num(u.output), num(u.reasoning),
      el('td', { class: 'num', text: fmt.cost(u.cost, !a.unpriced, u.estimated) }), num(a.toolCalls),
      el('td', { class: 'num', text: fmt.ms(a.toolMs) }), el('td', { class: 'num', text: fmt.duration(secs) }),
      el('td', { text: `${a.rounds.length} rounds${u.estimated ? ' · partly estimated' : ''}` })));
    for (const r of a.rounds) {
      rows.push(el('tr', { class: 'round-row' },
        el('td', { text: `round ${r.n}` }), num(r.calls), num(r.input), num(r.cached), num(r.output), num(r.reasoning),
        el('td', { class: 'num', text: fmt.cost(r.cost, !a.unpriced) }), num(r.tools), el('td', { class: 'num', text: fmt.ms(r.toolMs) }),
        el('td', { class: 'num', text: fmt.duration(((r.end ?? m.last) - r.start) / 1000) }), el('td', { class: 'muted', text: r.outcome })));
    }
  }
  const sum = (k) => m.agents.reduce((s, a) => s + a.usage[k], 0);
  rows.push(el('tr', { class: 'total-row' }, el('th', { scope: 'row', text: 'Total' }), num(sum('calls')), num(sum('input')), num(sum('cached')),
    num(sum('output')), num(sum('reasoning')), el('td', { class: 'num', text: fmt.cost(total, !unpriced.length, m.agents.some((a) => a.usage.estimated)) }),
    num(m.agents.reduce((s, a) => s + a.toolCalls, 0)), el('td', { class: 'num', text: fmt.ms(m.agents.reduce((s, a) => s + a.toolMs, 0)) }),
    el('td', { class: 'num', text: fmt.duration(m.duration ?? (m.last - m.start) / 1000) }), el('td')));

  return el('div', { class: 'cost', id: 'cost' },
    budget ? budgetBar(total, budget) : el('p', { class: 'muted', text: 'No budget: the config sets no orchestrator.max_cost_usd.' }),
    unpriced.length ? el('p', { class: 'muted', text: `Price unknown for ${unpriced.map((a) => `${a.label} (${a.model || a.backend})`).join(', ')}: their cost is not counted, and max_cost_usd cannot stop them.` }) : null,
    el('div', { class: 'scroll-x' }, el('table', { class: 'cost-table' }, el('thead', {}, el('tr', {}, cols.map((h) => el('th', { text: h })))), el('tbody', {}, rows))),
    el('h3', { text: 'Critical path' }), criticalView(latency));
}

// criticalView lists the path's calls as massgen logs words them (their "what": an answer, a
// vote, a stale vote, the final answer; else the agent and what the call was) and when each
// ended.
function criticalView(latency) {
  const steps = latency?.critical_path || [];
  if (!steps.length) return el('p', { class: 'muted', text: 'No model call yet.' });
  return el('div', {},
    el('p', { class: 'muted', id: 'critical-summary', text: latency.summary }),
    el('ol', { class: 'critical', id: 'critical-path' },
      latency.critical_path_omitted ? el('li', { class: 'muted', text: `${latency.critical_path_omitted} earlier calls` }) : null,
      steps.map((s) => el('li', {}, el('strong', { text: s.what || s.outcome || `${s.agent} ${s.name}` }),
        ` at +${(s.start_seconds + s.seconds).toFixed(1)}s`,
        el('span', { class: 'muted', text: ` (${s.agent}: ${s.kind} ${s.name}, ${s.seconds.toFixed(1)} s)` })))));
}

function num(n) { return el('td', { class: 'num', text: (n ?? 0).toLocaleString() }); }

function budgetBar(spent, budget) {
  const pct = Math.min(100, (spent / budget) * 100);
  const bar = el('div', { class: 'bar-fill' });
  bar.style.width = `${pct}%`;
  return el('div', { class: 'budget' },
    el('div', {}, `Budget: ${fmt.dollars(spent)} of ${fmt.dollars(budget)} (${pct.toFixed(0)}%)`),
    el('div', { class: `bar${pct >= 100 ? ' over' : pct > 80 ? ' high' : ''}`, role: 'progressbar', 'aria-valuenow': pct.toFixed(0), 'aria-valuemin': 0, 'aria-valuemax': 100 }, bar));
}
