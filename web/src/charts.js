// charts.js — the fair share charts, drawn with uPlot (vendored, web/dist), from a history in
// the shape of get_history (docs/api.md "History"): {times: [ms], cluster_usage: [...],
// preemptions: [counter...], pools: {name: {fair_share, usage, demand, integral_volume,
// integral_capacity}}}. The scheduler's charts page and a simulation's report.html
// (`poolsched simulate --output DIR`, which inlines this file) both call renderCharts.
/* global uPlot */

const PALETTE = ['#1e88e5', '#e53935', '#43a047', '#fb8c00', '#8e24aa', '#00897b', '#6d4c41',
  '#3949ab', '#c0ca33', '#d81b60', '#546e7a', '#fdd835'];

function points(ys) { return ys.reduce((n, y) => n + (y == null ? 0 : 1), 0); }

// The top of a chart's y axis. One series far above the others (a pool demanding 25 clusters
// while the rest demand about one) would flatten them: with opts.clip (a number), a value over
// both clip and OUTLIER times the typical high (the lower median of the series' 90th percentiles)
// is off the scale, the axis ends at the highest value under that and the chart marks what is
// above it. The ratio charts pass clip 1: a share of up to the whole cluster is never cut.
// Returns {top, over: [{label, max, color}]} (the series off the scale).
const OUTLIER = 5;
function yScale(series, floor, clip) {
  const vals = series.map((s) => s.values.filter((v) => v != null && isFinite(v)));
  const all = vals.flat();
  const max = Math.max(floor, ...all);
  if (!clip || !all.length) return { top: max * 1.05, over: [] };
  const p90 = vals.filter((v) => v.length).map((v) => [...v].sort((a, b) => a - b)[Math.floor(0.9 * (v.length - 1))]).sort((a, b) => a - b);
  const limit = Math.max(clip, OUTLIER * Math.max(floor, p90[Math.floor((p90.length - 1) / 2)]));
  if (max <= limit) return { top: max * 1.05, over: [] };
  const top = Math.max(floor, ...all.filter((v) => v <= limit)) * 1.05;
  const over = series.map((s, i) => ({ label: s.label, color: s.color, i, max: Math.max(...vals[i]) })).filter((o) => o.max > top);
  return { top, over };
}

// Marks the values above the axis' top: a thick dashed line along the top edge over each run of
// them, a triangle where the run starts and the run's highest value beside it.
function markOver(u, over, top, fmt) {
  const ctx = u.ctx, y0 = u.bbox.top, px = devicePixelRatio || 1;
  ctx.save();
  ctx.font = `${11 * px}px system-ui, sans-serif`;
  ctx.textAlign = 'left';
  ctx.textBaseline = 'top';
  for (const o of over) {
    const ys = u.data[o.i + 1], xs = u.data[0];
    for (let k = 0; k < ys.length; k++) {
      if (!(ys[k] > top) || (k > 0 && ys[k - 1] > top)) continue;
      let m = ys[k], j = k;
      for (; j + 1 < ys.length && ys[j + 1] > top; j++) m = Math.max(m, ys[j + 1]);
      const x = u.valToPos(xs[k], 'x', true), x1 = u.valToPos(xs[j], 'x', true);
      ctx.strokeStyle = ctx.fillStyle = o.color;
      ctx.lineWidth = 3 * px;
      ctx.setLineDash([6 * px, 4 * px]);
      ctx.beginPath();
      ctx.moveTo(x, y0 + 1.5 * px); ctx.lineTo(Math.max(x1, x + 1), y0 + 1.5 * px); ctx.stroke();
      ctx.beginPath();
      ctx.moveTo(x, y0); ctx.lineTo(x - 5 * px, y0 + 9 * px); ctx.lineTo(x + 5 * px, y0 + 9 * px); ctx.fill();
      ctx.fillText(`${o.label} ${fmt(m)}`, x + 8 * px, y0 + 5 * px);
      k = j;
    }
  }
  ctx.restore();
}

// Decimals of a % axis' labels for ticks incr apart (a ratio): 0 for 10%, 1 for 0.5%, ...
function pctDigits(incr) { return Math.min(6, Math.max(0, Math.ceil(-Math.log10(incr * 100) - 1e-9))); }

