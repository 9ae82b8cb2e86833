// charts.js — the fair share charts, drawn with uPlot (vendored, web/dist), from a history in
// the shape of get_history (docs/api.md "History"): {times: [ms], cluster_usage: [...],
// preemptions: [counter...], pools: {name: {fair_share, usage, demand, integral_volume,
// integral_capacity}}}. The scheduler's charts page and a simulation's report.html
// (`poolsched simulate --output DIR`, which inlines this file) both call renderCharts.
/* global uPlot */

const PALETTE = ['#1e88e5', '#e53935', '#43a047', '#fb8c00', '#8e24aa', '#00897b', '#6d4c41',
  '#3949ab', '#c0ca33', '#d81b60', '#546e7a', '#fdd835'];

function points(ys) { return ys.reduce((n, y) => n + (y == null ? 0 : 1), 0); }

function chart(box, title, times, series, opts = {}) {
  const div = document.createElement('div');
  div.className = 'chart';
  div.dataset.title = title;
  // the most points of any series: a test reads it (tests/ui/ui.test.js)
  div.dataset.points = String(Math.max(0, ...series.map((s) => points(s.values))));
  box.appendChild(div);
  const width = Math.max(320, Math.min(box.clientWidth || 640, 720) - 20);
  const data = [times.map((t) => t / 1000), ...series.map((s) => s.values)];
  const u = new uPlot({
    title, width, height: 240,
    scales: { x: { time: opts.time !== false }, y: { range: (u, min, max) => [0, Math.max(max, opts.floor || 0.01) * 1.05] } },
    axes: [{}, { label: opts.unit || '', size: 60, values: opts.pct ? (u, v) => v.map((x) => `${(x * 100).toFixed(0)}%`) : undefined }],
    series: [{}, ...series.map((s, i) => ({ label: s.label, stroke: s.color || PALETTE[i % PALETTE.length], width: 1.5,
      dash: s.dash, spanGaps: false, value: (u, v) => (v == null ? '' : opts.pct ? `${(v * 100).toFixed(1)}%` : v.toFixed(2)) }))],
  }, data, div);
  div.uplot = u;   // tests read the plotted data (u.data)
  return u;
}

function deltas(counter) {
  return counter.map((c, i) => (i === 0 || c == null || counter[i - 1] == null ? null : Math.max(0, c - counter[i - 1])));
}

// Draws every chart of history h into box (emptied first). names: which pools (default all).
// xopts: {time: false} for an x axis in seconds rather than dates (a simulation's virtual time).
export function renderCharts(box, h, names, xopts = {}) {
  box.innerHTML = '';
  const pools = names || Object.keys(h.pools).filter((n) => n !== '<Root>');
  const per = (key) => pools.map((n, i) => ({ label: n, values: h.pools[n] ? h.pools[n][key] : [], color: PALETTE[i % PALETTE.length] }));
  const opts = { pct: true, ...xopts };
  chart(box, 'Fair share (of the cluster)', h.times, per('fair_share'), opts);
  chart(box, 'Usage', h.times, per('usage'), opts);
  chart(box, 'Demand', h.times, per('demand'), opts);
  const integral = pools.filter((n) => h.pools[n] && ['integral_capacity', 'integral_volume'].some((k) => h.pools[n][k].some((x) => x > 0)));
  if (integral.length) {
    const s = [];
    integral.forEach((n, i) => {
      const color = PALETTE[pools.indexOf(n) % PALETTE.length];
      s.push({ label: `${n} volume`, values: h.pools[n].integral_volume, color });
      s.push({ label: `${n} capacity`, values: h.pools[n].integral_capacity, color, dash: [6, 4] });
    });
    chart(box, 'Integral guarantee: accumulated volume vs capacity (share × s)', h.times, s, { unit: 'share·s', ...xopts });
  }
  chart(box, 'Cluster usage', h.times, [{ label: 'usage', values: h.cluster_usage }], opts);
  if (h.preemptions)
    chart(box, 'Preemptions (per interval)', h.times, [{ label: 'preempted jobs', values: deltas(h.preemptions), color: '#e53935' }], { unit: 'jobs', floor: 1, ...xopts });
}
