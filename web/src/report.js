// report.js — a simulation's report.html (`poolsched simulate SCENARIO --output DIR`): reads
// the pools.csv, preemption times and summary.json inlined in the page and draws, per pool
// tree, the same charts as the scheduler's charts page (charts.js, inlined before this file).
/* global renderCharts */

// pools.csv (formats.md section 3, with integral_capacity_ratio_volume after its columns:
// docs/simulate.md) -> one history per tree, in get_history's shape.
function historiesFromCsv(text) {
  const lines = text.split('\n').filter((l) => l.length);
  const head = lines.shift().split(',');
  const col = Object.fromEntries(head.map((h, i) => [h, i]));
  const split = (line) => {   // fields are plain, or quoted with "" for a quote (sim_buf_csv)
    const out = [];
    let i = 0;
    while (i <= line.length) {
      if (line[i] === '"') {
        let s = '';
        i++;
        for (; i < line.length; i++) {
          if (line[i] === '"' && line[i + 1] === '"') { s += '"'; i++; } else if (line[i] === '"') { i++; break; } else s += line[i];
        }
        out.push(s);
        i++;
      } else {
        const j = line.indexOf(',', i);
        const end = j < 0 ? line.length : j;
        out.push(line.slice(i, end));
        i = end + 1;
      }
    }
    return out;
  };
  const trees = new Map();
  for (const line of lines) {
    const f = split(line);
    const tree = f[col.tree], pool = f[col.pool], t = Number(f[col.time]);
    if (!trees.has(tree)) trees.set(tree, { times: [], index: new Map(), rows: [] });
    const T = trees.get(tree);
    if (!T.index.has(t)) { T.index.set(t, T.times.length); T.times.push(t); }
    T.rows.push([T.index.get(t), pool, f]);
  }
  const out = new Map();
  for (const [tree, T] of trees) {
    const n = T.times.length;
    const pools = {};
    const series = (pool) => pools[pool] || (pools[pool] = {
      fair_share: Array(n).fill(null), usage: Array(n).fill(null), demand: Array(n).fill(null),
      integral_volume: Array(n).fill(null), integral_capacity: Array(n).fill(null) });
    for (const [i, pool, f] of T.rows) {
      const s = series(pool);
      s.fair_share[i] = Number(f[col.fair_share_ratio]);
      s.usage[i] = Number(f[col.usage_ratio]);
      s.demand[i] = Number(f[col.demand_ratio]);
      s.integral_volume[i] = Number(f[col.accumulated_resource_ratio_volume]);
      s.integral_capacity[i] = Number(f[col.integral_capacity_ratio_volume]);
    }
    const root = pools['<Root>'];
    out.set(tree, { times: T.times, cluster_usage: root ? root.usage : Array(n).fill(null), pools });
  }
  return out;
}

// Preemption times -> a counter at each of the tree's times (the charts plot its increments).
function counter(times, preemptions) {
  const sorted = [...preemptions].sort((a, b) => a - b);
  let k = 0;
  return times.map((t) => { while (k < sorted.length && sorted[k] <= t) k++; return k; });
}

function main() {
  const csv = document.getElementById('pools-csv').textContent.replace(/<\\\//g, '</');
  const preempt = JSON.parse(document.getElementById('preemptions').textContent);
  const summary = JSON.parse(document.getElementById('summary').textContent);
  document.getElementById('summary-text').textContent = JSON.stringify(summary, null, 2);
  const box = document.getElementById('reports');
  for (const [tree, h] of historiesFromCsv(csv)) {
    h.preemptions = counter(h.times, preempt[tree] || preempt['*'] || []);
    const section = document.createElement('section');
    section.innerHTML = `<h2>Pool tree ${tree.replace(/[&<>]/g, '')}</h2><div class="charts"></div>`;
    box.appendChild(section);
    // the x axis is the simulation's virtual time: ms since its start, shown as seconds
    renderCharts(section.querySelector('.charts'), h, undefined, { time: false });
  }
  document.body.dataset.rendered = 'true';
}
main();