// The width for uPlot in a chart's box: its content width (the grid cell's, style.css .charts).
function boxWidth(div) {
  const cs = getComputedStyle(div);
  return Math.max(240, Math.floor(div.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight)));
}

// opts: pct (values are ratios, shown in %), unit (the y axis' label), floor (the least top of
// the y axis), clip (an outlier above this goes off the scale: yScale), time (false: x in seconds),
// value(v, idx) (the legend's text of a value; default by pct).
function chart(box, title, times, series, opts = {}) {
  const div = document.createElement('div');
  div.className = 'chart';
  div.dataset.title = title;
  // the most points of any series: a test reads it (tests/ui/ui.test.js)
  div.dataset.points = String(Math.max(0, ...series.map((s) => points(s.values))));
  box.appendChild(div);
  const fmt = (v) => (opts.pct ? `${(v * 100).toFixed(1)}%` : v.toFixed(2));
  const y = yScale(series, opts.floor || 0.01, opts.clip);
  const data = [times.map((t) => t / 1000), ...series.map((s) => s.values)];
  const u = new uPlot({
    title, width: boxWidth(div), height: 240,
    scales: { x: { time: opts.time !== false }, y: { range: () => [0, y.top] } },
    axes: [{}, { label: opts.unit || '', size: 60, values: opts.pct ? (u, v, ax, space, incr) => v.map((x) => `${(x * 100).toFixed(pctDigits(incr))}%`) : undefined }],
    series: [{}, ...series.map((s, i) => ({ label: s.label, stroke: s.color || PALETTE[i % PALETTE.length], width: 1.5,
      dash: s.dash, spanGaps: false, value: (u, v, si, idx) => (v == null ? '' : opts.value ? opts.value(v, si - 1, idx) : fmt(v)) }))],
    hooks: y.over.length ? { draw: [(u) => markOver(u, y.over, y.top, fmt)] } : {},
  }, data, div);
  if (y.over.length) {
    const note = document.createElement('p');
    note.className = 'offscale';
    note.textContent = `Off the scale (cut at ${fmt(y.top)}, ▲ marks where): ${y.over.map((o) => `${o.label} up to ${fmt(o.max)}`).join(', ')}`;
    div.appendChild(note);
  }
  div.uplot = u;   // tests read the plotted data (u.data) and the scale (u.scales.y)
  div.dataset.over = y.over.map((o) => o.label).join(',');
  // the page's width changes (a window resized): the chart follows its cell
  if (typeof ResizeObserver !== 'undefined') {
    new ResizeObserver(() => {
      const w = boxWidth(div);
      if (div.isConnected && w !== u.width) u.setSize({ width: w, height: 240 });
    }).observe(div);
  }
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
  const opts = { pct: true, clip: 1, ...xopts };
  chart(box, 'Fair share (of the cluster)', h.times, per('fair_share'), opts);
  chart(box, 'Usage', h.times, per('usage'), opts);
  chart(box, 'Demand', h.times, per('demand'), opts);
  // Integral volume as a share of the pool's capacity (a capacity thousands of share·s above a
  // volume near 0 would flatten it): 100% is a full pool; the legend shows both in share·s.
  const integral = pools.filter((n) => h.pools[n] && ['integral_capacity', 'integral_volume'].some((k) => h.pools[n][k].some((x) => x > 0)));
  if (integral.length) {
    const raw = integral.map((n) => h.pools[n]);
    const s = integral.map((n, i) => ({ label: n, color: PALETTE[pools.indexOf(n) % PALETTE.length],
      values: raw[i].integral_volume.map((v, k) => { const c = raw[i].integral_capacity[k]; return v != null && c > 0 ? v / c : null; }) }));
    chart(box, 'Integral guarantee: accumulated volume, share of capacity', h.times, s, { ...opts, clip: false,
      value: (v, i, k) => `${(v * 100).toFixed(1)}% (${raw[i].integral_volume[k].toFixed(0)} of ${raw[i].integral_capacity[k].toFixed(0)} share·s)` });
  }
  chart(box, 'Cluster usage', h.times, [{ label: 'usage', values: h.cluster_usage }], opts);
  if (h.preemptions)
    chart(box, 'Preemptions (per interval)', h.times, [{ label: 'preempted jobs', values: deltas(h.preemptions), color: '#e53935' }], { unit: 'jobs', floor: 1, ...xopts });
}
