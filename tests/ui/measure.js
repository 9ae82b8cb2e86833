// Times the web UI's pages in headless Chromium (scripts/ui-measure.sh sets the environment):
// for each page, the first load (a fresh document) and PS_REFRESHES updates, each with the
// fetch and render times the page records (window.psTimings) and the longest main-thread task
// seen meanwhile (PerformanceObserver longtask: anything over 50 ms blocks input); on the pools
// page also PS_REFRESHES updates with every pool's numbers changed; on the pools and operations
// pages sorts, filters and scrolls, each timed to the next painted frame (docs/ui.md "With a
// large tree"). The nodes page gets PS_NODES made-up nodes (default 10,000): the orchid's nodes
// map is replaced on its way to the page. A page that records no render timing (an older build's)
// is reported with the app's total time per show.
'use strict';
const { chromium } = require('playwright-core');
const { ytParams, replaceGet, GET_ROUTE } = require('./ytparams.js');

const NODES_PATH = '//sys/scheduler/orchid/scheduler/nodes';
function madeUpNodes(count) {   // {id: node}: 7 racks, CPU and slots in use varying, 1 in 10 offline
  const nodes = {};
  for (let i = 0; i < count; i++) {
    const x = (i * 7919) % 1000;
    nodes[`node${String(i).padStart(5, '0')}`] = {
      state: i % 10 ? 'online' : 'offline', tags: [`rack${i % 7}`, 'ssd'], tree: 'physical',
      resource_limits: { cpu: 16, memory: 64 * 2 ** 30, user_slots: 32 },
      resource_usage: { cpu: (16 * x) / 1000, memory: (64 * 2 ** 30 * ((x * 7) % 1000)) / 1000, user_slots: x % 33 },
      running_job_count: x % 33, last_heartbeat_time: Date.now() - x, alerts: [],
    };
  }
  return nodes;
}
// The timing entries of the page's shows: its own fetch/render split, else the app's total.
const shows = (all) => {
  const own = all.filter((x) => x.render_ms !== undefined);
  return own.length ? own : all.filter((x) => x.total_ms !== undefined);
};
const took = (ts) => (ts[0] && ts[0].render_ms !== undefined
  ? `${med(ts.map((x) => x.fetch_ms)).toFixed(0)} ms fetch + ${med(ts.map((x) => x.render_ms)).toFixed(0)} ms render`
  : `${med(ts.map((x) => x.total_ms)).toFixed(0)} ms in all`);

const med = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)] || 0; };

