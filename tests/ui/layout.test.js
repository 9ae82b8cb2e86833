// Every page of the web UI at ordinary widths (1280, 1400 and 1920 px) with long values present:
// the page never scrolls sideways, nothing (Log out, a column, an alert, a card, a chart) is past
// the window's edge, and a value cut to its cell has its whole text in the cell's title
// (layout.js). The long values: a real pool with a 100-character name (its row, its page, its
// edit preview), and, altered on their way to the page, a 500-character tree alert with a
// 150-character word, a user, pools and errors of operations and jobs, node tags, bans and alerts
// of hundreds of characters. The charts page with one pool demanding 2,500% of the cluster: the
// demand chart's scale leaves the other pools a visible part of its height and marks the outlier,
// while fair shares of 95%, 3% and 2% are all on the fair share chart's scale; the integral chart plots each pool's volume as a share of its capacity.
// Environment: as ui.test.js (tests/scripts/ui_browser.sh runs it after ui.test.js);
// PS_LAYOUT_SHOTS=DIR saves each page at each width there (to look at).
'use strict';
const { chromium } = require('playwright-core');
const { replaceGet, GET_ROUTE } = require('./ytparams.js');
const { layoutProblems, cutTitles, WIDTHS } = require('./layout.js');

const URL_ = process.env.PS_URL, TOKEN = process.env.PS_TOKEN;
const ORCHID = '//sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree';
let failed = 0, passed = 0;
function check(name, ok, detail) {
  if (ok) { passed++; console.log(`ok   layout: ${name}`); } else { failed++; console.log(`FAIL layout: ${name}: ${detail || ''}`); }
}

async function api(version, command, params, body) {
  const q = new URLSearchParams(params || {});
  const r = await fetch(`${URL_}/api/${version}/${command}?${q}`, { method: body ? 'POST' : 'GET',
    headers: { Authorization: `OAuth ${TOKEN}` }, body: body ? JSON.stringify(body) : undefined });
  if (!r.ok) throw new Error(`${command}: HTTP ${r.status} ${await r.text()}`);
  return r.json();
}

const LONG_POOL = `long-${'abcdefghij'.repeat(9)}-tail`.slice(0, 100);   // PS_POOL_NAME_MAX
const WORD = `//sys/pool_trees/physical/${'x'.repeat(124)}`;   // 150 characters, no break
const LONG_ALERT = `A long alert: ${'the guarantees of the pools of this tree exceed what its nodes have, '.repeat(6)}${WORD} (end)`;
const words = (n, what) => Array.from({ length: n }, (_, i) => `${what}-${i}`).join(' ');

