// charts_page.js — #/charts/<tree>: the scheduler's fair share history (get_history) as charts.
import { api } from './api.js';
import { esc } from './util.js';
import { trees } from './pools.js';
import { renderCharts } from './charts.js';

let current = null;

export async function chartsPage(main, params, timing, query) {
  const t = await trees();
  current = params[0] || current || t.def;
  const pools = query.get('pools') ? query.get('pools').split(',') : undefined;
  const h = await api.history(pools ? { pool_tree: current, pools } : { pool_tree: current });
  const opts = t.names.map((n) => `<option${n === current ? ' selected' : ''}>${esc(n)}</option>`).join('');
  main.innerHTML = `<h1>Charts</h1><div class="toolbar">Tree <select id="tree">${opts}</select>
    <span class="count">${h.times.length} points; pools: ${esc(Object.keys(h.pools).filter((n) => n !== '<Root>').join(', '))}
    (the top-level pools; #/charts/&lt;tree&gt;?pools=a,b for others)</span></div><div id="charts" class="charts"></div>`;
  main.querySelector('#tree').addEventListener('change', (e) => { location.hash = `#/charts/${encodeURIComponent(e.target.value)}`; });
  renderCharts(main.querySelector('#charts'), h, pools);
}
