// Steering a live session from the page: Answer Now, stop the session (with a confirmation),
// a message to the agents (MassGen's human input queue), the permission asks waiting for a
// decision, and, once a turn has ended, a follow-up question in the same session.
import { el, postJSON, ctrlEnter, plural } from './dom.js';

export class SteerBar {
  constructor(id, view) {
    this.id = id;
    this.view = view;
    this.sent = [];
    this.msg = el('textarea', { id: 'steer-message', rows: 2, maxlength: 16384, placeholder: 'Message the agents: each one reads it at its next step (Ctrl+Enter sends)' });
    this.msgNote = el('span', { class: 'muted small', 'aria-live': 'polite' });
    const form = el('form', { class: 'steer-form', id: 'steer-form' }, this.msg,
      el('div', { class: 'row' }, el('button', { type: 'submit', text: 'Send' }), this.msgNote));
    form.addEventListener('submit', (e) => { e.preventDefault(); this.send(); });
    ctrlEnter(this.msg, form);
    this.asks = el('div', { class: 'asks', id: 'permission-asks' });
    this.qs = el('div', { class: 'asks', id: 'questions' });
    this.live = el('section', { class: 'card steer', id: 'steer' }, el('h2', { text: 'Steer' }), this.asks, this.qs, form);
    this.follow = el('textarea', { id: 'followup-question', rows: 2, placeholder: 'Ask a follow-up: the team continues this conversation (Ctrl+Enter sends)' });
    this.followNote = el('p', { class: 'error', hidden: true });
    const fform = el('form', { class: 'steer-form', id: 'followup-form' }, this.follow,
      el('div', { class: 'row' }, el('button', { type: 'submit', text: 'Ask the team' })), this.followNote);
    fform.addEventListener('submit', (e) => { e.preventDefault(); this.followUp(); });
    ctrlEnter(this.follow, fform);
    this.after = el('section', { class: 'card followup', id: 'followup', hidden: true }, el('h2', { text: 'Follow-up' }), fform);
    this.root = el('div', { class: 'steer-wrap' }, this.live);
    this.drawnAsks = '';
    this.drawnQs = '';
  }

  render(m, live) {
    const running = live && m.status === 'running';
    this.live.hidden = !running || m.endReason !== '';
    this.after.hidden = m.status === 'running' || m.status === 'incomplete';
    const pending = m.permissions.filter((p) => !p.decision);
    const key = JSON.stringify(m.permissions.map((p) => [p.id, p.decision]));
    if (key !== this.drawnAsks) {
      this.drawnAsks = key;
      this.asks.replaceChildren(...pending.map((p) => el('div', { class: 'ask', 'data-ask': p.id },
        el('div', {}, el('strong', { text: m.byId[p.agent]?.label || p.agent }), ` asks to `, el('code', { text: p.action }), ' ', el('span', { class: 'target', text: p.target })),
        p.rule ? el('div', { class: 'muted small', text: `because of the rule ${p.rule}` }) : null,
        el('div', { class: 'row' },
          el('button', { type: 'button', class: 'small', text: 'Allow', onclick: () => this.decide(p, 'allow') }),
          el('button', { type: 'button', class: 'small secondary', text: 'Deny', onclick: () => this.decide(p, 'deny') })))));
    }
    // The agents' questions to the person (broadcast: human), each with its own answer box.
    const waiting = m.questions.filter((q) => q.human && !q.status);
    const qkey = JSON.stringify(waiting.map((q) => q.id));
    if (qkey !== this.drawnQs) {
      this.drawnQs = qkey;
      this.qs.replaceChildren(...waiting.map((q) => {
        const box = el('textarea', { rows: 2, maxlength: 16384, 'data-question': q.id, placeholder: 'Your answer (Ctrl+Enter sends)' });
        const f = el('form', { class: 'ask question-ask', 'data-ask': q.id },
          el('div', {}, el('strong', { text: m.byId[q.agent]?.label || q.agent }), ' asks you:'),
          el('pre', { class: 'stream', text: q.text }), box,
          el('div', { class: 'row' },
            el('button', { type: 'submit', class: 'small', text: 'Answer' }),
            el('button', { type: 'button', class: 'small secondary', text: 'Skip', onclick: () => this.reply(q, '') })));
        f.addEventListener('submit', (e) => { e.preventDefault(); this.reply(q, box.value.trim()); });
        ctrlEnter(box, f);
        return f;
      }));
    }
    const delivered = m.messages.length;
    if (this.sent.length) this.msgNote.textContent = `${plural(this.sent.length, 'message')} sent, ${delivered} read by an agent so far`;
  }

  async send() {
    const text = this.msg.value.trim();
    if (!text) return;
    try {
      await postJSON(`/api/sessions/${this.id}/messages`, { text });
      this.sent.push(text);
      this.msg.value = '';
      this.view.schedule();
    } catch (e) {
      this.msgNote.textContent = `Not sent: ${e.message}`;
    }
  }

  async decide(p, decision) {
    try {
      await postJSON(`/api/sessions/${this.id}/permissions/${encodeURIComponent(p.id)}`, { decision });
      p.sent = decision;
      this.msgNote.textContent = `${decision === 'allow' ? 'Allowed' : 'Denied'}: ${p.action} ${p.target}`;
    } catch (e) {
      this.msgNote.textContent = `The decision was not taken: ${e.message}`;
    }
  }

  async reply(q, text) {
    try {
      await postJSON(`/api/sessions/${this.id}/questions/${encodeURIComponent(q.id)}`, { text });
      this.msgNote.textContent = text ? `Answered ${q.id}` : `Skipped ${q.id}`;
    } catch (e) {
      this.msgNote.textContent = `The answer was not taken: ${e.message}`;
    }
  }

  async followUp() {
    const question = this.follow.value.trim();
    if (!question) return;
    this.followNote.hidden = true;
    try {
      const { id } = await (await postJSON(`/api/sessions/${this.id}/followup`, { question })).json();
      location.hash = `#/session/${id}`;
    } catch (e) {
      this.followNote.textContent = `The follow-up did not start: ${e.message}`;
      this.followNote.hidden = false;
    }
  }
}
