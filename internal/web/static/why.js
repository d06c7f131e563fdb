// The "Why this answer won" panel: the decision record (decision.js, the same record
// `massgen logs`, status.json and ask_team give) under the final answer. Everything a model
// wrote (reasons, verdict notes) reaches the page as text only.
import { el, plural } from './dom.js';
import { num } from './decision.js';

// whyView returns the panel for record d, or null when there is nothing to explain (no vote,
// decomposition mode, no answer).
export function whyView(d) {
  if (!d || d.no_vote || !d.winner_label || !d.tally.length) return null;
  const weighed = d.weighting !== 'plain';
  const rows = d.tally.map((c) => {
    const head = [`${c.answer_label} (${c.label})`, plural(c.votes, 'vote')];
    if (weighed) head.push(`score ${num(c.score)}`);
    if (c.confidence != null) head.push(`its author's confidence ${num(c.confidence)}`);
    const win = c.agent === d.winner;
    return el('li', { class: win ? 'why-count why-win' : 'why-count', 'data-answer': c.answer_label },
      el('div', { class: 'why-head' }, win ? el('strong', { text: head.join(' · ') }) : head.join(' · '), win ? el('span', { class: 'tag', text: 'winner' }) : null),
      c.ballots.length ? el('ul', { class: 'why-ballots' }, c.ballots.map((b) => el('li', { class: 'why-ballot' }, ballot(b, weighed)))) : null);
  });
  const dissent = d.dissent
    ? el('p', { class: 'why-dissent', id: 'why-dissent' }, el('strong', { text: 'Strongest dissent: ' }), ...ballot(d.dissent, weighed))
    : el('p', { class: 'why-dissent muted', id: 'why-dissent', text: 'No dissent: every counted vote went to the winner.' });
  const verifiers = d.verifiers?.length
    ? el('ul', { class: 'why-verifiers', id: 'why-verifiers' }, d.verifiers.map((v) =>
      el('li', { 'data-verdict': v.verdict || '' }, el('strong', { text: `verifier ${v.verifier} (${v.aspect})` }),
        ` by ${v.subagent_id ? `subagent ${v.subagent_id}` : v.agent} on ${v.answer_label}: ${v.verdict || '?'}`,
        v.reason ? el('span', { class: 'muted', text: ` ${v.reason}` }) : null)))
    : el('p', { class: 'muted small', id: 'why-verifiers', text: 'Verifiers: none ran.' });
  return el('details', { class: 'why', id: 'why-panel', open: true },
    el('summary', {}, el('h3', { text: `Why this answer won` })),
    el('p', { class: 'why-rule', id: 'why-rule', text: `${d.winner_label} won: ${d.rule}.` }),
    el('ul', { class: 'why-tally', id: 'why-tally' }, rows), dissent, verifiers);
}

// ballot is one vote as nodes: who, for what, what it weighs, and its reason.
function ballot(b, weighed) {
  const what = [];
  if (weighed) what.push(`weight ${num(b.weight)}`);
  if (b.confidence != null) what.push(`confidence ${num(b.confidence)}`);
  if (weighed) what.push(`worth ${num(b.worth)}`);
  return [
    el('span', { class: 'why-voter', text: `${b.voter_label} for ${b.for}` }),
    what.length ? el('span', { class: 'muted', text: ` (${what.join(', ')})` }) : null,
    b.reason ? el('q', { class: 'why-reason', text: b.reason }) : null,
  ].filter(Boolean);
}
