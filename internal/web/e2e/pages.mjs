// Checks of single studio pages in Debian's chromium, driven by playwright-core.
//   NODE_PATH=.ci/npm/node_modules node internal/web/e2e/pages.mjs 'http://127.0.0.1:PORT/?token=T' SHOTS_DIR
// The server (pages_e2e_test.go) serves the team "pages": a writer whose workspace gets a file
// and an idle agent whose workspace stays empty. Checked: the Files tab leaves out empty
// folders; a follow-up turn and the turn before it link each other; at 390x844 the session
// list and the session tabs fit the screen with every column and tab visible; the setup
// wizard says what a team name may be and lists a team it saved. Prints {turn1, turn2}.
import { createRequire } from 'node:module';
import assert from 'node:assert/strict';
import path from 'node:path';

const require = createRequire(import.meta.url);
const { chromium } = require('playwright-core');

const [url, shots] = process.argv.slice(2);
assert.ok(url && shots, 'usage: pages.mjs URL SHOTS_DIR');
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
  page.setDefaultTimeout(30_000);
};
const turnOf = (page) => decodeURIComponent(page.url().split(/#\/(?:session|replay)\//)[1]);

const out = {};
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
  watch(page);
  await page.goto(url); // sets the cookie
  await page.waitForSelector('#sessions');

  // 1. A session; its Files tab lists no empty folder.
  await page.goto(`${base}#/new?team=pages`);
  await page.waitForSelector('#team option[value="pages"]', { state: 'attached' });
  await page.fill('#question', 'What is in the notes?');
  await page.press('#question', 'Control+Enter');
  await page.waitForURL(/#\/session\/log_[0-9_]+\/turn_1$/);
  out.turn1 = turnOf(page);
  await page.waitForSelector('#session-status.status-completed');
  const { entries } = await page.evaluate(async (p) => (await fetch(p)).json(), `/api/sessions/${out.turn1}/files`);
  const files = entries.filter((e) => !e.dir).map((e) => e.path);
  const emptyDirs = entries.filter((e) => e.dir && !files.some((f) => f.startsWith(`${e.path}/`))).map((e) => e.path);
  assert.ok(emptyDirs.some((d) => /^snapshots\/agent\d+\.\d+$/.test(d)), `the fixture has no empty snapshot folder: ${JSON.stringify(entries)}`);
  assert.ok(files.some((f) => f.startsWith('snapshots/')), 'the fixture has no snapshot with a file');
  await page.keyboard.press('w');
  await page.waitForSelector('#files button.file');
  const shownEmpty = await page.$$eval('#files details', (ds) => ds.filter((d) => !d.querySelector('button.file')).map((d) => d.querySelector('summary').textContent));
  assert.deepEqual(shownEmpty, [], 'the Files tab lists folders with nothing to open');
  assert.match(await page.textContent('#files-count'), new RegExp(`${emptyDirs.length} empty folders? not shown`));
  await page.locator('#pane-files').screenshot({ path: shot('files-no-empty.png') });

  // 2. A follow-up is turn 2; it links turn 1, and turn 1 links it.
  assert.ok(await page.isHidden('#session-turns'), 'a session of one turn shows turn links');
  await page.fill('#followup-question', 'And in one word?');
  await page.press('#followup-question', 'Control+Enter');
  await page.waitForURL(/#\/session\/log_[0-9_]+\/turn_2$/);
  out.turn2 = turnOf(page);
  await page.waitForSelector('#session-status.status-completed');
  await page.waitForSelector('#session-turns a[data-turn="1"]');
  assert.equal(await page.textContent('#session-turns [aria-current="page"]'), 'turn 2');
  await page.screenshot({ path: shot('turn2.png') });
  await page.click('#session-turns a[data-turn="1"]');
  await page.waitForURL((u) => u.hash === `#/session/${out.turn1}`);
  await page.waitForSelector('#session-turns a[data-turn="2"]');
  assert.equal(await page.textContent('#session-turns [aria-current="page"]'), 'turn 1');
  // The replay of a turn links the other turns' replays.
  await page.goto(`${base}#/replay/${out.turn2}`);
  assert.equal(await page.getAttribute('#session-turns a[data-turn="1"]', 'href'), `#/replay/${out.turn1}`);

  // 3. A phone: nothing wider than the screen, every column of the list and every tab visible.
  const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  watch(phone);
  await phone.goto(url);
  await phone.waitForSelector(`#sessions tr[data-id="${out.turn2}"]`);
  const overflow = () => phone.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(await overflow() <= 390, `the list is ${await overflow()} px wide on a 390 px phone`);
  const columns = await phone.evaluate((id) => {
    const heads = [...document.querySelectorAll('#sessions thead th')].map((th) => th.textContent).filter(Boolean);
    const row = document.querySelector(`#sessions tr[data-id="${id}"]`);
    return heads.map((h) => {
      const head = [...document.querySelectorAll('#sessions thead th')].find((th) => th.textContent === h).getBoundingClientRect();
      const td = row.querySelector(`td[data-label="${h}"]`);
      const r = td?.getBoundingClientRect();
      const label = td ? getComputedStyle(td, '::before').content : '';
      return { h, head: { left: head.left, right: head.right, w: head.width }, cell: r && { left: r.left, right: r.right, w: r.width, h: r.height }, label };
    });
  }, out.turn2);
  for (const c of columns) {
    // A column is shown as its header in the viewport, or as its cell with its name.
    const headShown = c.head.w > 0 && c.head.left >= 0 && c.head.right <= 390;
    const cellShown = c.cell && c.cell.w > 0 && c.cell.h > 0 && c.cell.left >= 0 && c.cell.right <= 390;
    const named = headShown || c.h === 'Question' || c.label.includes(c.h);
    assert.ok(cellShown && named, `column ${c.h} is not visible on the phone: ${JSON.stringify(c)}`);
  }
  await phone.screenshot({ path: shot('mobile-list.png'), fullPage: true });
  await phone.goto(`${base}#/replay/${out.turn2}`);
  await phone.waitForSelector('#session-status.status-completed');
  assert.ok(await overflow() <= 390, `the session page is ${await overflow()} px wide on a 390 px phone`);
  // Each tab is on the screen and is what the screen shows at its centre (not clipped, not
  // scrolled out of a row).
  const tabs = await phone.evaluate(() => {
    const bar = document.querySelector('[role="tablist"]');
    window.scrollTo(0, bar.getBoundingClientRect().top + window.scrollY - 200);
    return [...bar.querySelectorAll('[role="tab"]')].map((t) => {
      const r = t.getBoundingClientRect();
      const x = r.left + r.width / 2;
      const y = r.top + r.height / 2;
      const hit = x >= 0 && x <= innerWidth && y >= 0 && y <= innerHeight ? document.elementFromPoint(x, y) : null;
      return { id: t.id, left: r.left, right: r.right, shown: !!hit && t.contains(hit) };
    });
  });
  assert.equal(tabs.length, 6);
  for (const t of tabs) assert.ok(t.shown && t.left >= 0 && t.right <= 390, `tab ${t.id} is off the phone's screen: ${JSON.stringify(t)}`);
  await phone.screenshot({ path: shot('mobile-session.png') });
  // Every tab's pane fits too: wide tables and the timeline scroll inside their own box.
  for (const t of tabs) {
    await phone.click(`#${t.id}`);
    assert.equal(await phone.getAttribute(`#${t.id}`, 'aria-selected'), 'true');
    await phone.waitForFunction((id) => document.querySelector(`#${id.replace('tab-', 'pane-')}`).childElementCount > 0, t.id);
    if (t.id === 'tab-cost') await phone.waitForSelector('#cost tr.agent-row');
    assert.ok(await overflow() <= 390, `with ${t.id} open the page is ${await overflow()} px wide on a 390 px phone`);
  }
  await phone.screenshot({ path: shot('mobile-cost.png') });
  await phone.close();

  // 4. The wizard: a bad name says what a name may be; a saved team is listed at once.
  await page.goto(`${base}#/setup`);
  await page.waitForSelector('#wiz-provider option[value="scripted"]', { state: 'attached' });
  await page.waitForSelector('#team-list a:text-is("pages")');
  await page.selectOption('#wiz-provider', 'scripted');
  await page.fill('#wiz-count', '1');
  await page.fill('#wiz-name', 'my team!');
  await page.click('#wiz-save');
  await page.waitForSelector('#wiz-name-rule.error');
  assert.match(await page.textContent('#wiz-name-rule'), /"my team!" is not a team name: use 1 to 64 letters, digits, '\.', '_' or '-'/);
  assert.match(await page.evaluate(() => document.querySelector('#wiz-name').validationMessage), /letters, digits/);
  assert.match(await page.getAttribute('#wiz-name', 'title'), /letters, digits/);
  await page.screenshot({ path: shot('wizard-bad-name.png') });
  assert.equal(await page.locator('#wiz-saved .ok').count(), 0, 'a bad name was saved');
  await page.fill('#wiz-name', 'pages_two');
  await page.waitForSelector('#wiz-name-rule.muted');
  await page.click('#wiz-save');
  await page.waitForSelector('#wiz-run');
  await page.waitForSelector('#team-list a:text-is("pages_two")');
  assert.deepEqual(await page.$$eval('#team-list a', (as) => as.map((a) => a.textContent)).then((t) => t.sort()), ['pages', 'pages_two']);
  await page.screenshot({ path: shot('wizard-saved.png'), fullPage: true });

  assert.deepEqual(problems, []);
  console.log(JSON.stringify(out));
} finally {
  await browser.close();
}
