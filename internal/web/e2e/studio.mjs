// End-to-end check of the studio in Debian's chromium, driven by playwright-core.
//   NODE_PATH=.ci/npm/node_modules node internal/web/e2e/studio.mjs 'http://127.0.0.1:PORT/?token=T' SHOTS_DIR
// The server (studio_e2e_test.go) serves studio4 (four scripted agents), steer (an agent that
// answers then deliberates forever, and one that never answers) and perm (a session that asks
// one permission). Prints {studio, wizard, steer, answers, votes, arrows} as its last line.
import { createRequire } from 'node:module';
import assert from 'node:assert/strict';
import path from 'node:path';

const require = createRequire(import.meta.url);
const { chromium } = require('playwright-core');

const [url, shots] = process.argv.slice(2);
assert.ok(url && shots, 'usage: studio.mjs URL SHOTS_DIR');
const base = url.split('?')[0];
const shot = (name) => path.join(shots, name);

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});
const problems = [];
const watch = (page) => {
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    // The sandboxed preview refusing the workspace page's script is the point of the sandbox.
    if (m.type() === 'error' && !/Blocked script execution .* sandboxed/.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  page.on('requestfailed', (r) => { if (!r.url().endsWith('/stream') && !r.url().includes('as=preview')) problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`); });
  page.on('dialog', (d) => d.accept()); // the confirmations of Stop and Stop agent
  page.setDefaultTimeout(30_000);
};

async function startRun(page, team, question) {
  await page.goto(`${base}#/new?team=${team}`);
  await page.waitForSelector(`#team option[value="${team}"]`, { state: 'attached' });
  assert.equal(await page.inputValue('#team'), team, '?team= preselects the team');
  await page.fill('#question', question);
  await page.press('#question', 'Control+Enter'); // Ctrl+Enter submits
  await page.waitForURL(/#\/session\/log_[0-9_]+\/turn_1$/);
  return decodeURIComponent(page.url().split('#/session/')[1]);
}

async function events(page, id) {
  const text = await page.evaluate(async (p) => (await fetch(p)).text(), `/api/sessions/${id}/events`);
  return text.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
}

const out = {};
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
  watch(page);
  await page.goto(url); // sets the cookie and drops the token from the address
  await page.waitForSelector('#sessions');

  // 1. A 4-agent session whose answers are new_answer tool calls.
  const id = await startRun(page, 'studio4', 'What is the answer?');
  out.studio = id;
  await page.waitForSelector('#session-status.status-completed');
  const evs = await events(page, id);
  const answers = evs.filter((e) => e.type === 'answer_submitted');
  const votes = evs.filter((e) => e.type === 'vote_cast' || e.type === 'vote_ignored');
  for (const a of answers) {
    const item = page.locator(`#agents .agent[data-agent="${a.data.agent}"] .item.answer[data-label="${a.data.label}"] .answer-text`);
    assert.ok((await item.textContent()).includes(a.data.content.slice(0, 40)), `answer ${a.data.label} is not in ${a.data.agent}'s column`);
  }
  // Stale votes: the ones an answer invalidated, and the ones cast on an old answer set.
  const invalidated = new Set();
  let stale = 0;
  for (const e of evs) {
    if (e.type === 'answer_submitted') for (const v of e.data.invalidated || []) if (invalidated.has(v)) { stale++; invalidated.delete(v); }
    if (e.type === 'vote_cast') invalidated.add(e.data.agent);
    if (e.type === 'vote_ignored') stale++;
  }
  assert.ok(stale > 0, 'the fixture has no stale vote');
  const trace = evs.filter((e) => /answer_submitted|vote_cast|vote_ignored|agent_dead/.test(e.type))
    .map((e) => `${e.seq} ${e.type} ${e.data.agent} ${e.data.label || e.data.answer_label || e.data.target_label || ''} ${JSON.stringify(e.data.invalidated || [])}`).join('\n');
  assert.equal(await page.locator('#agents .item.vote.stale').count(), stale, `stale votes in the columns:\n${trace}`);
  assert.match(await page.textContent('#final-answer'), /42/);
  assert.match(await page.textContent('#winner'), /critic/);
  await page.waitForSelector('#artifacts .chip');
  await page.waitForSelector('#artifacts iframe.preview-frame');
  assert.equal(await page.getAttribute('#artifacts iframe.preview-frame', 'sandbox'), '', 'the HTML artifact is sandboxed, scripts off');
  await page.screenshot({ path: shot('session-agents.png'), fullPage: true });

  // The timeline: a node per answer, vote and final; arrows answer -> seen answers, vote -> answer.
  await page.keyboard.press('t');
  await page.waitForSelector('#pane-timeline svg.timeline');
  assert.equal(await page.getAttribute('#tab-timeline', 'aria-selected'), 'true', 'the t key opens the timeline');
  assert.equal(await page.locator('svg .node[data-kind="answer"]').count(), answers.length);
  assert.equal(await page.locator('svg .node[data-kind="vote"]').count(), votes.length);
  assert.equal(await page.locator('svg .node[data-kind="final"]').count(), 1);
  assert.equal(await page.locator('svg .arrow[data-kind="vote"]').count(), votes.length);
  assert.equal(await page.locator('svg .node.vote.stale').count(), stale);
  // Context arrows, from the log: each answer to the newest answer of every agent its turn listed.
  let ctx = 0;
  const seen = {};
  const latest = {};
  const labelOf = Object.fromEntries(evs[0].data.agents.map((a) => [a.label, a.id]));
  for (const e of evs) {
    if (e.type === 'turn_started') seen[e.data.agent] = (e.data.available || []).map((l) => latest[labelOf[l]]).filter(Boolean);
    if (e.type === 'answer_submitted') {
      ctx += (seen[e.data.agent] || []).filter((l) => l !== e.data.label).length;
      latest[e.data.agent] = e.data.label;
    }
  }
  assert.equal(await page.locator('svg .arrow[data-kind="context"]').count(), ctx, 'context arrows');
  out.answers = await page.locator('svg .node[data-kind="answer"]').count();
  out.votes = await page.locator('svg .node[data-kind="vote"]').count();
  out.arrows = await page.locator('svg .arrow').count();
  await page.locator('#pane-timeline').screenshot({ path: shot('session-timeline.png') });
  // A node opens with Enter; Esc closes the dialog.
  const winLabel = evs.find((e) => e.type === 'coordination_ended').data.answer_label;
  await page.focus(`svg .node[data-kind="answer"][data-key="${winLabel}"]`);
  await page.keyboard.press('Enter');
  await page.waitForSelector('dialog.modal[open]');
  assert.ok((await page.textContent('dialog.modal #answer-detail')).includes('checked against every other answer'));
  await page.keyboard.press('Escape');
  await page.waitForSelector('dialog.modal', { state: 'detached' });

  // Answers: versions and diffs.
  await page.keyboard.press('a');
  await page.click('#answer-list button[data-label="agent2.2"]');
  await page.click('#pane-answers button[data-diff="prev"]');
  await page.waitForSelector('#pane-answers .diff .diff-line.add');
  await page.locator('#pane-answers').screenshot({ path: shot('answers.png') });
  // Votes: reasons and staleness.
  await page.keyboard.press('v');
  await page.waitForSelector('#votes-table tbody tr'); // the key's pane draws on its next frame
  assert.equal(await page.locator('#votes-table tbody tr').count(), votes.length);
  assert.equal(await page.locator('#votes-table tbody tr.stale').count(), stale);
  assert.ok((await page.textContent('#votes-table')).includes("Mine is the most complete after the improvement."));
  await page.locator('#pane-votes').screenshot({ path: shot('votes.png') });
  // Files: the file the winner wrote, highlighted source and a download link.
  await page.keyboard.press('w');
  await page.click('button.file[data-path="final/critic/workspace/review.md"]');
  await page.waitForSelector('#file-view .markdown h1');
  assert.match(await page.textContent('#file-view'), /Every claim was checked/);
  assert.ok((await page.getAttribute('#file-view a[download]', 'href')).includes('download=1'));
  // The same file in the workspace snapshot of each of the critic's answers, to diff against.
  await page.selectOption('#file-view select.compare', 'snapshots/agent2.1/review.md');
  await page.waitForSelector('#file-view .diff-head');
  await page.click('button.file[data-path="final/critic/answer.txt"]');
  await page.selectOption('#file-view select.compare', { index: 1 });
  await page.waitForSelector('#file-view .diff');
  await page.waitForSelector('#file-view select.compare');
  await page.locator('#pane-files').screenshot({ path: shot('files.png') });
  // Cost: a row per agent, the budget, the critical path.
  await page.keyboard.press('c');
  // The cost pane fills from the session's status once fetched: wait for it, not for a clock.
  await page.waitForFunction(() => document.querySelectorAll('#cost tr.agent-row').length >= 4);
  assert.equal(await page.locator('#cost tr.agent-row').count(), 4);
  assert.match(await page.textContent('#cost'), /Budget: \$0(\.0+)? of \$2\.00/);
  // The critical path is the server's (massgen logs words it the same): it comes with a fetch.
  await page.waitForFunction(() => document.querySelectorAll('#critical-path li').length >= 2);
  assert.match(await page.textContent('#critical-summary'), /critical path [0-9.]+s over \d+ of \d+ calls: .* at \+[0-9.]+s/);
  await page.locator('#pane-cost').screenshot({ path: shot('cost.png') });
  // Keyboard: arrows move between tabs, 1-9 focus a column, ? shows the keys.
  await page.focus('#tab-cost');
  await page.keyboard.press('ArrowLeft');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'tab-files');
  await page.keyboard.press('Home');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'tab-agents');
  await page.keyboard.press('3');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.agent), 'scout');
  await page.keyboard.press('?');
  await page.waitForSelector('dialog.modal[open] table.keys');
  await page.keyboard.press('Escape');

  // 2. A phone: nothing wider than the screen, the list included.
  const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  watch(phone);
  await phone.goto(url);
  await phone.waitForSelector('#sessions tr[data-id]');
  const overflow = () => phone.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(await overflow() <= 1, `the list is ${await overflow()} px wider than the phone`);
  await phone.screenshot({ path: shot('mobile-list.png'), fullPage: true });
  await phone.goto(`${base}#/replay/${id}`);
  await phone.waitForSelector('#session-status.status-completed');
  assert.ok(await overflow() <= 1, `the session page is ${await overflow()} px wider than the phone`);
  assert.equal(await phone.textContent('#replay-tag'), 'replay');
  await phone.screenshot({ path: shot('mobile-session.png'), fullPage: true });
  await phone.close();

  // 3. The wizard builds a scripted team, validates it, saves it, and it runs.
  await page.goto(`${base}#/setup`);
  await page.waitForSelector('#wiz-provider option[value="scripted"]', { state: 'attached' });
  await page.selectOption('#wiz-provider', 'scripted');
  await page.fill('#wiz-count', '2');
  await page.fill('#wiz-agents textarea >> nth=0', 'You are terse.');
  await page.check('#wiz-tool-workspace');
  assert.match(await page.inputValue('#wiz-yaml'), /system_message: "You are terse\."/);
  await page.click('#wiz-validate');
  await page.waitForSelector('#wiz-valid.ok');
  await page.fill('#wiz-name', 'wizard_team');
  await page.click('#wiz-save');
  await page.waitForSelector('#wiz-run');
  await page.screenshot({ path: shot('wizard.png'), fullPage: true });
  await page.click('#config-picker button[data-example="demo"]');
  await page.waitForFunction(() => /offline demo/.test(document.querySelector('#wiz-yaml').value));
  await page.click('#wiz-run');
  await page.waitForURL(/team=wizard_team/);
  out.wizard = await startRun(page, 'wizard_team', 'Say hello.');
  await page.waitForSelector('#session-status.status-completed');

  // 4. Steering: a message, stop one agent, Answer now; then stop a whole session.
  const sid = await startRun(page, 'steer', 'Capital of France?');
  await page.waitForSelector('#agents .agent[data-agent="quick"] .item.answer');
  await page.fill('#steer-message', 'Say it plainly.');
  await page.press('#steer-message', 'Control+Enter');
  await page.waitForFunction(() => /1 message sent/.test(document.querySelector('#steer')?.textContent || ''));
  await page.click('#agents .agent[data-agent="slow"] button:has-text("Stop agent")');
  await page.waitForSelector('#agents .agent[data-agent="slow"] .badge.status-stopped');
  await page.screenshot({ path: shot('steer.png'), fullPage: true });
  await page.click('#answer-now');
  await page.waitForSelector('#session-status.status-completed');
  assert.match(await page.textContent('#winner'), /quick.*Answer now/);
  assert.equal((await page.textContent('#final-answer')).trim(), 'Paris.');
  assert.ok((await events(page, sid)).some((e) => e.type === 'coordination_ended' && e.data.reason === 'answer_now'));
  out.steer = await startRun(page, 'steer', 'Capital of Spain?');
  await page.waitForSelector('#agents .agent[data-agent="quick"] .item.answer');
  await page.click('#stop-session');
  await page.waitForSelector('#session-status.status-interrupted');
  await page.waitForSelector('#agents .agent[data-agent="slow"] .badge.status-interrupted');

  // 5. A permission ask, answered from the page with the permission engine's contract.
  let decided = null;
  await page.route('**/api/sessions/*/*/permissions/*', async (route) => {
    decided = { url: route.request().url(), body: route.request().postDataJSON() };
    await route.fulfill({ status: 202, contentType: 'application/json', body: '{"status":"decided"}' });
  });
  await startRun(page, 'perm', 'Clean the build folder.');
  await page.waitForSelector('#permission-asks .ask[data-ask="ask-1"]');
  assert.match(await page.textContent('#permission-asks'), /execute_command rm -rf build\//);
  assert.match(await page.textContent('#agents .item.permission'), /ask: execute_command rm \*/);
  await page.screenshot({ path: shot('permission.png'), fullPage: true });
  await page.click('#permission-asks .ask button:has-text("Allow")');
  await page.waitForFunction(() => /Allowed/.test(document.querySelector('#steer').textContent));
  assert.ok(decided && decided.url.endsWith('/permissions/ask-1'), JSON.stringify(decided));
  assert.deepEqual(decided.body, { decision: 'allow' });
  await page.click('#stop-session');
  await page.waitForSelector('#session-status.status-interrupted');

  assert.deepEqual(problems, []);
  console.log(JSON.stringify(out));
} finally {
  await browser.close();
}
