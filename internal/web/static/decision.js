// The decision record: why the winner won, folded from the session model exactly as
// readmodel's State.Decision does in Go (TestStateJS_Parity compares the two), so the live
// view explains a vote the way `massgen logs`, status.json and ask_team do. Its fields are the
// Go record's JSON names. Votes are worth whole points, weights to 3 decimals and confidences
// to 2 (coord.Points), so sums do not depend on the order votes were added.
const weightScale = 1000;
const confScale = 100;
const perVote = weightScale * confScale;
const missingConfidence = 0.5;

function weightPoints(mode, w) {
  if ((mode !== 'weighted' && mode !== 'confidence') || !w) return weightScale;
  return Math.round(Math.min(Math.max(w, 0.001), 1000) * weightScale);
}

function points(mode, weight, conf) {
  const c = mode === 'confidence' ? Math.round((conf ?? missingConfidence) * confScale) : confScale;
  return weightPoints(mode, weight) * c;
}

function latestAnswer(m, a) {
  for (let i = m.answers.length - 1; i >= 0; i--) if (m.answers[i].agent === a.id) return m.answers[i];
  return null;
}

// decision returns the record, or null until coordination ended and in decomposition mode
// (parts are merged there, not voted on). The verifiers' verdicts are the answer_verified
// events of the attempt (orchestrator.verifiers).
export function decision(m) {
  if (!m.ended || m.settings?.coordination_mode) return null;
  const mode = m.settings?.vote_weighting || 'plain';
  const d = {
    weighting: mode, rule: '', end_reason: m.endReason || '', winner: m.winner || '', winner_label: m.winnerLabel || '',
    answer_label: m.answerLabel || '', tie: !!m.tie, tally: [], dissent: null, verifiers: [], verified: '', agrees: false, no_vote: false,
  };
  const at = {};
  for (const a of m.agents) {
    const ans = latestAnswer(m, a);
    if (!ans) continue;
    at[a.id] = d.tally.length;
    d.tally.push({ agent: a.id, label: a.label, answer_label: ans.label, confidence: ans.confidence ?? null, votes: 0, score: 0, ballots: [], points: 0 });
  }
  for (const voter of m.agents) {
    const v = voter.vote;
    if (voter.dead || !v || v.ignored || !(v.scoped || v.version === m.version)) continue;
    const k = at[v.target];
    if (k === undefined) continue;
    const w = !voter.vote_weight || mode === 'plain' ? 1 : voter.vote_weight;
    const pts = points(mode, voter.vote_weight || 0, v.confidence);
    const c = d.tally[k];
    c.votes++;
    c.points += pts;
    c.ballots.push({ voter: voter.id, voter_label: voter.label, for: v.answerLabel, weight: w, confidence: v.confidence ?? null,
      worth: pts / perVote, reason: v.reason || '', points: pts, order: voter.index });
  }
  let lead = -1;
  d.tally.forEach((c, k) => {
    c.score = c.points / perVote;
    if (lead < 0 || c.points > d.tally[lead].points) lead = k;
  });
  verification(m, d);
  const failed = failedAnswers(d);
  if (lead >= 0) d.agrees = d.tally[lead].agent === d.winner || (d.verified === 'passed' && !!failed[d.tally[lead].answer_label]);
  for (const c of d.tally) {
    if (c.agent === d.winner) continue;
    for (const b of c.ballots) {
      const x = d.dissent;
      if (!x || b.points > x.points || (b.points === x.points && b.order < x.order)) d.dissent = b;
    }
  }
  d.no_vote = !!m.settings?.skip_voting || d.end_reason === 'skipped' || d.end_reason === 'all_answered';
  d.rule = rule(d, lead) + verifiedRule(d, failed);
  return d;
}

// verification fills the verdicts and what they decided: passed (the winner's answer passed
// every verifier) or none_passed (the plain tally's winner stands); '' without verifiers.
function verification(m, d) {
  const vs = m.verdicts || [];
  if (!vs.length) return;
  d.verifiers = vs.map((v) => ({ ...v }));
  const checked = vs.some((v) => v.answer_label === d.answer_label);
  d.verified = checked && !failedAnswers(d)[d.answer_label] ? 'passed' : 'none_passed';
}

function failedAnswers(d) {
  const failed = {};
  for (const v of d.verifiers) if (v.verdict !== 'pass') failed[v.answer_label] = true;
  return failed;
}

function verifiedRule(d, failed) {
  if (d.verified === 'none_passed') return "; no answer passed every verifier, so the plain tally's winner stands";
  if (d.verified !== 'passed') return '';
  const n = Object.keys(failed).length;
  if (n === 0) return '; the answer passed every verifier';
  if (n === 1) return '; the answer ahead of it failed a verifier, and it passed every one';
  return `; the ${n} answers ahead of it failed a verifier, and it passed every one`;
}

function rule(d, lead) {
  if (d.no_vote) return "no vote: the first agent's answer is presented";
  if (lead < 0) return 'no agent answered';
  if (d.tally[lead].points === 0) return 'no votes counted: the first agent with an answer wins';
  let r = {
    weighted: "highest weighted score: each vote counts its voter's weight",
    confidence: "highest score: each vote counts its voter's weight times the confidence it stated (0.5 when it stated none)",
  }[d.weighting] || 'most votes';
  if (d.tie) r += '; a tie, broken by agent order';
  if (!d.agrees && d.winner) r += `; the session recorded ${d.winner_label} as the winner, which the votes in the log do not give`;
  return r;
}

// num prints a weight or score without trailing zeros (1, 0.5, 2.35), as plain output does.
export function num(x) { return String(Math.round(x * 1e6) / 1e6); }
