// The dashboard's fold of each events.jsonl named on the command line, as the JSON that
// TestStateJS_Parity compares with the Go fold (readmodel.State) of the same log.
//   node internal/web/e2e/parity.mjs LOG...
import { readFileSync } from 'node:fs';
import { newModel, apply } from '../static/state.js';
import { decision } from '../static/decision.js';

const reminder = 'made no workflow call and was reminded to answer or vote';
const out = process.argv.slice(2).map((path) => {
  const m = newModel();
  for (const line of readFileSync(path, 'utf8').split('\n')) if (line.trim()) apply(m, JSON.parse(line));
  return {
    winner: m.winner,
    attempt: m.attempt, max_attempts: m.maxAttempts, restarts: m.restarts.length,
    decision: strip(decision(m)),
    agents: m.agents.map((a) => ({
      id: a.id, rounds: a.rounds.length, answers: a.answers, votes: a.votes,
      reminders: a.items.filter((it) => it.kind === 'note' && it.text === reminder).length,
      input: a.usage.input, cached: a.usage.cached, output: a.usage.output, reasoning: a.usage.reasoning,
      cost: Math.round(a.usage.cost * 1e9) / 1e9,
      cut_off: a.cutOff,
    })),
  };
});
console.log(JSON.stringify(out));

// strip drops the fold's bookkeeping (points, voter order), which the Go record keeps unexported.
function strip(d) {
  if (!d) return d;
  const b = ({ points, order, ...rest }) => rest;
  return { ...d, dissent: d.dissent && b(d.dissent), tally: d.tally.map(({ points, ...c }) => ({ ...c, ballots: c.ballots.map(b) })) };
}
