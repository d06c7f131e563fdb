// End-to-end check of the dashboard in Debian's chromium, driven by playwright-core.
//   NODE_PATH=.ci/npm/node_modules node internal/web/e2e/browser.mjs 'http://127.0.0.1:PORT/?token=T' shot.png [EMPTY_URL]
// It opens the dashboard, starts the demo through the form, waits for the final answer,
// saves a screenshot, then checks that the session is listed and that its replay shows the
// same answer. With EMPTY_URL, a server with no team yet: its run form must point to the setup
// wizard instead of offering to run. Any page error or failed request fails the run.
import { createRequire } from 'node:module';
import assert from 'node:assert/strict';

const require = createRequire(import.meta.url); // resolves through NODE_PATH
const { chromium } = require('playwright-core');

const [url, shot, emptyURL] = process.argv.slice(2);
assert.ok(url && shot, 'usage: browser.mjs URL SCREENSHOT.png');
const question = 'What is the capital of France?';

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run'],
});
const problems = [];
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 1100 } });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  page.on('requestfailed', (r) => {
    // An EventSource closed by the page after its "end" event is not a failure.
    if (!r.url().endsWith('/stream')) problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`);
  });
  page.setDefaultTimeout(60_000);

  await page.goto(url);
  await page.waitForSelector('#sessions');
  await page.click('nav a[data-nav="new"]');
  await page.waitForSelector('#team option[value="demo"]', { state: 'attached' });
  await page.selectOption('#team', 'demo');
  await page.fill('#question', question);
  await page.click('#run-form button[type="submit"]');

  // The live view: agents stream, then the final answer is rendered from Markdown.
  await page.waitForURL(/#\/session\/log_[0-9_]+\/turn_1$/);
  const id = decodeURIComponent(page.url().split('#/session/')[1]);
  await page.waitForSelector('#agents .agent >> nth=2');
  await page.waitForSelector('#session-status.status-completed');
  const finalHTML = await page.innerHTML('#final-answer');
  assert.match(finalHTML, /<strong>Paris<\/strong>/, 'the final answer is not rendered as Markdown');
  assert.match(finalHTML, /<li>/, 'the final answer has no list');
  const finalText = (await page.textContent('#final-answer')).trim();
  assert.ok(finalText.includes('Paris is the capital of France.'), finalText);
  assert.equal(await page.locator('#agents .agent').count(), 3);
  assert.ok(await page.locator('#agents .item.vote').count() >= 3, 'no votes in the columns');
  assert.match(await page.textContent('#agents .agent[data-agent="researcher"] .item.presentation'), /Paris/, 'the presentation is not in the winner\'s column');
  assert.match(await page.textContent('#session-question'), /capital of France/);
  await page.screenshot({ path: shot, fullPage: true });
  await page.click('#tab-votes');
  assert.match(await page.textContent('#pane-votes table.tally'), /agent1 \(researcher\)3/);
  assert.equal(await page.textContent('#pane-votes table.tally tr.won td:first-child'), 'agent1 (researcher)');
  await page.click('#tab-agents');

  // The list shows the session; its replay shows the same final answer.
  await page.click('nav a[data-nav="list"]');
  const row = page.locator(`#sessions tr[data-id="${id}"]`);
  await row.waitFor();
  const rowText = await row.textContent();
  assert.ok(rowText.includes(question) && rowText.includes('demo') && rowText.includes('completed'), rowText);
  await row.locator('a.replay').click();
  await page.waitForURL(/#\/replay\//);
  await page.waitForSelector('#session-status.status-completed');
  assert.equal((await page.textContent('#final-answer')).trim(), finalText);
  // A replay at speed plays the same session again.
  await page.click('.controls a:has-text("16×")');
  await page.waitForSelector('.controls a.active:has-text("16×")');
  await page.waitForSelector('#session-status.status-completed');
  assert.equal((await page.textContent('#final-answer')).trim(), finalText);

  if (emptyURL) {
    // No team yet: the run form says so, links the wizard and cannot be submitted.
    await page.goto(emptyURL);
    await page.waitForSelector('#sessions');
    await page.click('nav a[data-nav="new"]');
    await page.waitForSelector('#run-form .error:not([hidden])');
    assert.match(await page.textContent('#run-form .error'), /No team yet: build one first\./);
    assert.ok(await page.isDisabled('#run-form button[type="submit"]'), 'the run button works without a team');
    await page.click('#run-form .error a[href="#/setup"]');
    await page.waitForURL(/#\/setup/);
  }

  assert.deepEqual(problems, []);
  console.log(JSON.stringify({ id, final: finalText.slice(0, 80), screenshot: shot }));
} finally {
  await browser.close();
}
