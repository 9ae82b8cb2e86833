// A simulation's report.html (poolsched simulate --output DIR) in headless Chromium: it renders
// from file:// with no request beyond the file itself, draws a fair share chart per tree whose
// points are pools.csv's rows, and a preemptions chart whose increments add up to summary.json's
// preempted jobs, and that it fits the window at 1280, 1400 and 1920 px (layout.js); with
// PS_SIM_INTEGRAL_DIR, an integral chart with each integral pool's volume as a share of its
// capacity. Expected values come from the outputs (read here), not from the page.
'use strict';
const { chromium } = require('playwright-core');
const fs = require('fs');
const path = require('path');
const { layoutProblems, WIDTHS } = require('./layout.js');

const dir = process.env.PS_SIM_DIR;
let failed = 0, passed = 0;
function check(name, ok, detail) {
  if (ok) { passed++; console.log(`ok   report: ${name}`); } else { failed++; console.log(`FAIL report: ${name}: ${detail || ''}`); }
}

(async () => {
  const browser = await chromium.launch({ executablePath: process.env.PS_CHROMIUM, args: ['--no-sandbox'] });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const outside = [];
  page.on('request', (r) => { if (!r.url().startsWith('file:') && !r.url().startsWith('data:')) outside.push(r.url()); });
  page.on('pageerror', (e) => check('no script error', false, e.message));
  try {
    const file = path.join(dir, 'report.html');
    await page.goto(`file://${file}`);
    await page.waitForSelector('body[data-rendered="true"]', { timeout: 15000 });
    check('no request leaves the file', outside.length === 0, outside.join(' '));
    // pools.csv: rows of pool "a" in tree "physical", and its fair shares, in order
    const rows = fs.readFileSync(path.join(dir, 'pools.csv'), 'utf8').trim().split('\n').slice(1).map((l) => l.split(','));
    const want = rows.filter((r) => r[1] === 'physical' && r[2] === 'a').map((r) => Number(r[3]));
    const got = await page.$eval('.chart[data-title^="Fair share"]', (c) => {
      const u = c.uplot;
      const i = u.series.findIndex((s) => s.label === 'a');
      return u.data[i];
    });
    check('the fair share chart plots pools.csv\'s rows of pool a', want.length > 10 && JSON.stringify(got) === JSON.stringify(want),
      `${want.length} rows vs ${got && got.length} points`);
    const summary = JSON.parse(fs.readFileSync(path.join(dir, 'summary.json'), 'utf8'));
    const preempted = await page.$eval('.chart[data-title^="Preemptions"]', (c) => c.uplot.data[1].reduce((s, x) => s + (x || 0), 0));
    check('the preemptions chart adds up to summary.json\'s preempted jobs', summary.jobs.preempted > 0 && preempted === summary.jobs.preempted,
      `${preempted} vs ${summary.jobs.preempted}`);
    const charts = await page.$$eval('.chart[data-points]', (cs) => cs.map((c) => [c.dataset.title, Number(c.dataset.points)]));
    check('every chart has data points', charts.length >= 5 && charts.every(([, n]) => n > 1), JSON.stringify(charts));
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      await page.waitForTimeout(200);   // the charts follow their cells' width (ResizeObserver)
      const problems = await layoutProblems(page);
      check(`at ${width} px: no horizontal overflow, nothing past the window's edge`, problems.length === 0, problems.slice(0, 6).join('; '));
    }
    await page.setViewportSize({ width: 1400, height: 900 });
    await page.waitForTimeout(200);
    if (process.env.PS_SCREENSHOTS) await page.screenshot({ path: path.join(process.env.PS_SCREENSHOTS, 'sim-report.png'), fullPage: true });

    // A simulation with integral guarantees (examples/simulate/integral.json): the integral chart
    // plots each integral pool's accumulated volume and its capacity, both as pools.csv has them.
    const idir = process.env.PS_SIM_INTEGRAL_DIR;
    if (idir) {
      await page.goto(`file://${path.join(idir, 'report.html')}`);
      await page.waitForSelector('body[data-rendered="true"]', { timeout: 15000 });
      const lines = fs.readFileSync(path.join(idir, 'pools.csv'), 'utf8').trim().split('\n').map((l) => l.split(','));
      const head = lines.shift();
      const at = (name) => head.indexOf(name);
      check('pools.csv has the integral capacity column', at('integral_capacity_ratio_volume') > 0, head.join(','));
      const { plotted, top } = await page.$eval('.chart[data-title^="Integral guarantee"]', (c) => ({ top: c.uplot.scales.y.max,
        plotted: Object.fromEntries(c.uplot.series.slice(1).map((s, i) => [s.label, c.uplot.data[i + 1]])) }));
      let highest = 0;
      for (const pool of ['relaxed', 'burst']) {
        const rows = lines.filter((r) => r[at('tree')] === 'physical' && r[at('pool')] === pool);
        const volume = rows.map((r) => Number(r[at('accumulated_resource_ratio_volume')]));
        const capacity = rows.map((r) => Number(r[at('integral_capacity_ratio_volume')]));
        check(`${pool}: pools.csv has a capacity and the volume stays within it`,
          rows.length > 100 && capacity.every((c) => c > 0) && volume.every((v, i) => v <= capacity[i] + 1e-9) && volume.some((v) => v > 0),
          `${rows.length} rows, capacity ${capacity.slice(0, 3)}..., volume ${volume.slice(0, 3)}...`);
        const share = volume.map((v, i) => v / capacity[i]);
        highest = Math.max(highest, ...share);
        check(`${pool}: the integral chart plots pools.csv's volume as a share of its capacity`, JSON.stringify(plotted[pool]) === JSON.stringify(share),
          `${JSON.stringify((plotted[pool] || []).slice(0, 3))}... vs ${JSON.stringify(share.slice(0, 3))}...`);
      }
      // the scale is the shares' (a capacity line thousands of share·s high would flatten them)
      check('the integral chart\'s scale ends just above the highest share', top > highest && top <= Math.max(0.01, highest) * 1.06, `top ${top}, highest ${highest}`);
      if (process.env.PS_SCREENSHOTS) await page.screenshot({ path: path.join(process.env.PS_SCREENSHOTS, 'sim-report-integral.png'), fullPage: true });
    }
  } catch (e) {
    check('the report checks ran to the end', false, e.stack);
  } finally {
    await browser.close();
  }
  console.log(`report: ${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
})();
