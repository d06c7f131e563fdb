// Unit checks of the studio's pure modules, in node: the line diff and the event fold.
//   node internal/web/e2e/units.mjs
import assert from 'node:assert/strict';
import { diffLines } from '../static/diff.js';
import { newModel, apply } from '../static/state.js';

const ops = (a, b) => diffLines(a, b).map((l) => l.op + l.text).join('|');
assert.equal(ops('a\nb\nc', 'a\nb\nc'), ' a| b| c');
assert.equal(ops('a\nb\nc', 'a\nx\nc'), ' a|-b|+x| c', 'a change is its removal, then its addition');
assert.equal(ops('', 'x'), '-|+x');
assert.equal(ops('a\nb', 'b'), '-a| b');
assert.equal(ops('a', 'a\nb\nc'), ' a|+b|+c');

// A fold: two agents; a1's vote goes stale when a2 improves; a2's second answer saw both.
let seq = 0;
const t0 = Date.parse('2026-01-01T00:00:00Z');
const ev = (type, data, ms) => ({ seq: ++seq, time: new Date(t0 + ms).toISOString(), type, data });
const m = newModel();
[
  ev('session_started', { question: 'q', turn: 1, agents: [{ id: 'a', label: 'agent1' }, { id: 'b', label: 'agent2' }], settings: { max_cost_usd: 1 } }, 0),
  ev('turn_started', { agent: 'a', version: 0, available: [] }, 1),
  ev('turn_started', { agent: 'b', version: 0, available: [] }, 1),
  ev('text_delta', { agent: 'a', text: 'A1' }, 2),
  ev('answer_submitted', { agent: 'a', label: 'agent1.1', content: 'A1', version: 1 }, 10),
  ev('answer_submitted', { agent: 'b', label: 'agent2.1', content: 'B1', version: 2 }, 20),
  ev('turn_started', { agent: 'a', version: 2, available: ['agent1', 'agent2'] }, 21),
  ev('vote_cast', { agent: 'a', answer_label: 'agent2.1', target_label: 'agent2', target: 'b', reason: 'good', version: 2 }, 30),
  ev('turn_started', { agent: 'b', version: 2, available: ['agent1', 'agent2'] }, 31),
  ev('tool_called', { agent: 'b', call: { id: 'c1', name: 'read_file', arguments: '{"path":"x"}' } }, 32),
  ev('tool_result', { agent: 'b', call_id: 'c1', tool: 'read_file', content: 'data', duration_ms: 12 }, 33),
  ev('usage', { agent: 'b', usage: { input_tokens: 100, cached_input_tokens: 40, output_tokens: 7, reasoning_tokens: 3 }, cost_usd: 0.01 }, 34),
  ev('answer_submitted', { agent: 'b', label: 'agent2.2', content: 'B2', version: 3, invalidated: ['a'] }, 40),
  ev('vote_ignored', { agent: 'a', target_label: 'agent2', reason: 'late', seen_version: 2, current_version: 3 }, 41),
  ev('coordination_ended', { reason: 'consensus', winner: 'b', winner_label: 'agent2', answer_label: 'agent2.2', tally: [] }, 50),
  ev('final_answer', { agent: 'b', label: 'agent2.final', content: 'B2!', mode: 'regenerate' }, 60),
  ev('session_ended', { status: 'completed', exit_code: 0, duration_seconds: 0.06 }, 61),
].forEach((e) => apply(m, e));
assert.equal(m.answers.length, 3);
assert.deepEqual(m.answerByLabel['agent2.2'].context, ['agent1.1', 'agent2.1'], 'the answers b had seen');
assert.equal(m.answerByLabel['agent2.1'].superseded, true);
assert.deepEqual(m.votes.map((v) => [v.answerLabel, v.stale, v.ignored]), [['agent2.1', true, false], ['agent2.2', true, true]]);
assert.ok(m.byId.a.items.find((i) => i.kind === 'text').hidden, 'text that repeats the answer is hidden');
const tool = m.byId.b.items.find((i) => i.kind === 'tool');
assert.deepEqual([tool.name, tool.result, tool.ms], ['read_file', 'data', 12]);
assert.deepEqual([m.byId.b.usage.input, m.byId.b.usage.cached, m.byId.b.usage.output, m.byId.b.usage.reasoning, m.byId.b.toolCalls], [100, 40, 7, 3, 1]);
assert.equal(m.byId.b.rounds[1].cost, 0.01, 'usage counts in the round it was spent in');
assert.equal(m.byId.b.status, 'winner');
// Answer now while b writes its new_answer and a's tool runs: neither shows as in progress.
const cut = newModel();
[
  ev('session_started', { question: 'q', turn: 1, agents: [{ id: 'a', label: 'agent1' }, { id: 'b', label: 'agent2' }, { id: 'c', label: 'agent3' }] }, 0),
  ev('turn_started', { agent: 'a', version: 0, available: [] }, 1),
  ev('turn_started', { agent: 'b', version: 0, available: [] }, 1),
  ev('turn_started', { agent: 'c', version: 0, available: [] }, 1),
  ev('answer_submitted', { agent: 'c', label: 'agent3.1', content: 'C1', version: 1 }, 5),
  ev('tool_called', { agent: 'a', call: { id: 'r1', name: 'mcp__fs__read', arguments: '{}' } }, 6),
  ev('tool_result', { agent: 'a', call_id: 'r1', tool: 'mcp__fs__read', content: 'ok', duration_ms: 3 }, 7),
  ev('tool_called', { agent: 'a', call: { id: 'r2', name: 'mcp__fs__list', arguments: '{}' } }, 8),
  ev('tool_call_streaming', { agent: 'b', call_id: 'w1', tool: 'new_answer', bytes: 16 }, 9),
  ev('coordination_ended', { reason: 'answer_now', winner: 'c', winner_label: 'agent3', answer_label: 'agent3.1', tally: [] }, 10),
  ev('final_answer', { agent: 'c', label: 'agent3.final', content: 'C1', mode: 'verbatim' }, 11),
  ev('session_ended', { status: 'completed', exit_code: 0, duration_seconds: 0.01 }, 12),
].forEach((e) => apply(cut, e));
assert.equal(cut.byId.b.detail, 'cut off while writing new_answer', 'not "writing new_answer (16 bytes)" on a finished session');
assert.deepEqual(cut.byId.b.cutOff, [{ tool: 'new_answer', writing: true }]);
assert.deepEqual(cut.byId.a.items.filter((i) => i.kind === 'tool').map((i) => [i.name, !!i.cut]), [['mcp__fs__read', false], ['mcp__fs__list', true]]);
assert.deepEqual(cut.byId.a.cutOff, [{ tool: 'mcp__fs__list', writing: false }]);
assert.deepEqual(cut.byId.c.cutOff, []);

