// The "Why this answer won" panel and the Memory page in Debian's chromium (playwright-core).
//   NODE_PATH=.ci/npm/node_modules node internal/web/e2e/why_memory.mjs 'http://127.0.0.1:PORT/?token=T' SESSION SHOTS_DIR
// The server (why_memory_e2e_test.go) has one finished session under confidence weighting,
// whose winner kept filesystem memory, and a memory store of three facts, one holding markup.
// Checked: the panel's rule, tally, weights, dissent (its reason as text) and verifiers, at
// 1440 and 390 px; the memory files; the Memory page lists, searches, filters and forgets
// (through the confirm dialog), showing markup as text; nothing widens a 390 px page.
import { createRequire } from 'node:module';
import assert from 'node:assert/strict';
import path from 'node:path';

const require = createRequire(import.meta.url);
const { chromium } = require('playwright-core');

const [url, session, shots] = process.argv.slice(2);
assert.ok(url && session && shots, 'usage: why_memory.mjs URL SESSION SHOTS_DIR');
const base = url.split('?')[0];
const shot = (name) => path.join(shots, name);

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});
const problems = [];
const watch = (page) => {
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  page.on('requestfailed', (r) => { if (!r.url().endsWith('/stream')) problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`); });
  page.on('dialog', (d) => d.accept());
  page.setDefaultTimeout(30_000);
};
const text = (page, sel) => page.textContent(sel).then((t) => t.replace(/\s+/g, ' ').trim());
const out = {};
try {
  for (const [name, viewport] of [['wide', { width: 1440, height: 1000 }], ['phone', { width: 390, height: 844 }]]) {
    const page = await browser.newPage({ viewport, isMobile: name === 'phone' });
    watch(page);
    await page.goto(url);
    await page.goto(`${base}#/replay/${session}`);
    await page.waitForSelector('#why-panel');
    assert.match(await text(page, '#why-rule'), /^agent1 won: highest score: each vote counts its voter's weight times the confidence it stated \(0\.5 when it stated none\)\.$/);
    const rows = await page.$$eval('#why-tally > li', (ls) => ls.map((l) => l.querySelector('.why-head').textContent.replace(/\s+/g, ' ').trim()));
    assert.deepEqual(rows, ["agent1.1 (agent1) · 2 votes · score 2.1 · its author's confidence 0.9winner", "agent2.1 (agent2) · 1 vote · score 0.45 · its author's confidence 0.4"]);
    assert.match(await text(page, '#why-tally li[data-answer="agent1.1"] .why-ballots'), /agent1 for agent1\.1 \(weight 2, confidence 0\.8, worth 1\.6\)mine is complete/);
    // The dead voter's vote is not counted; the dissent is carol's, its markup shown as text.
    assert.equal(await text(page, '#why-dissent'), 'Strongest dissent: agent3 for agent2.1 (weight 0.5, confidence 0.9, worth 0.45)shorter <b>and</b> right');
    assert.equal(await page.locator('#why-dissent b').count(), 0, 'a reason was rendered as HTML');
    assert.equal(await text(page, '#why-verifiers'), 'Verifiers: none ran.');
    await page.waitForSelector('#memory-files button.chip');
    out.memoryFiles = await page.$$eval('#memory-files .artifact-list', (ds) => ds.map((d) => `${d.dataset.tier}:${[...d.querySelectorAll('button')].map((b) => b.textContent).join(',')}`));
    await page.click('#memory-files button.chip');
    await page.waitForSelector('#memory-files .artifact-body :text("short answers")');
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= viewport.width, `the session page is ${width} px wide at ${viewport.width} px`);
    await page.locator('#final-box').screenshot({ path: shot(`why-${name}.png`) });
    await page.close();
  }

  const page = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true });
  watch(page);
  await page.goto(url);
  await page.goto(`${base}#/memory`);
  await page.waitForSelector('#mem-list li.mem');
  assert.equal(await page.getAttribute('nav a[data-nav="memory"]', 'class'), 'active');
  const listed = () => page.$$eval('#mem-list li.mem', (ls) => ls.map((l) => l.dataset.id));
  assert.deepEqual(await listed(), ['mem_cat', 'mem_dog', 'mem_html']);
  assert.match(await text(page, '#mem-info'), /^3 memories · store /);
  assert.equal(await text(page, '#mem-list li[data-id="mem_html"] .mem-text'), '<img src=x onerror="window.pwned=1"> the cat likes fish');
  assert.equal(await page.locator('#mem-list img').count(), 0, 'a memory was rendered as HTML');
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= 390, `the Memory page is ${width} px wide on a 390 px phone`);
  await page.screenshot({ path: shot('memory-phone.png'), fullPage: true });
  // Search by words, best first.
  await page.fill('#mem-q', 'cat fish');
  await page.click('#mem-form button[type="submit"]');
  await page.waitForFunction(() => document.querySelector('#mem-list li.mem')?.dataset.id === 'mem_html');
  assert.deepEqual(await listed(), ['mem_html', 'mem_cat']);
  // A filter, then forget one memory through its button (the confirm is accepted).
  await page.fill('#mem-q', '');
  await page.fill('#mem-agent', 'b');
  await page.click('#mem-form button[type="submit"]');
  await page.waitForFunction(() => [...document.querySelectorAll('#mem-list li.mem')].map((l) => l.dataset.id).join() === 'mem_dog,mem_html');
  await page.click('#mem-list li[data-id="mem_dog"] .mem-forget');
  await page.waitForFunction(() => !document.querySelector('#mem-list li[data-id="mem_dog"]'));
  assert.deepEqual(await listed(), ['mem_html']);
  out.left = (await page.evaluate(async () => (await fetch('/api/memory')).json())).memories.map((m) => m.id);
  assert.deepEqual(problems, []);
  console.log(JSON.stringify(out));
} finally {
  await browser.close();
}
