// The agents view: a column per agent with its status, and everything it did in order: its
// answers (the new_answer calls' content, rendered as Markdown), votes with reasons (stale ones
// marked), tool calls with arguments and results, reasoning (collapsed), streamed text, notes.
import { el, badge, fmt, plural } from './dom.js';
import { renderMarkdown } from './md.js';

export class AgentsView {
  constructor(actions) {
    this.actions = actions; // {stopAgent(id), open(kind, key), live()}
    this.root = el('div', { class: 'agents', id: 'agents' });
    this.cols = new Map();
  }

  build(m) {
    this.cols.clear();
    this.root.replaceChildren(...m.agents.map((a) => {
      const c = {
        badge: badge(a.status), detail: el('div', { class: 'detail muted' }), items: el('ol', { class: 'items' }),
        plan: el('details', { class: 'plan', hidden: true }), planRev: 0,
        counts: el('div', { class: 'counts' }), els: new Map(), n: 0,
        stop: el('button', { type: 'button', class: 'secondary small', text: 'Stop agent', title: `Stop ${a.label}: it answers and votes no more`,
          onclick: () => this.actions.stopAgent(a) }),
      };
      this.cols.set(a.id, c);
      return el('article', { class: 'agent card', 'data-agent': a.id, tabindex: '-1' },
        el('header', {},
          el('div', {}, el('strong', { text: a.label }), ' ', el('span', { class: 'agent-id', text: a.id })),
          el('div', { class: 'agent-actions' }, c.stop, c.badge)),
        el('div', { class: 'model muted', text: [a.backend, a.model].filter(Boolean).join(' · ') + (a.unpriced ? ' · price unknown' : '') }),
        c.detail, c.plan, c.items, c.counts);
    }));
  }

  render(m) {
    const live = this.actions.live();
    for (const a of m.agents) {
      const c = this.cols.get(a.id);
      if (!c) continue;
      c.badge.className = `badge status-${a.status}`;
      c.badge.textContent = a.status;
      c.detail.textContent = a.detail || '';
      c.detail.hidden = !a.detail;
      if ((a.planRev || 0) !== c.planRev) {
        c.planRev = a.planRev || 0;
        renderPlan(c.plan, a.plan || []);
      }
      c.stop.hidden = !live || ['dead', 'stopped', 'error', 'done', 'winner', 'presenting'].includes(a.status) || m.endReason !== '';
      const atEnd = c.items.scrollHeight - c.items.scrollTop - c.items.clientHeight < 60;
      for (; c.n < a.items.length; c.n++) {
        const it = a.items[c.n];
        const node = this.itemEl(m, a, it);
        c.els.set(it, { node, rev: revOf(it) });
        c.items.append(node);
      }
      for (const [it, r] of c.els) {
        if (r.rev !== revOf(it)) {
          const node = this.itemEl(m, a, it);
          r.node.replaceWith(node);
          r.node = node;
          r.rev = revOf(it);
        }
      }
      if (atEnd) c.items.scrollTop = c.items.scrollHeight;
      c.counts.textContent = [plural(a.answers, 'answer'), plural(a.votes, 'vote'), plural(a.toolCalls, 'tool call'),
        `${fmt.tokens(a.usage.input + a.usage.output)} tokens`, fmt.cost(a.usage.cost, !a.unpriced, a.usage.estimated)].join(' · ');
    }
  }