// ask_others questions (coordination.broadcast): one to the agents, answered by two, one to
// the person that timed out; each is an item in the asker's column, and the person's waits in
// m.questions until it is done.
const qs = newModel();
[
  ev('session_started', { question: 'q', turn: 1, agents: [{ id: 'a', label: 'agent1' }, { id: 'b', label: 'agent2' }, { id: 'c', label: 'agent3' }] }, 0),
  ev('turn_started', { agent: 'a', version: 0, available: [] }, 1),
  ev('broadcast_asked', { agent: 'a', id: 'bc_1', question: 'Paris?', targets: ['b', 'c'], wait: true, timeout_seconds: 300 }, 2),
  ev('broadcast_answered', { agent: 'a', id: 'bc_1', responder: 'c', content: 'Yes.' }, 3),
  ev('broadcast_answered', { agent: 'a', id: 'bc_1', responder: 'b', content: 'No.', error: true }, 4),
  ev('broadcast_done', { agent: 'a', id: 'bc_1', status: 'complete', answers: 2 }, 5),
  ev('broadcast_asked', { agent: 'a', id: 'bc_2', question: 'Colour?', human: true, wait: true, timeout_seconds: 60 }, 6),
].forEach((e) => apply(qs, e));
assert.deepEqual(qs.questions.map((q) => [q.id, q.human, q.status]), [['bc_1', false, 'complete'], ['bc_2', true, '']]);
assert.deepEqual(qs.qById.bc_1.answers, [{ responder: 'c', content: 'Yes.', error: false }, { responder: 'b', content: 'No.', error: true }]);
assert.deepEqual(qs.byId.a.items.filter((i) => i.kind === 'question').map((i) => i.q.id), ['bc_1', 'bc_2']);
apply(qs, ev('broadcast_done', { agent: 'a', id: 'bc_2', status: 'timeout', answers: 0, note: 'nobody answered' }, 7));
assert.equal(qs.qById.bc_2.status, 'timeout');
assert.equal(qs.qById.bc_2.note, 'nobody answered');
console.log('ok');