(async () => {
  const browser = await chromium.launch({ executablePath: process.env.PS_CHROMIUM, args: ['--no-sandbox'] });
  const page = await browser.newPage({ viewport: { width: 1500, height: 900 } });
  await page.addInitScript((t) => {
    sessionStorage.setItem('poolsched.token', t);
    window.psLongTasks = [];
    new PerformanceObserver((l) => l.getEntries().forEach((e) => window.psLongTasks.push(e.duration))).observe({ type: 'longtask', buffered: true });
  }, process.env.PS_TOKEN);
  const n = Number(process.env.PS_REFRESHES || 5);
  const pages = (process.env.PS_PAGES || '#/pools/physical|#pools-table tr[data-pool="pool0"];#/operations|#ops-table tbody tr:not(.spacer);#/operations?limit=1000|#ops-table tbody tr:not(.spacer);#/nodes|#nodes-table tr[data-node]').split(';');
  for (const spec of pages) {
    const [hash, ready] = spec.split('|');
    await page.goto('about:blank');
    await page.unroute(GET_ROUTE);
    if (hash.startsWith('#/nodes')) await replaceGet(page, NODES_PATH, madeUpNodes(Number(process.env.PS_NODES || 10000)));
    await page.goto(`${process.env.PS_URL}/ui/${hash}`);
    await page.waitForSelector(ready, { timeout: 120000 });
    await page.waitForTimeout(300);   // layout and paint of the first render
    const first = await page.evaluate(() => ({ t: window.psTimings, long: Math.max(0, ...window.psLongTasks) }));
    first.t = shows(first.t);
    await page.evaluate(() => { window.psLongTasks = []; window.psTimings = []; });
    for (let i = 0; i < n; i++) { await page.evaluate(() => window.psShow(true)); await page.waitForTimeout(100); }
    const upd = await page.evaluate(() => ({ t: window.psTimings, long: Math.max(0, ...window.psLongTasks) }));
    upd.t = shows(upd.t);
    // Updates where every pool's numbers changed: the orchid's reply with each pool's fair share,
    // usage and demand moved (a scheduler without nodes shares nothing, so its rows never change).
    let changed = null;
    if (hash.startsWith('#/pools')) {
      let round = 0;
      await page.route(GET_ROUTE, async (route) => {
        const params = ytParams(route.request().headers());
        if (!/fair_share_info\/pools$/.test(params.path || '')) return route.continue();
        const r = await route.fetch();
        const body = await r.json();
        round++;
        let k = 0;
        for (const p of Object.values(body.value || body)) {
          const x = ((k++ * 7919 + round * 104729) % 1000) / 1000;
          p.fair_share_ratio = x / 100; p.usage_ratio = x / 150; p.demand_ratio = x / 80;
        }
        await route.fulfill({ response: r, body: JSON.stringify(body) });
      });
      await page.evaluate(() => { window.psLongTasks = []; window.psTimings = []; });
      for (let i = 0; i < n; i++) { await page.evaluate(() => window.psShow(true)); await page.waitForTimeout(100); }
      changed = await page.evaluate(() => ({ t: window.psTimings.filter((x) => x.render_ms !== undefined), long: Math.max(0, ...window.psLongTasks) }));
      await page.unroute(GET_ROUTE);
      if (round < n) throw new Error(`the pools reply was changed ${round} times, not ${n}`);
    }
    const size = Object.entries(first.t[0] || {}).filter(([k]) => !/_ms$|page|refresh/.test(k)).map(([k, v]) => `${v} ${k}`).join(', ');
    console.log(`${hash}${size ? ` (${size})` : ''}: first render ${took(first.t.slice(0, 1))}, ` +
      `longest task ${first.long.toFixed(0)} ms; ${upd.t.length} updates: median ${took(upd.t)}, longest task ${upd.long.toFixed(0)} ms`);
    if (changed)
      console.log(`${hash}: ${changed.t.length} updates with every pool's numbers changed: median ${took(changed.t)}, longest task ${changed.long.toFixed(0)} ms`);
    // Sorting, filtering and scrolling the table: from the event to the next painted frame, and
    // the longest main-thread task meanwhile (a sort reorders every row; a filter keeps a subset).
    // On the operations page a filter is a counter's link: a new list_operations, so its time
    // runs to the frame after the page rendered the reply (fetch included).
    const sel = (t, q) => `() => document.querySelector('${t} ${q}').click()`;
    const input = (v) => `() => { const f = document.querySelector('#filter'); f.value = '${v}'; f.dispatchEvent(new Event('input')); }`;
    const scrolls = [['scroll to the end', '() => window.scrollTo(0, document.documentElement.scrollHeight)', false],
      ['scroll to the top', '() => window.scrollTo(0, 0)', false]];
    let actions = null, tbl = null;
    if (await page.$('#pools-table th[data-sort="fair_share"]')) {
      tbl = '#pools-table';
      actions = [
        ['sort by fair share', sel(tbl, 'th[data-sort="fair_share"]'), false],
        ['sort by fair share, descending', sel(tbl, 'th[data-sort="fair_share"]'), false],
        ['sort by integral guarantee', sel(tbl, 'th[data-sort="integral"]'), false],
        ['sort by name', sel(tbl, 'th[data-sort="name"]'), false],
        ['filter "pool1"', input('pool1'), false],
        ['filter "pool12"', input('pool12'), false],
        ['filter cleared', input(''), false],
        ...scrolls,
      ];
    } else if (await page.$('#ops-table th[data-sort="start_time"]')) {
      tbl = '#ops-table';
      actions = [
        ['sort by start time', sel(tbl, 'th[data-sort="start_time"]'), false],
        ['sort by start time, descending', sel(tbl, 'th[data-sort="start_time"]'), false],
        ['sort by pools', sel(tbl, 'th[data-sort="pool"]'), false],
        ['sort by jobs', sel(tbl, 'th[data-sort="progress"]'), false],
        ['sort by id', sel(tbl, 'th[data-sort="id"]'), false],
        ...scrolls,
        ['filter by the first pool counter', sel('', '[data-filter="pool"]'), true],
        ['filter cleared (the counter again)', sel('', '[data-filter="pool"].on'), true],
      ];
    } else if (await page.$('#nodes-table')) {
      tbl = '#nodes-table';
      const cpu = (await page.$(`${tbl} th[data-sort="cpu"]`)) ? 'cpu' : 'resources';   // an older build: one column
      actions = [
        [`sort by ${cpu} use`, sel(tbl, `th[data-sort="${cpu}"]`), false],
        [`sort by ${cpu} use, descending`, sel(tbl, `th[data-sort="${cpu}"]`), false],
        ['sort by state', sel(tbl, 'th[data-sort="state"]'), false],
        ['sort by running jobs', sel(tbl, 'th[data-sort="running_job_count"]'), false],
        ['sort by id', sel(tbl, 'th[data-sort="id"]'), false],
        ...((await page.$('#filter')) ? [['filter "rack3"', input('rack3'), false], ['filter cleared', input(''), false]] : []),
        ...scrolls,
      ];
    }
    for (const [what, fn, fetches] of actions || []) {
      await page.evaluate(() => { window.psLongTasks = []; window.psTimings = []; });
      const ms = await page.evaluate(([src, wait]) => new Promise((done) => {
        const t0 = performance.now();
        const frame = () => requestAnimationFrame(() => setTimeout(() => done(performance.now() - t0), 0));
        (0, eval)(`(${src})`)();
        if (!wait) { frame(); return; }
        const poll = () => (window.psTimings.some((x) => x.render_ms !== undefined) ? frame() : setTimeout(poll, 1));
        poll();
      }), [fn, fetches]);
      await page.waitForTimeout(200);
      const long = await page.evaluate(() => Math.max(0, ...window.psLongTasks));
      const rows = await page.$$eval(`${tbl} tbody tr:not(.spacer)`, (r) => r.length);
      const shown = await page.$eval(tbl, (t) => t.dataset.rows || t.tBodies[0].rows.length);
      console.log(`${hash}: ${what}: ${ms.toFixed(0)} ms to the next frame${fetches ? ' (fetch included)' : ''}, longest task ${long.toFixed(0)} ms (${rows} of ${shown} rows in the DOM)`);
    }
  }
  await browser.close();
})();
