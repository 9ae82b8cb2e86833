// Times the web UI's pages in headless Chromium (scripts/ui-measure.sh sets the environment):
// for each page, the first load (a fresh document) and PS_REFRESHES updates, each with the
// fetch and render times the page records (window.psTimings) and the longest main-thread task
// seen meanwhile (PerformanceObserver longtask: anything over 50 ms blocks input); on the pools
// page also PS_REFRESHES updates with every pool's numbers changed; on the pools and operations
// pages sorts, filters and scrolls, each timed to the next painted frame (docs/ui.md "With a
// large tree").
'use strict';
const { chromium } = require('playwright-core');

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
  const pages = (process.env.PS_PAGES || '#/pools/physical|#pools-table tr[data-pool="pool0"];#/operations|#ops-table tbody tr:not(.spacer);#/operations?limit=1000|#ops-table tbody tr:not(.spacer)').split(';');
  for (const spec of pages) {
    const [hash, ready] = spec.split('|');
    await page.goto('about:blank');
    await page.goto(`${process.env.PS_URL}/ui/${hash}`);
    await page.waitForSelector(ready, { timeout: 120000 });
    await page.waitForTimeout(300);   // layout and paint of the first render
    const first = await page.evaluate(() => ({ t: window.psTimings.find((x) => x.render_ms !== undefined), long: Math.max(0, ...window.psLongTasks) }));
    await page.evaluate(() => { window.psLongTasks = []; window.psTimings = []; });
    for (let i = 0; i < n; i++) { await page.evaluate(() => window.psShow(true)); await page.waitForTimeout(100); }
    const upd = await page.evaluate(() => ({ t: window.psTimings.filter((x) => x.render_ms !== undefined), long: Math.max(0, ...window.psLongTasks) }));
    // Updates where every pool's numbers changed: the orchid's reply with each pool's fair share,
    // usage and demand moved (a scheduler without nodes shares nothing, so its rows never change).
    let changed = null;
    if (hash.startsWith('#/pools')) {
      let round = 0;
      await page.route('**/api/v4/get**', async (route) => {
        // the wrapper's parameters: base64 JSON in X-YT-Parameters-0, -1, ...
        const h = route.request().headers();
        const chunks = Object.keys(h).filter((k) => /^x-yt-parameters-\d+$/.test(k)).sort((a, b) => Number(a.split('-').pop()) - Number(b.split('-').pop()));
        const params = JSON.parse(Buffer.from(chunks.map((k) => h[k]).join(''), 'base64').toString() || '{}');
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
      await page.unroute('**/api/v4/get**');
      if (round < n) throw new Error(`the pools reply was changed ${round} times, not ${n}`);
    }
    const size = Object.entries(first.t).filter(([k]) => !/_ms$|page|refresh/.test(k)).map(([k, v]) => `${v} ${k}`).join(', ');
    console.log(`${hash} (${size}): first render ${first.t.fetch_ms.toFixed(0)} ms fetch + ${first.t.render_ms.toFixed(0)} ms render, ` +
      `longest task ${first.long.toFixed(0)} ms; ${upd.t.length} updates: median ${med(upd.t.map((x) => x.fetch_ms)).toFixed(0)} ms fetch + ` +
      `${med(upd.t.map((x) => x.render_ms)).toFixed(0)} ms render, longest task ${upd.long.toFixed(0)} ms`);
    if (changed)
      console.log(`${hash}: ${changed.t.length} updates with every pool's numbers changed: median ${med(changed.t.map((x) => x.fetch_ms)).toFixed(0)} ms fetch + ` +
        `${med(changed.t.map((x) => x.render_ms)).toFixed(0)} ms render, longest task ${changed.long.toFixed(0)} ms`);
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
