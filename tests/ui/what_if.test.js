// The pool page's "What if" form (web/src/what_if.js) in headless Chromium against the example
// cluster (tests/scripts/ui_browser.sh sets the environment): a cpu limit of pool prod over
// the cluster's past runs as a what-if task, the page shows the task's answer (every figure of
// the pool and user tables as get_what_if gives it, read here with plain HTTP) and links its
// report, which the scheduler serves; a bad value is refused naming the key and the value.
'use strict';
const { chromium } = require('playwright-core');

const URL_ = process.env.PS_URL, TOKEN = process.env.PS_TOKEN;
let failed = 0, passed = 0;
function check(name, ok, detail) {
  if (ok) { passed++; console.log(`ok   what-if: ${name}`); } else { failed++; console.log(`FAIL what-if: ${name}: ${detail || ''}`); }
}

async function v1(command, body) {
  const r = await fetch(`${URL_}/api/v1/${command}`, { method: 'POST', headers: { Authorization: `OAuth ${TOKEN}` }, body: JSON.stringify(body) });
  if (!r.ok) throw new Error(`${command}: HTTP ${r.status} ${await r.text()}`);
  return r.json();
}

// The cells of a table of the answer: {name: {key: [recorded, changed]}}.
const cells = (page, what) => page.$$eval(`#what-if-${what}s tbody tr`, (rows, w) => Object.fromEntries(rows.map((r) => [r.dataset[w],
  Object.fromEntries([...r.querySelectorAll('td[data-key]')].map((td) => [td.dataset.key, [td.dataset.recorded, td.dataset.changed]]))])), what);

function expected(recorded, changed) {
  const keys = ['wait_p50_ms', 'wait_p95_ms', 'mean_usage', 'preempted_jobs', 'jobs_completed'];
  const names = [...new Set([...Object.keys(recorded), ...Object.keys(changed)])];
  return Object.fromEntries(names.map((n) => [n, Object.fromEntries(keys.map((k) => [k,
    [String((recorded[n] || {})[k] ?? ''), String((changed[n] || {})[k] ?? '')]]))]));
}

(async () => {
  const browser = await chromium.launch({ executablePath: process.env.PS_CHROMIUM, args: ['--no-sandbox'] });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on('pageerror', (e) => check('no script error', false, e.message));
  try {
    await page.goto(`${URL_}/`);
    await page.waitForSelector('#login:not([hidden])');
    // A page asked for while the login still answers renders once (app.js show): the login's
    // own request for it adds nothing, so what is typed into its form stays. The login's
    // get_current_user is held until the page's render has begun (it waits for the same reply).
    let releaseLogin;
    const loginHeld = new Promise((r) => { releaseLogin = r; });
    await page.route('**/api/v4/get_current_user**', async (route) => { await loginHeld; return route.fallback(); });
    await page.fill('#token', TOKEN);
    await page.click('#login button[type=submit]');
    await page.goto(`${URL_}/ui/#/pool/physical/prod`);
    await page.waitForSelector('nav a.on[data-page="pools"]');   // the pool page's render began
    releaseLogin();
    await page.waitForSelector('#what-if');
    await page.fill('#what-if-since', '3h');
    const poolRenders = () => page.evaluate(() => window.psTimings.filter((t) => t.page === 'pool' && t.total_ms !== undefined).length);
    const end = Date.now() + 3000;
    while (Date.now() < end && await poolRenders() < 2) await page.waitForTimeout(100);
    const renders = await poolRenders(), since = await page.inputValue('#what-if-since');
    check('a page asked for during the login renders once and keeps what was typed', renders === 1 && since === '3h',
      `${renders} renders, since ${since}`);
    await page.unroute('**/api/v4/get_current_user**');
    await page.goto(`${URL_}/ui/#/pool/physical/prod`);
    await page.waitForSelector('#what-if');
    // a bad value: refused naming the key and the value, nothing runs
    await page.selectOption('#what-if-attr', 'weight');
    await page.fill('#what-if-value', '-1');
    await page.fill('#what-if-since', '1h');
    await page.click('#what-if-run');
    await page.waitForSelector('#what-if-error', { timeout: 30000 });
    const refusal = await page.textContent('#what-if-error');
    check('a bad value is refused naming key and value', refusal.includes('weight') && refusal.includes('-1'), refusal);
    // prod limited to one core over the last hour: its four one-core jobs run one at a time
    await page.selectOption('#what-if-attr', 'resource_limits');
    await page.fill('#what-if-value', '{"cpu": 1}');
    // while start_what_if reads the record (held here until seen), the page says so
    let release;
    const held = new Promise((r) => { release = r; });
    await page.route('**/start_what_if', async (route) => { await held; return route.fallback(); });
    await page.click('#what-if-run');
    const starting = await page.waitForSelector('#what-if-starting', { timeout: 10000 }).then((e) => e.textContent()).catch((e) => `${e}`);
    check('the page says the record is being read until the task starts', starting.includes('Reading the cluster'), starting);
    release();
    await page.unroute('**/start_what_if');
    await page.waitForSelector('#what-if-answer', { timeout: 90000 });
    const href = await page.getAttribute('#what-if-report', 'href');
    const id = (href.match(/^\/what-if\/([0-9a-f]{32})\/report\.html$/) || [])[1];
    check('the report is linked', !!id, href);
    const task = await v1('get_what_if', { id });
    check('the task limited prod', JSON.stringify(task.result.changes) === JSON.stringify([['//sys/pool_trees/physical/prod/@resource_limits', { cpu: 1 }]]),
      JSON.stringify(task.result.changes));
    check('the change shows (prod\'s figures differ)', JSON.stringify(task.result.recorded.pools.prod) !== JSON.stringify(task.result.changed.pools.prod),
      JSON.stringify(task.result.recorded.pools.prod));
    // the cluster is younger than the hour asked: the window starts where the event log's
    // record does, and the page says so
    const clipped = await page.$('#what-if-window-start');
    check('the window starts where the event log\'s record does, said on the page',
      task.result.requested_since < task.result.since && clipped !== null,
      `${task.result.requested_since} ${task.result.since} ${clipped}`);
    const pools = await cells(page, 'pool'), users = await cells(page, 'user');
    const wantPools = expected(task.result.recorded.pools, task.result.changed.pools);
    const wantUsers = expected(task.result.recorded.users, task.result.changed.users);
    check('the pool table is the task\'s answer', Object.keys(wantPools).includes('prod') && JSON.stringify(pools) === JSON.stringify(Object.fromEntries(Object.keys(pools).sort().map((k) => [k, wantPools[k]]))) &&
      Object.keys(pools).length === Object.keys(wantPools).length, `${JSON.stringify(pools)} vs ${JSON.stringify(wantPools)}`);
    check('the user table is the task\'s answer', Object.keys(users).length === Object.keys(wantUsers).length && Object.keys(users).length > 0 &&
      Object.keys(users).every((u) => JSON.stringify(users[u]) === JSON.stringify(wantUsers[u])), `${JSON.stringify(users)} vs ${JSON.stringify(wantUsers)}`);
    const report = await page.context().request.get(`${URL_}${href}`);
    check('the report page is served', report.status() === 200 && (await report.text()).includes('What if'), report.status());
  } catch (e) {
    check('the what-if form', false, e.stack);
  } finally {
    await browser.close();
  }
  console.log(`what-if: ${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
})();