(async () => {
  const browser = await chromium.launch({ executablePath: process.env.PS_CHROMIUM, args: ['--no-sandbox'] });
  const page = await browser.newPage({ viewport: { width: WIDTHS[0], height: 900 } });
  page.on('pageerror', (e) => check('no script error on the page', false, e.message));
  try {
    // A real pool with the longest name allowed, with limits (a Limits value in its row).
    await api('v1', 'remove', {}, { path: `//sys/pool_trees/physical/prod/${LONG_POOL}` }).catch(() => null);   // a rerun on one cluster
    await api('v1', 'create', {}, { type: 'scheduler_pool', path: `//sys/pool_trees/physical/prod/${LONG_POOL}`,
      attributes: { weight: 1, resource_limits: { cpu: 1.5, memory: 1234567890, user_slots: 3 } } });
    // Long values on their way to the page: the tree's alerts, operations, jobs, nodes, the user.
    const alerts = (await api('v4', 'get', { path: `${ORCHID}/physical/alerts` })).value;
    await replaceGet(page, `${ORCHID}/physical/alerts`, [...alerts, { message: LONG_ALERT }]);
    const widen = async (pattern, change) => page.route(pattern, async (route) => {
      const r = await route.fetch();
      const body = await r.json();
      change(body.value !== undefined ? body.value : body);
      await route.fulfill({ response: r, body: JSON.stringify(body) });
    });
    await widen(/\/api\/v4\/_?list_operations/, (v) => v.operations.forEach((o) => {
      o.user = `a-user-${'with-a-long-name-'.repeat(5)}`;
      o.pool_per_tree = { physical: LONG_POOL, gpu: `another-${LONG_POOL}`.slice(0, 100), third: LONG_POOL };
    }));
    await widen(/\/api\/v4\/_?list_jobs/, (v) => v.jobs.forEach((j) => {
      j.error = `${words(60, 'error')} ${WORD}`;
      j.abort_reason = j.abort_reason || 'resource_overdraft_and_a_long_reason';
    }));
    await widen(/\/api\/v4\/_?get_current_user/, (v) => { v.user = `an-admin-${'with-a-very-long-user-name-'.repeat(4)}`; });
    const NODES = `${ORCHID.replace(/\/scheduling_info_per_pool_tree$/, '')}/nodes`;
    const nodes = (await api('v4', 'get', { path: NODES })).value;
    for (const n of Object.values(nodes)) {
      n.tags = [...(n.tags || []), ...Array.from({ length: 30 }, (_, i) => `rack-${i}-${'t'.repeat(20)}`)];
      n.banned = true;
      n.ban_message = words(40, 'banned-for-maintenance');
      n.alerts = [{ message: `${words(50, 'node-alert')} ${WORD}` }];
    }
    await replaceGet(page, NODES, nodes);
    // The history with one outlier: prod demands 25 clusters (2,500%) at every point.
    let history = null;
    await page.route('**/api/v1/get_history', async (route) => {
      const r = await route.fetch();
      const h = await r.json();
      if (h.pools.prod) h.pools.prod.demand = h.pools.prod.demand.map((d) => (d == null ? d : 25));
      // and fair shares far apart yet within the cluster (95%, 3%, 2%): none of them is cut
      for (const [n, x] of [['prod', 0.95], ['burst', 0.03], ['relaxed', 0.02]])
        if (h.pools[n]) h.pools[n].fair_share = h.pools[n].fair_share.map((f) => (f == null ? f : x));
      history = h;
      await route.fulfill({ response: r, body: JSON.stringify(h) });
    });

    await page.goto(`${URL_}/`);
    await page.waitForSelector('#login:not([hidden])');
    for (const width of WIDTHS) {   // the login form, before any page
      await page.setViewportSize({ width, height: 900 });
      const problems = await layoutProblems(page);
      check(`the login form at ${width} px: no horizontal overflow`, problems.length === 0, problems.slice(0, 6).join('; '));
    }
    await page.setViewportSize({ width: WIDTHS[0], height: 900 });
    await page.fill('#token', TOKEN);
    await page.click('#login button[type=submit]');
    await page.waitForSelector('#pools-table');

    const gpu = process.env.PS_GPU_OP;
    const pages = [
      ['pools', '#/pools/physical', `#pools-table tr[data-pool="${LONG_POOL}"]`],
      ['a pool', `#/pool/physical/${LONG_POOL}`, '#edit-value'],
      ['a pool\'s edit preview', `#/pool/physical/${LONG_POOL}`, '#edit-value', async () => {
        await page.fill('#edit-value', '3');
        await page.click('#edit-preview');
        await page.waitForSelector('#dry-run');
      }],
      ['operations', '#/operations', '#ops-table tr[data-op]'],
      ['an operation', `#/operation/${gpu}`, '#jobs-table tr[data-job]'],
      ['nodes', '#/nodes', '#nodes-table tr[data-node]'],
      ['charts', '#/charts/physical', '.chart[data-points] canvas'],
    ];
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      for (const [what, hash, ready, then] of pages) {
        await page.goto(`${URL_}/ui/${hash}`);
        await page.waitForSelector(ready);
        if (then) await then();
        await page.waitForTimeout(150);   // the charts follow their cells' width (ResizeObserver)
        if (process.env.PS_LAYOUT_SHOTS) await page.screenshot({ path: `${process.env.PS_LAYOUT_SHOTS}/${what.replace(/\W+/g, '-')}-${width}.png`, fullPage: true });
        const problems = await layoutProblems(page);
        check(`${what} at ${width} px: no horizontal overflow, nothing past the edge, cut values titled`, problems.length === 0,
          problems.slice(0, 6).join('; '));
      }
      // The long values were on the pages and cut where they are too long for their cells.
      await page.goto(`${URL_}/ui/#/pools/physical`);
      await page.waitForSelector(`#pools-table tr[data-pool="${LONG_POOL}"]`);
      const cutNames = await cutTitles(page, '#pools-table td');
      const alertBox = await page.$eval('#tree-alerts', (ul) => { const r = ul.getBoundingClientRect(); return [r.right, ul.textContent]; });
      check(`pools at ${width} px: the long pool name is cut with its whole name in the title; the long alert wraps inside the page`,
        cutNames.includes(LONG_POOL) && alertBox[1].includes(LONG_ALERT) && alertBox[0] <= width, `cut: ${JSON.stringify(cutNames)}; alerts: ${alertBox[1].slice(0, 300)} (right edge ${alertBox[0]})`);
      const logout = await page.$eval('#logout', (b) => { const r = b.getBoundingClientRect(); return [r.left, r.right, innerWidth]; });
      check(`the header's Log out is inside the window at ${width} px (beside a long user name)`, logout[0] >= 0 && logout[1] <= logout[2], JSON.stringify(logout));
    }

    // The window resized on the page, drawn at 1400 px, to 1280, 1920 and 1280 px again: the
    // tables and charts follow it (a chart drawn for a 1400 px window is wider than its box at 1280).
    for (const [what, hash, ready] of pages.filter(([w]) => ['pools', 'nodes', 'charts'].includes(w))) {
      await page.setViewportSize({ width: 1400, height: 900 });
      await page.goto(`${URL_}/ui/${hash}`);
      await page.waitForSelector(ready);
      await page.waitForTimeout(150);
      for (const width of [1280, 1920, 1280]) {
        await page.setViewportSize({ width, height: 900 });
        await page.waitForTimeout(300);
        const problems = await layoutProblems(page);
        check(`${what}, the window resized to ${width} px: no horizontal overflow, charts in their boxes`, problems.length === 0, problems.slice(0, 6).join('; '));
      }
    }

    // The charts with prod demanding 2,500%: the demand chart ends below it, the other pools
    // fill a visible part of its height, prod is marked off the scale.
    await page.setViewportSize({ width: 1400, height: 900 });
    await page.goto(`${URL_}/ui/#/charts/physical`);
    await page.waitForSelector('.chart[data-title="Demand"] canvas');
    const demand = await page.$eval('.chart[data-title="Demand"]', (c) => ({ top: c.uplot.scales.y.max, over: c.dataset.over,
      note: (c.querySelector('.offscale') || {}).textContent || '', series: Object.fromEntries(c.uplot.series.slice(1).map((s, i) => [s.label, c.uplot.data[i + 1]])) }));
    const highest = (ys) => Math.max(...(ys || []).filter((v) => v != null));
    const others = Object.entries(demand.series).filter(([n]) => n !== 'prod').map(([, ys]) => highest(ys));
    check('with one pool at 2,500%, the demand chart\'s scale lets the others fill at least a fifth of its height',
      highest(demand.series.prod) === 25 && others.length > 0 && others.every((m) => m > 0) && Math.max(...others) / demand.top >= 0.2 && demand.top < 25,
      `top ${demand.top}, prod up to ${highest(demand.series.prod)}, the others up to ${others}`);
    check('the demand chart marks the pool off its scale', demand.over === 'prod' && demand.note.includes('prod up to 2500.0%'), `${demand.over}: ${demand.note}`);
    const fair = await page.$eval('.chart[data-title^="Fair share"]', (c) => ({ top: c.uplot.scales.y.max, over: c.dataset.over }));
    check('a share of up to the whole cluster is never off the scale (fair shares 95%, 3%, 2%)', fair.over === '' && fair.top >= 0.95,
      JSON.stringify(fair));
    // The integral chart: each integral pool's volume over its capacity, as the history has them.
    const integral = await page.$eval('.chart[data-title^="Integral guarantee"]', (c) => ({ top: c.uplot.scales.y.max,
      series: Object.fromEntries(c.uplot.series.slice(1).map((s, i) => [s.label, c.uplot.data[i + 1]])) }));
    const want = Object.fromEntries(['burst', 'relaxed'].map((n) => [n, history.pools[n].integral_volume.map((v, k) => {
      const cap = history.pools[n].integral_capacity[k];
      return v != null && cap > 0 ? v / cap : null;
    })]));
    const plotted = Object.values(integral.series).flat().filter((v) => v != null);
    check('the integral chart plots volume / capacity of each integral pool', JSON.stringify(integral.series) === JSON.stringify(want),
      `${JSON.stringify(integral.series).slice(0, 200)} vs ${JSON.stringify(want).slice(0, 200)}`);
    check('the integral chart\'s scale is set by the shares, not by a capacity line', plotted.length > 0 &&
      integral.top <= Math.max(0.01, ...plotted) * 1.06, `top ${integral.top}, highest ${Math.max(...plotted)}`);
    await page.unroute(GET_ROUTE);
  } catch (e) {
    check('the layout checks ran to the end', false, e.stack);
  } finally {
    await browser.close();
  }
  console.log(`layout: ${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
})();
