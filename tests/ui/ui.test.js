// The web UI in headless Chromium against a real scheduler with the example cluster
// (tests/scripts/ui_browser.sh sets the environment). Every expected value comes from the API
// read here with plain HTTP, or from the example tree's numbers worked out by hand below, never
// from the page under test. Screenshots of each page go to PS_SCREENSHOTS.
'use strict';
const { chromium } = require('playwright-core');
const fs = require('fs');
const path = require('path');
const { replaceGet, ytParams, GET_ROUTE } = require('./ytparams.js');

const URL_ = process.env.PS_URL, TOKEN = process.env.PS_TOKEN, USER_TOKEN = process.env.PS_USER_TOKEN;
const SHOTS = process.env.PS_SCREENSHOTS;
const ORCHID = '//sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree';
let failed = 0, passed = 0;

function check(name, ok, detail) {
  if (ok) { passed++; console.log(`ok   ${name}`); } else { failed++; console.log(`FAIL ${name}: ${detail || ''}`); }
}

async function yt(command, params) {
  const q = new URLSearchParams(params);
  const r = await fetch(`${URL_}/api/v4/${command}?${q}`, { headers: { Authorization: `OAuth ${TOKEN}` } });
  if (!r.ok) throw new Error(`${command}: HTTP ${r.status} ${await r.text()}`);
  return r.json();
}
async function v1(command, body, token = TOKEN) {
  const r = await fetch(`${URL_}/api/v1/${command}`, { method: 'POST', headers: { Authorization: `OAuth ${token}` }, body: JSON.stringify(body) });
  if (!r.ok) throw new Error(`${command}: HTTP ${r.status} ${await r.text()}`);
  return r.json();
}
const orchidPools = async (tree) => (await yt('get', { path: `${ORCHID}/${tree}/fair_share_info/pools` })).value;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(what, fn, timeoutMs = 30000) {
  const end = Date.now() + timeoutMs;
  let last;
  while (Date.now() < end) {
    try { last = await fn(); if (last) return last; } catch (e) { last = e; }
    await sleep(250);
  }
  throw new Error(`timed out waiting for ${what}: ${last}`);
}

async function shot(page, name) {
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

// The page's fair share of every pool row: {pool: ratio}.
const pageShares = (page) => page.$$eval('#pools-table tr[data-pool]', (rows) =>
  Object.fromEntries(rows.map((r) => [r.dataset.pool, Number(r.dataset.fairShare)])));

// A virtualised table (#id, rows tagged attr) against the whole order worked out by the test:
// only rows near the viewport are in the DOM and the first of them in order; scrolled to the end,
// the last ones in order with the last in view; scrolled to the middle, the row at the middle of
// the view is the one the order puts there. Leaves the page scrolled to the top.
async function checkWindow(page, tbl, attr, order, what) {
  const key = attr.replace(/^data-/, '').replace(/-(\w)/g, (_, c) => c.toUpperCase());
  const dom = () => page.$$eval(`${tbl} tbody tr[${attr}]`, (rs, k) => rs.map((r) => r.dataset[k]), key);
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.waitForTimeout(200);
  let rows = await dom();
  const total = await page.$eval(tbl, (t) => t.dataset.rows);
  check(`${what}: only rows near the viewport are in the DOM`, rows.length > 20 && rows.length < order.length && total === String(order.length),
    `${rows.length} of ${total} rows (want ${order.length})`);
  check(`${what}: the first rows in order`, JSON.stringify(rows) === JSON.stringify(order.slice(0, rows.length)),
    `${rows.slice(0, 4)} vs ${order.slice(0, 4)}`);
  await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
  await page.waitForTimeout(300);
  rows = await dom();
  const last = order[order.length - 1];
  const lastBox = await page.$eval(`${tbl} tr[${attr}="${last}"]`, (r) => { const b = r.getBoundingClientRect(); return [b.top, b.bottom, innerHeight]; }).catch(() => null);
  check(`${what}, scrolled to the end: the last rows in order, the last one in view`,
    rows.length < order.length && JSON.stringify(rows) === JSON.stringify(order.slice(order.length - rows.length)) && lastBox && lastBox[0] >= 0 && lastBox[1] <= lastBox[2],
    `${rows.length} rows, ${rows.slice(-3)} vs ${order.slice(-3)}; last row at ${lastBox}`);
  await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight / 2));
  await page.waitForTimeout(300);
  const mid = await page.evaluate(([t, a, k]) => {
    const el = document.elementFromPoint(200, innerHeight / 2);
    const tr = el && el.closest(`tr[${a}]`);
    const body = document.querySelector(`${t} tbody`).getBoundingClientRect();
    const [y0, y1] = [...document.querySelectorAll(`${t} tbody tr[${a}]`)].slice(0, 2).map((r) => r.getBoundingClientRect().top);
    return tr && { row: tr.dataset[k], index: Math.floor((innerHeight / 2 - body.top) / (y1 - y0)) };
  }, [tbl, attr, key]);
  check(`${what}, scrolled: the row in the middle of the view is at its place in the order`,
    mid && Math.abs(order.indexOf(mid.row) - mid.index) <= 1, JSON.stringify(mid));
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.waitForTimeout(200);
}