  itemEl(m, a, it) {
    const when = el('span', { class: 'when', text: `+${((it.t - m.start) / 1000).toFixed(1)}s` });
    switch (it.kind) {
      case 'answer': {
        const ans = it.answer;
        const body = el('div', { class: 'markdown answer-text' });
        body.innerHTML = renderMarkdown(ans.content);
        const won = m.answerLabel === ans.label;
        return el('li', { class: `item answer${ans.superseded ? ' superseded' : ''}${won ? ' won' : ''}`, 'data-label': ans.label },
          el('div', { class: 'item-head' }, when, ' ',
            el('button', { type: 'button', class: 'link', text: `answer ${ans.label}`, onclick: () => this.actions.open('answer', ans.label) }),
            ans.superseded ? el('span', { class: 'tag', text: 'superseded' }) : null,
            won ? el('span', { class: 'tag good', text: 'winning answer' }) : null,
            ans.context.length ? el('span', { class: 'muted small', text: ` saw ${ans.context.join(', ')}` }) : null),
          body);
      }
      case 'vote': {
        const v = it.vote;
        return el('li', { class: `item vote${v.stale ? ' stale' : ''}` },
          el('div', { class: 'item-head' }, when, ' ',
            el('button', { type: 'button', class: 'link', text: `voted for ${v.answerLabel}`, onclick: () => this.actions.open('vote', m.votes.indexOf(v)) }),
            v.stale ? el('span', { class: 'tag warn', text: v.ignored ? 'stale: cast on older answers, not counted' : `stale: ${v.staleBy || 'new answers'} arrived` }) : null),
          v.reason ? el('div', { class: 'reason', text: v.reason }) : null);
      }
      case 'tool': {
        // A call the end cut off has no result and never will: not "running…".
        const state = it.result != null ? `${it.isError ? 'failed' : 'done'} in ${fmt.ms(it.ms)}` : it.cut ? 'cut off, no result' : 'running…';
        return el('li', { class: `item tool${it.isError ? ' failed' : ''}` },
          el('details', {},
            el('summary', {}, when, ' ', el('code', { text: it.name }), ' ', el('span', { class: 'muted small', text: state })),
            it.args ? el('div', { class: 'kv' }, el('span', { class: 'muted', text: 'arguments' }), el('pre', { class: 'code', text: pretty(it.args) })) : null,
            it.output ? el('div', { class: 'kv' }, el('span', { class: 'muted', text: 'output' }), el('pre', { class: 'code', text: it.output })) : null,
            it.images?.length ? el('div', { class: 'kv shots' }, el('span', { class: 'muted', text: 'screenshots' }),
              ...it.images.map((im) => el('figure', { class: 'shot' },
                im.thumb.startsWith('data:image/jpeg;base64,') ? el('img', { src: im.thumb, alt: im.path, loading: 'lazy' }) : null,
                el('figcaption', { class: 'muted small', text: im.path })))) : null,
            it.result != null ? el('div', { class: 'kv' }, el('span', { class: 'muted', text: it.truncated ? 'result (cut)' : 'result' }), el('pre', { class: 'code', text: it.result })) : null));
      }
      case 'presentation': {
        const body = el('div', { class: `markdown${it.done ? '' : ' streaming'}` });
        body.innerHTML = renderMarkdown(it.text || '…');
        return el('li', { class: 'item presentation' },
          el('div', { class: 'item-head' }, when, ' ', el('strong', { text: it.done ? 'final answer' : 'presenting the final answer…' }),
            it.fallback ? el('span', { class: 'tag', text: 'its stored answer' }) : null),
          body);
      }
      case 'evaluation': {
        const verdict = it.decision === 'restart' ? 'asked for a restart' : it.decision === 'submit' ? (it.why ? `no decision (${it.why}): the answer stands` : 'submitted: the answer stands') : 'evaluating…';
        return el('li', { class: 'item note note-info' },
          el('div', { class: 'item-head' }, when, ' ', el('strong', { text: `post-evaluation of attempt ${it.attempt}` }), ' ',
            el('span', { class: `tag${it.decision === 'restart' ? ' warn' : ''}`, text: verdict }),
            it.debug ? el('span', { class: 'muted small', text: ' read debug_final_answer' }) : null),
          it.text ? el('pre', { class: 'stream', text: it.text }) : null);
      }
      case 'restart':
        return el('li', { class: 'item note note-warn' },
          el('div', { class: 'item-head' }, when, ' ', el('strong', { text: `orchestration restart: attempt ${it.attempt}/${it.maxAttempts}` }),
            ' ', el('span', { class: 'muted small', text: `asked by ${m.byId[it.by]?.label || it.by}` })),
          el('div', { class: 'reason', text: `reason: ${it.reason}` }),
          el('div', { class: 'reason', text: `instructions: ${it.instructions}` }));
      case 'reasoning':
        return el('li', { class: 'item reasoning' },
          el('details', {}, el('summary', {}, when, ' ', el('span', { class: 'muted', text: `reasoning (${it.text.length} chars)` })),
            el('pre', { class: 'stream', text: it.text })));
      case 'text':
        return el('li', { class: 'item text', hidden: !!it.hidden }, el('pre', { class: 'stream', text: it.text }));
      case 'permission': {
        const p = it.perm;
        return el('li', { class: `item permission${p.decision ? ' decided' : ''}` },
          el('div', { class: 'item-head' }, when, ' ', el('strong', { text: 'asks permission' })),
          el('div', {}, el('code', { text: p.action }), ' ', el('span', { text: p.target })),
          p.rule ? el('div', { class: 'muted small', text: `rule: ${p.rule}` }) : null,
          p.decision ? el('div', { class: `tag ${p.decision === 'allow' ? 'good' : 'bad'}`, text: `${p.decision}${p.by ? ` by ${p.by}` : ''}` }) : null,
          !p.decision && this.actions.live() ? el('div', { class: 'perm-actions' },
            el('button', { type: 'button', class: 'small', text: 'Allow', onclick: () => this.actions.decide(p, 'allow') }),
            el('button', { type: 'button', class: 'small secondary', text: 'Deny', onclick: () => this.actions.decide(p, 'deny') })) : null);
      }
      case 'subagent': {
        const bad = !['running', 'completed', 'completed_but_timeout'].includes(it.status);
        return el('li', { class: `item note note-${bad ? 'warn' : 'info'}` }, when, ' ',
          el('button', { type: 'button', class: 'link', text: `subagent ${it.id}`, onclick: () => this.actions.open('subagent', it) }),
          ' ', el('span', { class: `tag${bad ? ' warn' : ''}`, text: it.status }),
          it.background ? el('span', { class: 'muted small', text: ' background' }) : null);
      }
      case 'question': {
        const q = it.q;
        const whom = q.human ? 'you' : (q.targets.map((id) => m.byId[id]?.label || id).join(', ') || 'the others');
        return el('li', { class: `item question${q.status ? ' decided' : ''}` },
          el('div', { class: 'item-head' }, when, ' ', el('strong', { text: `asks ${whom}` }), ' ', el('span', { class: 'muted small', text: q.id })),
          el('pre', { class: 'stream', text: q.text }),
          el('ul', { class: 'answers' }, ...q.answers.map((r) => el('li', { class: r.error ? 'error' : '' },
            el('strong', { text: r.responder === 'human' ? 'you' : (m.byId[r.responder]?.label || r.responder) }), ': ', el('span', { text: r.content })))),
          q.status ? el('div', { class: `tag ${q.status === 'complete' ? 'good' : 'bad'}`, text: q.status + (q.note ? `: ${q.note}` : '') })
            : el('div', { class: 'muted small', text: q.human ? 'waiting for your answer' : 'waiting for answers' }));
      }
      default:
        return el('li', { class: `item note note-${it.level}` }, when, ' ', el('span', { text: it.text }));
    }
  }

