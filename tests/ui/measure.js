// Times the web UI's pages in headless Chromium (scripts/ui-measure.sh sets the environment):
// for each page, the first load (a fresh document) and PS_REFRESHES updates, each with the
// fetch and render times the page records (window.psTimings) and the longest main-thread task
// seen meanwhile (PerformanceObserver longtask: anything over 50 ms blocks input).
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
  const pages = (process.env.PS_PAGES || '#/pools/physical|#pools-table tr[data-pool="pool0"];#/operations|#ops-table tbody tr;#/operations?limit=1000|#ops-table tbody tr').split(';');
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
    const size = Object.entries(first.t).filter(([k]) => !/_ms$|page|refresh/.test(k)).map(([k, v]) => `${v} ${k}`).join(', ');
    console.log(`${hash} (${size}): first render ${first.t.fetch_ms.toFixed(0)} ms fetch + ${first.t.render_ms.toFixed(0)} ms render, ` +
      `longest task ${first.long.toFixed(0)} ms; ${upd.t.length} updates: median ${med(upd.t.map((x) => x.fetch_ms)).toFixed(0)} ms fetch + ` +
      `${med(upd.t.map((x) => x.render_ms)).toFixed(0)} ms render, longest task ${upd.long.toFixed(0)} ms`);
    // A rebuild of every row (sorting by fair share): until the next frame is painted.
    if (await page.$('#pools-table th[data-sort="fair_share"]')) {
      await page.evaluate(() => { window.psLongTasks = []; });
      const ms = await page.evaluate(() => new Promise((done) => {
        const t0 = performance.now();
        document.querySelector('#pools-table th[data-sort="fair_share"]').click();
        requestAnimationFrame(() => setTimeout(() => done(performance.now() - t0), 0));
      }));
      await page.waitForTimeout(200);
      const long = await page.evaluate(() => Math.max(0, ...window.psLongTasks));
      console.log(`${hash}: sorting rebuilds every row: ${ms.toFixed(0)} ms to the next frame, longest task ${long.toFixed(0)} ms`);
    }
  }
  await browser.close();
})();
