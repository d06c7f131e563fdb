// The answer and vote browsers: every version of every agent's answer, with a diff against
// its previous version and against the winning answer; every vote with its reason, the answer
// set it was cast on, and whether it went stale.
import { el } from './dom.js';
import { renderMarkdown } from './md.js';
import { diffView } from './diff.js';
import { winningAnswer } from './state.js';

export function answersView(m, selected, select) {
  if (!m.answers.length) return el('p', { class: 'muted', text: 'No answers yet.' });
  const cur = m.answerByLabel[selected] || m.answers[m.answers.length - 1];
  const list = el('ol', { class: 'pick-list', id: 'answer-list', role: 'listbox', 'aria-label': 'Answers' });
  for (const a of m.agents) {
    const mine = m.answers.filter((x) => x.agent === a.id);
    if (!mine.length) continue;
    list.append(el('li', { class: 'pick-group', text: `${a.label} · ${a.id}` }));
    for (const ans of mine) {
      list.append(el('li', {},
        el('button', { type: 'button', role: 'option', class: `pick${ans === cur ? ' active' : ''}`, 'aria-selected': String(ans === cur), 'data-label': ans.label,
          onclick: () => select(ans.label) },
          el('strong', { text: ans.label }), ' ',
          el('span', { class: 'muted small', text: `+${((ans.t - m.start) / 1000).toFixed(1)}s` }),
          ans.label === m.answerLabel ? el('span', { class: 'tag good', text: 'winner' }) : null,
          ans.superseded ? el('span', { class: 'tag', text: 'superseded' }) : null)));
    }
  }
  return el('div', { class: 'browser' }, list, answerDetail(m, cur));
}

export function answerDetail(m, ans) {
  const prev = m.answers.filter((x) => x.agent === ans.agent && x.t < ans.t).pop();
  const win = winningAnswer(m);
  const body = el('div', { class: 'markdown', id: 'answer-detail' });
  body.innerHTML = renderMarkdown(ans.content);
  const votes = m.votes.filter((v) => v.answerLabel === ans.label);
  const tabs = [['text', 'Text']];
  if (prev) tabs.push(['prev', `Diff with ${prev.label}`]);
  if (win && win !== ans) tabs.push(['win', `Diff with the winner ${win.label}`]);
  const pane = el('div', { class: 'pane' }, body);
  const bar = el('div', { class: 'seg', role: 'tablist' }, tabs.map(([k, t], i) => el('button', {
    type: 'button', role: 'tab', class: i === 0 ? 'active' : '', 'data-diff': k, text: t,
    onclick: (e) => {
      bar.querySelectorAll('button').forEach((b) => b.classList.toggle('active', b === e.currentTarget));
      pane.replaceChildren(k === 'text' ? body : k === 'prev' ? diffView(prev.content, ans.content, [prev.label, ans.label]) : diffView(win.content, ans.content, [win.label, ans.label]));
    },
  })));
  return el('section', { class: 'detail-pane' },
    el('h3', {}, `${ans.label} `, el('span', { class: 'muted small', text: `by ${ans.agent}, answer set ${ans.version}` })),
    ans.context.length ? el('p', { class: 'muted small', text: `It had seen ${ans.context.join(', ')}.` }) : el('p', { class: 'muted small', text: 'It had seen no other answer.' }),
    bar, pane,
    votes.length ? el('div', { class: 'votes-for' }, el('h4', { text: `Votes for ${ans.label}` }),
      el('ul', {}, votes.map((v) => el('li', { class: v.stale ? 'stale' : '' }, el('strong', { text: m.byId[v.agent]?.label || v.agent }),
        v.stale ? ' (stale) ' : ' ', el('span', { text: v.reason || '' }))))) : null);
}

export function votesView(m) {
  if (!m.votes.length) return el('p', { class: 'muted', text: 'No votes yet.' });
  const counted = m.votes.filter((v) => !v.stale).length;
  return el('div', {},
    el('p', { class: 'muted', text: `${m.votes.length} votes: ${counted} current, ${m.votes.length - counted} stale (cast before new answers arrived, so they no longer count).` }),
    el('div', { class: 'scroll-x' }, el('table', { class: 'votes', id: 'votes-table' },
      el('thead', {}, el('tr', {}, ['When', 'Voter', 'Voted for', 'Reason', 'Answer set', 'Status'].map((h) => el('th', { text: h })))),
      el('tbody', {}, m.votes.map((v) => el('tr', { class: v.stale ? 'stale' : '' },
        el('td', { class: 'nowrap', text: `+${((v.t - m.start) / 1000).toFixed(1)}s` }),
        el('td', { text: `${m.byId[v.agent]?.label || ''} (${v.agent})` }),
        el('td', { text: v.answerLabel }),
        el('td', { class: 'reason-cell', text: v.reason || '' }),
        el('td', { class: 'num', text: String(v.version) }),
        el('td', {}, el('span', { class: `tag ${v.stale ? 'warn' : 'good'}`, text: v.ignored ? 'stale, not counted' : v.stale ? `stale (${v.staleBy || 'new answers'})` : 'counts' }))))))),
    m.tally ? el('div', {}, el('h3', { text: 'Final tally' }), el('table', { class: 'tally' },
      el('thead', {}, el('tr', {}, el('th', { text: 'Agent' }), el('th', { text: 'Votes' }), el('th', { text: 'Voters' }))),
      el('tbody', {}, m.tally.map((c) => el('tr', { class: c.label === m.winnerLabel ? 'won' : '' },
        el('td', { text: `${c.label} (${c.agent})` }), el('td', { class: 'num', text: String(c.votes) }),
        el('td', { text: (c.voters || []).map((x) => m.byId[x]?.label || x).join(', ') }))))),
    m.tie ? el('p', { class: 'muted', text: 'A tie, broken by agent order.' }) : null) : null);
}

export function voteDetail(m, v) {
  return el('div', {},
    el('p', {}, el('strong', { text: `${m.byId[v.agent]?.label} (${v.agent})` }), ` voted for ${v.answerLabel} at +${((v.t - m.start) / 1000).toFixed(1)}s, on answer set ${v.version}.`),
    v.stale ? el('p', { class: 'tag warn', text: v.ignored ? 'Stale: it was cast on an older answer set and never counted.' : `Stale: ${v.staleBy || 'a new answer'} arrived afterwards, so it no longer counts.` }) : null,
    el('blockquote', { class: 'reason', text: v.reason || '(no reason)' }),
    m.answerByLabel[v.answerLabel] ? answerDetail(m, m.answerByLabel[v.answerLabel]) : null);
}