async function login(page, token) {
  await page.goto(`${URL_}/`);
  await page.waitForSelector('#login:not([hidden])');
  await page.fill('#token', token);
  await page.click('#login button[type=submit]');
}

(async () => {
  const browser = await chromium.launch({ executablePath: process.env.PS_CHROMIUM, args: ['--no-sandbox'] });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on('pageerror', (e) => check('no script error on the page', false, e.message));
  // The page's YTsaurus calls go through the official wrapper: its parameter headers.
  const ytCalls = [];
  page.on('request', (r) => { if (r.url().includes('/api/v4/')) ytCalls.push(r.headers()); });
  const gpu = process.env.PS_GPU_OP;
  try {
    // jobs running first, so the pages (and screenshots) show usage
    await until('jobs running in tree physical', async () => (await orchidPools('physical')).prod.usage_ratio > 0, 30000).catch(() => null);
    // / redirects to /ui/, which asks for a token; a wrong one is refused.
    await login(page, 'not-a-token');
    await page.waitForSelector('#login-error:not(:empty)');
    check('GET / lands on /ui/', page.url() === `${URL_}/ui/`, page.url());
    check('a bad token is refused on the login form', /token/i.test(await page.textContent('#login-error')), await page.textContent('#login-error'));
    await page.fill('#token', TOKEN);
    await page.click('#login button[type=submit]');

    // Pools: the example tree with the orchid's fair shares.
    await page.waitForSelector('#pools-table tr[data-pool="prod"]');
    const shown = await pageShares(page);
    const orchid = await orchidPools('physical');
    check('pools page lists the example tree', ['<Root>', 'prod', 'burst', 'relaxed'].every((p) => p in shown), JSON.stringify(shown));
    // The page and the orchid are read moments apart: equal up to one fair share update.
    const near = (a, b) => Math.abs(a - b) < 0.05;
    check('pools page fair shares are the orchid\'s', ['prod', 'burst', 'relaxed'].every((p) => near(shown[p], orchid[p].fair_share_ratio)),
      `page ${JSON.stringify(shown)} orchid ${JSON.stringify(Object.fromEntries(Object.entries(orchid).map(([k, v]) => [k, v.fair_share_ratio])))}`);
    // By hand: 4 cpu in tree physical; prod's strong guarantee cpu=2 and burst's 3 cpu (raised
    // by ui_browser.sh) exceed it (5/4), so both scale by 0.8: prod is guaranteed 2*0.8/4 = 0.4
    // and demands 4 cpu (1.0).
    check('prod has at least its scaled strong guarantee (0.4)', shown.prod >= 0.4 - 1e-6, shown.prod);
    check('top-level fair shares sum to at most the cluster', shown.prod + shown.burst + shown.relaxed <= 1 + 1e-6, JSON.stringify(shown));
    // The tree's guarantees exceed the cluster (burst's raised): the tree's alert is on the page.
    const alerts = (await yt('get', { path: `${ORCHID}/physical/alerts` })).value;
    const alertText = await page.textContent('#tree-alerts');
    check('pools page shows the tree\'s alerts', alerts.length > 0 && alerts.every((a) => alertText.includes(a.message)),
      `${JSON.stringify(alerts.map((a) => a.message))} vs ${alertText}`);
    await shot(page, 'pools');

    // An admin edits prod's weight: the preview shows prod's share rising, saving moves it.
    await page.click('#pools-table tr[data-pool="prod"] a');
    await page.waitForSelector('#edit-value');
    check('an admin sees the edit form on a pool page', !!(await page.$('#edit-save')) && !(await page.$('#edit-readonly')) &&
      / \(admin\)$/.test(await page.textContent('#who')), await page.textContent('#who'));
    const adminAttrs = await page.$$eval('#edit-attr option', (os) => os.map((o) => o.textContent));
    check('an admin may edit every attribute, the ACL too', adminAttrs.includes('acl') && adminAttrs.includes('weight') && !(await page.$('#edit-write-only')),
      JSON.stringify(adminAttrs));
    // the effective ACL: prod sets none; //sys/pool_trees' default ACE (use for users) reaches it
    const effective = (await yt('get', { path: '//sys/pool_trees/physical/prod/@effective_acl' })).value;
    const aclRows = await page.$$eval('#effective-acl tbody tr', (rs) => rs.map((r) => [...r.cells].map((c) => c.textContent.trim())));
    check('the pool page shows the effective ACL with where each ACE is set', effective.length === aclRows.length &&
      aclRows.some((r) => r[0] === 'allow' && r[1] === 'users' && r[2] === 'use' && r[4] === '//sys/pool_trees'), JSON.stringify(aclRows));
    const before = (await orchidPools('physical')).prod;
    await page.fill('#edit-value', '20');
    await page.click('#edit-preview');
    await page.waitForSelector('#dry-run');
    const dryRow = await page.$('#dry-run tr[data-pool="prod"]');
    const dryText = dryRow ? await dryRow.textContent() : '';
    check('the preview shows prod\'s share rising', dryText.includes('▲'), dryText || await page.textContent('#edit-result'));
    await shot(page, 'pool-preview');
    const weightNow = (await yt('get', { path: '//sys/pool_trees/physical/prod/@weight' })).value;
    check('a preview changes nothing', weightNow === 2, weightNow);
    await page.click('#edit-save');
    await page.waitForSelector('#saved');
    check('save sets the weight', (await yt('get', { path: '//sys/pool_trees/physical/prod/@weight' })).value === 20);
    await page.goto(`${URL_}/ui/#/pools/physical`);
    const moved = await until('prod\'s fair share to rise on the pools page', async () => {
      await page.evaluate(() => window.psShow());
      await page.waitForSelector('#pools-table tr[data-pool="prod"]');
      const s = await pageShares(page);
      return s.prod > before.fair_share_ratio + 0.01 ? s : null;
    }, 20000).catch((e) => e);
    check('the pools page shows prod\'s share moved up after the edit', !(moved instanceof Error), `${moved} (before ${before.fair_share_ratio})`);

    // A bad value: the scheduler's refusal, word for word.
    await page.goto(`${URL_}/ui/#/pool/physical/prod`);
    await page.waitForSelector('#edit-value');
    await page.fill('#edit-value', '-1');
    await page.click('#edit-save');
    await page.waitForSelector('#refusal');
    const refusal = await page.textContent('#refusal');
    check('a bad weight shows the refusal', refusal.includes('weight: must be in') && refusal.includes('got -1'), refusal);
    await shot(page, 'pool-refusal');
    check('the refused value was not applied', (await yt('get', { path: '//sys/pool_trees/physical/prod/@weight' })).value === 20);

    // Renders come one at a time, in the order asked (app.js show): a page whose data comes late
    // never replaces a newer one. The pools page's first read is held until the operations page
    // was asked for; with renders run side by side, the pools page would then finish last and
    // cover the operations page.
    {
      let heldSeen, release;
      const seen = new Promise((r) => { heldSeen = r; });
      const gate = new Promise((r) => { release = r; });
      let holding = true;
      await page.route(GET_ROUTE, async (route) => {
        if (!holding || ytParams(route.request().headers()).path !== '//sys/pool_trees') return route.fallback();
        holding = false;
        heldSeen();
        await gate;
        return route.fallback();
      });
      await page.goto(`${URL_}/ui/#/pools/physical`);
      await seen;
      const before = await page.evaluate(() => window.psTimings.filter((t) => t.total_ms !== undefined).length);
      await page.evaluate(() => { location.hash = '#/operations'; });
      await page.waitForTimeout(300);   // room for the operations page to finish first, were it run at once
      release();
      await until('both pages rendered', () => page.evaluate((n) =>
        window.psTimings.filter((t) => t.total_ms !== undefined).length >= n + 2, before), 20000).catch(() => null);
      const done = await page.evaluate((n) => window.psTimings.filter((t) => t.total_ms !== undefined).slice(n).map((t) => t.page), before);
      check('a late page renders before the one asked after it', JSON.stringify(done) === '["pools","operations"]', JSON.stringify(done));
      check('the page asked last is the one shown', !!(await page.$('#ops-table')) && !(await page.$('#pools-table')),
        (await page.innerHTML('#main')).slice(0, 200));
      await page.unroute(GET_ROUTE);
    }

    // Operations list with counters.
    await page.goto(`${URL_}/ui/#/operations`);
    await page.waitForSelector('#ops-table tbody tr:not(.spacer)');
    const opsText = await page.textContent('#main');
    const ops = await yt('list_operations', {});
    check('operations page lists every operation', ops.operations.every((o) => opsText.includes(o.id)), opsText.slice(0, 300));
    check('operations page shows the pool counters', ['prod', 'burst', 'relaxed', 'training'].every((p) => opsText.includes(p)));
    await shot(page, 'operations');

    // A long list: the page's list_operations reply widened to 1,000 operations on its way to the
    // page (Show 1000, the most the page allows). The table keeps only the rows near the viewport
    // in the DOM; the rows in it after a sort and a scroll are checked against the list made here.
    {
      const LIST_OPS = /\/api\/v4\/_?list_operations/;   // the wrapper's v4 listOperations
      const many = Array.from({ length: 1000 }, (_, i) => ({ ...ops.operations[0], id: `big-${String(i).padStart(4, '0')}`,
        user: `u${String((i * 7919) % 1000).padStart(3, '0')}` }));
      await page.route(LIST_OPS, async (route) => {
        const r = await route.fetch();
        const body = await r.json();
        (body.operations ? body : body.value).operations = many;
        await route.fulfill({ response: r, body: JSON.stringify(body) });
      });
      await page.goto(`${URL_}/ui/#/operations?limit=1000`);
      await page.waitForSelector('#ops-table tr[data-op="big-0000"]');
      await checkWindow(page, '#ops-table', 'data-op', many.map((o) => o.id), 'a long operations list in the reply\'s order');
      await page.click('#ops-table th[data-sort="user"]');
      const byUser = [...many].sort((a, b) => (a.user < b.user ? -1 : a.user > b.user ? 1 : 0)).map((o) => o.id);
      await checkWindow(page, '#ops-table', 'data-op', byUser, 'a long operations list sorted by user');
      await page.unroute(LIST_OPS);
    }

    // The gpu operation (CPU reclaim on, idle jobs): its jobs and a reclaimed CPU guarantee.
    await page.goto(`${URL_}/ui/#/operation/${gpu}`);
    const reclaimed = await until('a reclaimed CPU guarantee on the operation page', async () => {
      await page.evaluate(() => window.psShow());
      await page.waitForSelector('#jobs-table');
      return page.$('#jobs-table .reclaimed');
    }, 60000).catch((e) => e);
    const jobs = (await yt('list_jobs', { operation_id: gpu })).jobs;
    const jobsText = await page.textContent('#jobs-table');
    check('operation page lists its jobs', jobs.length > 0 && jobs.every((j) => jobsText.includes(j.id) && jobsText.includes('ui-gpu1')), jobsText.slice(0, 300));
    check('operation page shows a reclaimed CPU guarantee', !(reclaimed instanceof Error) && jobs.some((j) => j.cpu_guarantee < j.cpu_limit), String(reclaimed));
    await shot(page, 'operation');
    // an admin may manage it: suspend, then resume, from the page (the API says it happened)
    await page.waitForSelector('#op-suspend');
    check('an admin is offered the actions of a running operation', !!(await page.$('#op-abort')) && !!(await page.$('#op-complete')));
    await page.click('#op-suspend');
    await page.waitForSelector('#op-resume');
    check('suspend from the page suspends the operation', (await yt('get_operation', { operation_id: gpu })).suspended === true);
    await page.click('#op-resume');
    await page.waitForSelector('#op-suspend');
    check('resume from the page resumes it', (await yt('get_operation', { operation_id: gpu })).suspended === false);

    // A finished job's stderr (the relaxed operation's jobs finish in seconds; the example
    // operations are in the tree before the nodes start, so it gets its share at once; the
    // wait is generous for a sanitizer build on a busy machine).
    const relaxed = process.env.PS_RELAXED_OP;
    const done = await until('a completed job of the relaxed operation', async () =>
      (await yt('list_jobs', { operation_id: relaxed })).jobs.find((j) => j.state === 'completed'), 150000);
    await page.goto(`${URL_}/ui/#/operation/${relaxed}`);
    await page.waitForSelector(`#jobs-table [data-stderr="${done.id}"]`);
    await page.click(`#jobs-table [data-stderr="${done.id}"]`);
    await page.waitForSelector('#stderr:not([hidden])');
    const want = (await (await fetch(`${URL_}/api/v4/get_job_stderr?operation_id=${relaxed}&job_id=${done.id}`,
      { headers: { Authorization: `OAuth ${TOKEN}` } })).text()).trim();
    await until('stderr text', async () => (await page.textContent('#stderr')).includes(want), 5000).catch(() => null);
    check('a finished job\'s stderr opens', want.startsWith('relaxed job') && (await page.textContent('#stderr')).includes(want), `${want} / ${await page.textContent('#stderr')}`);
    await page.evaluate(() => window.psShow(true));   // the page's periodic refresh
    await page.waitForFunction(() => window.psTimings.some((t) => t.page === 'operation' && t.refresh));
    check('a refresh of the operation page keeps the open stderr', !(await page.$eval('#stderr', (e) => e.hidden)) && (await page.textContent('#stderr')).includes(want),
      await page.textContent('#stderr'));

    // Nodes.
    await page.goto(`${URL_}/ui/#/nodes`);
    await page.waitForSelector('#nodes-table tr[data-node="ui-gpu1"]');
    const nodeRows = await page.$$eval('#nodes-table tr[data-node]', (rs) => rs.map((r) => r.textContent));
    check('nodes page shows the three nodes online with trees', nodeRows.length === 3 && nodeRows.every((t) => t.includes('online')) &&
      nodeRows.some((t) => t.includes('ui-gpu1') && t.includes('gpu')), JSON.stringify(nodeRows));
    await shot(page, 'nodes');

    // A cluster's worth of nodes: the orchid's nodes map widened to 2,000 made-up nodes on its
    // way to the page (each with one of 7 rack tags, a distinct CPU use of 16 cores, one in ten
    // offline). Sorted by id, by CPU use descending, and filtered by a tag, against the orders
    // worked out here.
    {
      const NODES = `${ORCHID.replace(/\/scheduling_info_per_pool_tree$/, '')}/nodes`;
      const proto = Object.values((await yt('get', { path: NODES })).value)[0];
      const many = Array.from({ length: 2000 }, (_, i) => ({ id: `n${String(i).padStart(4, '0')}`, i,
        node: { ...proto, state: i % 10 ? 'online' : 'offline', tags: [`rack${i % 7}`],
          resource_limits: { ...proto.resource_limits, cpu: 16 }, resource_usage: { ...proto.resource_usage, cpu: ((i * 7919) % 2000) / 125 } } }));
      await replaceGet(page, NODES, Object.fromEntries(many.map((n) => [n.id, n.node])));
      await page.goto(`${URL_}/ui/#/nodes`);
      await page.waitForSelector('#nodes-table tr[data-node="n0000"]');
      await checkWindow(page, '#nodes-table', 'data-node', many.map((n) => n.id), '2,000 nodes by id');
      await page.click('#nodes-table th[data-sort="cpu"]');
      await page.click('#nodes-table th[data-sort="cpu"]');
      const byCpu = [...many].sort((a, b) => b.node.resource_usage.cpu - a.node.resource_usage.cpu).map((n) => n.id);
      await checkWindow(page, '#nodes-table', 'data-node', byCpu, '2,000 nodes by CPU use, descending');
      await page.fill('#filter', 'rack3');
      const rack3 = byCpu.filter((id) => Number(id.slice(1)) % 7 === 3);
      const count = await page.textContent('#node-count');
      check('2,000 nodes filtered by a tag: the count', count === `2000 nodes, 1800 online; ${rack3.length} match`, count);
      await checkWindow(page, '#nodes-table', 'data-node', rack3, '2,000 nodes filtered by tag rack3');
      await page.fill('#filter', '');
      await page.unroute(GET_ROUTE);
    }

    // Charts: every chart has data points (the scheduler's history).
    if (process.env.PS_SKIP_CHARTS !== '1') {
      await page.goto(`${URL_}/ui/#/charts`);
      await until('charts with points', async () => {
        await page.evaluate(() => window.psShow());
        await page.waitForSelector('.chart[data-points]');
        const pts = await page.$$eval('.chart[data-points]', (cs) => cs.map((c) => Number(c.dataset.points)));
        return pts.length >= 3 && pts.every((n) => n >= 2);
      }, 20000).catch((e) => e);
      const pts = await page.$$eval('.chart[data-points]', (cs) => cs.map((c) => [c.dataset.title, Number(c.dataset.points)]));
      check('charts have data points', pts.length >= 3 && pts.every(([, n]) => n >= 2), JSON.stringify(pts));
      check('charts are drawn by uPlot', (await page.$$('.chart .uplot canvas')).length >= 3);
      await shot(page, 'charts');
      // A pool's charts (the link on its page): its own series, with the history's points.
      await page.goto(`${URL_}/ui/#/pool/physical/prod`);
      await page.click('a[href^="#/charts/physical?pools=prod"]');
      await page.waitForSelector('.chart[data-points]');
      const hist = await (await fetch(`${URL_}/api/v1/get_history`, { method: 'POST', headers: { Authorization: `OAuth ${TOKEN}` },
        body: JSON.stringify({ pools: ['prod'] }) })).json();
      const plotted = await page.$eval('.chart[data-title^="Fair share"]', (c) => ({ labels: c.uplot.series.slice(1).map((x) => x.label), n: c.uplot.data[1].length }));
      check('a pool\'s charts plot its history', JSON.stringify(plotted.labels) === '["prod"]' && plotted.n > 0 && plotted.n <= hist.times.length + 5,
        `${JSON.stringify(plotted)} vs ${hist.times.length} points`);
    }

    // A larger tree (a tree of its own, no node matches it): 30 groups of 9 pools. The pools
    // table keeps only the rows near the viewport in the DOM; the order, the rows at the end
    // and a filter are checked against the names created here.
    {
      await v1('create', { type: 'scheduler_pool_tree', path: '//sys/pool_trees/wide', attributes: { config: { nodes_filter: 'no-node-has-this-tag' } } });
      const groups = Array.from({ length: 30 }, (_, g) => `g${String(g).padStart(2, '0')}`);
      const kids = (g) => Array.from({ length: 9 }, (_, c) => `${g}-c${c}`);
      for (const g of groups) {
        await v1('create', { type: 'scheduler_pool', path: `//sys/pool_trees/wide/${g}` });
        for (const k of kids(g)) await v1('create', { type: 'scheduler_pool', path: `//sys/pool_trees/wide/${g}/${k}` });
      }
      // depth first, siblings by name descending (the second click on the Pool header)
      const desc = (a) => [...a].sort((x, y) => (x < y ? 1 : x > y ? -1 : 0));
      const order = ['<Root>', ...desc(groups).flatMap((g) => [g, ...desc(kids(g))])];
      await page.goto(`${URL_}/ui/#/pools/wide`);
      await until('the wide tree on the pools page', async () => {
        await page.evaluate(() => window.psShow());
        return (await page.$('#pools-table tr[data-pool="g29-c8"]')) || (await page.$('#pools-table tr[data-pool="g00-c0"]'));
      }, 20000);
      await page.click('#pools-table th[data-sort="name"]');
      await page.click('#pools-table th[data-sort="name"]');
      await checkWindow(page, '#pools-table', 'data-pool', order, 'a large tree sorted by name, descending');
      await page.fill('#filter', 'g07-c');
      await page.waitForTimeout(200);
      const rows = await page.$$eval('#pools-table tbody tr[data-pool]', (rs) => rs.map((r) => r.dataset.pool));
      const want = order.filter((n) => n === '<Root>' || n === 'g07' || n.startsWith('g07-c'));
      check('a large tree filtered: the matching pools and their ancestors', JSON.stringify(rows) === JSON.stringify(want), `${rows} vs ${want}`);
      await page.fill('#filter', '');
      await page.evaluate(() => window.scrollTo(0, 0));
    }

    // A user (not admin) reads a pool but gets no edit form (get_current_user says role user);
    // the server refuses the write anyway (YTsaurus's authorization error 901, HTTP 403).
    await page.evaluate(() => sessionStorage.clear());
    await login(page, USER_TOKEN);
    await page.goto(`${URL_}/ui/#/pool/physical/prod`);
    await page.waitForSelector('#edit-readonly');
    const readonly = await page.textContent('#edit-readonly');
    check('a user sees no edit form on a pool page', !(await page.$('#edit')) && !(await page.$('#edit-save')) && readonly.includes('alice'), readonly);
    check('the header names the user and role', (await page.textContent('#who')) === 'alice (user)', await page.textContent('#who'));
    // with write on a pool (an ACE of its own), alice may edit its user-managed attributes only
    const RELAXED = '//sys/pool_trees/physical/relaxed';
    await v1('set', { path: `${RELAXED}/@acl`, value: [{ action: 'allow', subjects: ['alice'], permissions: ['write'] }] });
    await page.goto(`${URL_}/ui/#/pool/physical/relaxed`);
    await page.waitForSelector('#main:has(h1:has-text("Pool relaxed")) #effective-acl');
    const aliceAttrs = await page.$$eval('#edit-attr option', (os) => os.map((o) => o.textContent));
    check('a user with write sees the editor with the user-managed attributes only', !!(await page.$('#edit-save')) &&
      !!(await page.$('#edit-write-only')) && aliceAttrs.includes('mode') && !aliceAttrs.includes('acl') && !aliceAttrs.includes('integral_guarantees'),
      JSON.stringify(aliceAttrs));
    const ownAce = await page.$$eval('#effective-acl tbody tr', (rs) => rs.map((r) => [...r.cells].map((c) => c.textContent.trim())));
    check('the pool\'s own ACE shows as set on this pool', ownAce.some((r) => r[0] === 'allow' && r[1] === 'alice' && r[4] === 'this pool'),
      JSON.stringify(ownAce));
    await v1('set', { path: `${RELAXED}/@acl`, value: [] });
    // an operation alice may neither read nor manage: no actions, its jobs not shown
    await page.goto(`${URL_}/ui/#/operation/${gpu}`);
    await page.waitForSelector('#jobs-denied');
    check('a user without manage is offered no operation actions', (await page.$$('#op-actions button')).length === 0,
      await page.innerHTML('#op-actions'));
    const refused = await fetch(`${URL_}/api/v4/set?path=//sys/pool_trees/physical/prod/@weight`,
      { method: 'POST', headers: { Authorization: `OAuth ${USER_TOKEN}`, 'Content-Type': 'application/json' }, body: '3' });
    const refusedBody = await refused.json();
    check('a user\'s write is still refused by the server (authorization error 901)', refused.status === 403 && refusedBody.code === 901, JSON.stringify(refusedBody));
    check('the user\'s edit changed nothing', (await yt('get', { path: '//sys/pool_trees/physical/prod/@weight' })).value === 20);
    check('the page calls /api/v4 through the YTsaurus wrapper (X-YT-Parameters headers)',
      ytCalls.length > 10 && ytCalls.every((h) => Object.keys(h).some((k) => k.startsWith('x-yt-parameters'))),
      `${ytCalls.length} calls; ${JSON.stringify(ytCalls.find((h) => !Object.keys(h).some((k) => k.startsWith('x-yt-parameters'))))}`);
  } catch (e) {
    check('the browser checks ran to the end', false, e.stack);
    // not beside the page screenshots the README links: a failure's picture is not documentation
    const where = path.join(require('os').tmpdir(), `poolsched-ui-failure-${process.pid}.png`);
    await page.screenshot({ path: where, fullPage: true }).then(() => console.log(`failure screenshot: ${where}`), () => {});
  } finally {
    await browser.close();
  }
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
})();