  focus(agentIndex) {
    const col = this.root.children[agentIndex];
    if (col) { col.scrollIntoView({ block: 'nearest', inline: 'nearest' }); col.focus(); }
  }
}

// revOf changes whenever an item or what it shows (its answer, vote or ask) changes.
function revOf(it) { return it.rev + (it.answer?.rev || 0) + (it.vote?.rev || 0) + (it.perm?.rev || 0) + (it.q?.rev || 0); }

function pretty(args) {
  try { return JSON.stringify(JSON.parse(args), null, 2); } catch { return args; }
}

// planGlyph marks a task's status in an agent's task plan.
const planGlyph = { completed: '✓', verified: '✔', in_progress: '▶', blocked: '⛔', pending: '○' };

// renderPlan fills an agent's task plan block: a summary line (done of total) and the tasks
// in plan order, each with its status and what it waits on. Text only, never markup.
function renderPlan(node, tasks) {
  node.hidden = tasks.length === 0;
  const done = tasks.filter((t) => t.status === 'completed' || t.status === 'verified').length;
  node.replaceChildren(
    el('summary', { text: `task plan: ${done}/${tasks.length} done` }),
    el('ol', { class: 'plan-tasks' }, ...tasks.map((t) => el('li', { class: `task-${t.status}`, title: t.status },
      `${planGlyph[t.status] || '·'} `, el('code', { text: t.id }), ` ${t.description}`,
      (t.dependencies || []).length ? el('span', { class: 'muted', text: ` (after ${t.dependencies.join(', ')})` }) : ''))));
}
