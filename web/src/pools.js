// pools.js — the pool tree as an expandable table (#/pools/<tree>) and a pool's page
// (#/pool/<tree>/<pool>): attributes with an editor that previews (dry run) and saves through
// the API's `set` (offered as far as the user's permissions on the pool go), the effective
// ACL, integral volume and capacity, the pool's operations, and a what-if of a change of it
// (what_if.js).
import { api, ORCHID } from './api.js';
import { esc, pct, num, resources, shareBars, errorBox, time, sortKey, compareKeys, collator, tableHead, bindSortHead, setHtml, tipAttr } from './util.js';
import { vtable } from './vtable.js';
import { whatIfForm, bindWhatIf } from './what_if.js';

const ROOT = '<Root>';
const view = { tree: null, pools: {}, filter: '', sort: null, desc: false, collapsed: new Set() };

export async function trees() {
  const [all, def] = await Promise.all([api.get('//sys/pool_trees'), api.get('//sys/pool_trees/@default_tree')]);
  return { names: Object.keys(all).sort(), def };
}

export function poolsOf(tree) {
  return api.get(`${ORCHID}/scheduling_info_per_pool_tree/${tree}/fair_share_info/pools`);
}

function integral(p) {
  const t = p.integral_guarantee_type || 'none';
  if (t === 'none') return '';
  const flow = p.specified_resource_flow_ratio ? ` flow ${pct(p.specified_resource_flow_ratio)}` : '';
  const burst = p.specified_burst_ratio ? ` burst ${pct(p.specified_burst_ratio)}` : '';
  return `${t}${flow}${burst}`;
}

function limits(p) {
  const ls = p.limits_share || {};
  return Object.values(ls).some((v) => v > 0 && v < 1) ? resources(p.resource_limits) : '';
}

// width: the columns of short values keep theirs (CSS), the others share the rest of the page.
const COLUMNS = [
  { key: 'name', title: 'Pool', value: (p) => p.name },
  { key: 'mode', title: 'Mode', value: (p) => p.mode, width: '6.2em' },
  { key: 'weight', title: 'Weight', value: (p) => p.weight, width: '5em' },
  { key: 'strong', title: 'Strong guarantee', value: (p) => p.strong_guarantee_ratio },
  { key: 'integral', title: 'Integral guarantee', value: (p) => integral(p) },
  { key: 'fair_share', title: 'Fair share / usage / demand', value: (p) => p.fair_share_ratio },
  { key: 'usage', title: 'Usage', value: (p) => p.usage_ratio, width: '5.5em' },
  { key: 'demand', title: 'Demand', value: (p) => p.demand_ratio, width: '6em' },
  { key: 'dominant', title: 'Dominant', value: (p) => p.dominant_resource, width: '6.5em' },
  { key: 'starvation', title: 'Starvation', value: (p) => p.starvation_status, width: '9.5em' },
  { key: 'ops', title: 'Operations', value: (p) => p.operation_count, width: '7.5em' },
  { key: 'limits', title: 'Limits', value: (p) => limits(p) },
];

// Sort keys: one per pool and column, computed once per reply (a comparison reads two keys).
function poolKey(col, p) {
  const cache = p.psKeys || (p.psKeys = {});
  if (!(col.key in cache)) cache[col.key] = sortKey(col.value(p));
  return cache[col.key];
}

// Depth-first order, siblings sorted by the chosen column; with a filter, the matching pools
// and their ancestors. Returns [[pool, depth]...] and the map parent -> children.
function ordered(pools) {
  const kids = new Map();
  for (const [name, p] of Object.entries(pools)) {
    p.name = name;
    if (name === ROOT) continue;
    const parent = p.parent || ROOT;
    if (!kids.has(parent)) kids.set(parent, []);
    kids.get(parent).push(p);
  }
  const col = COLUMNS.find((c) => c.key === view.sort) || COLUMNS[0];
  const sign = view.desc ? -1 : 1;
  const cmp = (a, b) => sign * compareKeys(poolKey(col, a), poolKey(col, b)) || collator.compare(a.name, b.name);
  for (const list of kids.values()) list.sort(cmp);
  let keep = null;
  if (view.filter) {
    keep = new Set();
    const f = view.filter.toLowerCase();
    for (const p of Object.values(pools)) {
      if (!p.name.toLowerCase().includes(f)) continue;
      for (let q = p; q && !keep.has(q.name); q = pools[q.parent]) keep.add(q.name);
    }
    keep.add(ROOT);
  }
  const out = [];
  const walk = (p, depth) => {
    if (keep && !keep.has(p.name)) return;
    out.push([p, depth]);
    if (view.collapsed.has(p.name) && !keep) return;
    for (const c of kids.get(p.name) || []) walk(c, depth + 1);
  };
  if (pools[ROOT]) walk(pools[ROOT], 0);
  return { out, kids };
}

// A pool's row: every cell one line (a long value cut, its whole text in the cell's title).
function row(tree, p, depth, hasKids) {
  const toggle = hasKids ? `<button class="toggle" data-toggle="${esc(p.name)}">${view.collapsed.has(p.name) ? '+' : '−'}</button>` : '<span class="toggle"></span>';
  const name = p.name === ROOT ? esc(ROOT) : `<a href="#/pool/${encodeURIComponent(tree)}/${encodeURIComponent(p.name)}">${esc(p.name)}</a>`;
  const strong = p.strong_guarantee_ratio ? `${pct(p.strong_guarantee_ratio)} ${resources(p.inferred_strong_guarantee_resources)}` : '';
  const running = `${p.running_operation_count ?? 0} / ${p.operation_count ?? 0}`;
  const cells = [
    [`<span style="padding-left:${depth * 1.2}em">${toggle}${name}</span>`, p.name],
    [esc(p.mode), p.mode], [num(p.weight), num(p.weight)], [esc(strong), strong],
    [esc(integral(p)), integral(p)],
    [`<div class="share">${shareBars(p.fair_share_ratio, p.usage_ratio, p.demand_ratio)}<span class="fs">${pct(p.fair_share_ratio)}</span></div>`, ''],
    [pct(p.usage_ratio), pct(p.usage_ratio)], [pct(p.demand_ratio), pct(p.demand_ratio)], [esc(p.dominant_resource), p.dominant_resource],
    [`<span class="starv-${esc(p.starvation_status)}">${esc(p.starvation_status)}</span>`, p.starvation_status],
    [running, running],
    [esc(limits(p)), limits(p)],
  ];
  return `<tr data-pool="${esc(p.name)}" data-fair-share="${p.fair_share_ratio}">${cells.map(([c, tip]) => `<td${tipAttr(tip)}>${c}</td>`).join('')}</tr>`;
}

// The table is virtualised (vtable.js): a sort, filter, fold or refresh recomputes the order
// (sort keys cached per reply) and renders the window of it in the viewport.
const vt = vtable({
  id: 'pools-table', cols: COLUMNS.length,
  key: ([p]) => p.name,
  html: ([p, d]) => row(view.tree, p, d, view.kids.has(p.name)),
});

function layout() {
  const { out, kids } = ordered(view.pools);
  view.rows = out;
  view.kids = kids;
}

// Renders the table from view.pools: builds it the first time (or for another tree), else
// repaints the window of rows.
function render(main) {
  layout();
  let tbl = main.querySelector('#pools-table');
  if (!tbl || tbl.dataset.tree !== view.tree) {
    const html = `<table id="pools-table" class="pools vtable" data-tree="${esc(view.tree)}"><thead><tr>${tableHead(COLUMNS, view)}</tr></thead><tbody></tbody></table>`;
    if (tbl) tbl.outerHTML = html;
    else main.insertAdjacentHTML('beforeend', html);
    tbl = main.querySelector('#pools-table');
    bindSortHead(tbl, view, () => render(main));
    tbl.tBodies[0].addEventListener('click', (ev) => {
      const b = ev.target.closest('[data-toggle]');
      if (!b) return;
      const n = b.dataset.toggle;
      if (view.collapsed.has(n)) view.collapsed.delete(n); else view.collapsed.add(n);
      render(main);
    });
    vt.reset();
  }
  vt.show(tbl, view.rows);
}

export async function poolsPage(main, params, timing) {
  const t = await trees();
  view.tree = params[0] || view.tree || t.def;
  const t0 = performance.now();
  const [pools, alerts] = await Promise.all([poolsOf(view.tree),
    api.get(`${ORCHID}/scheduling_info_per_pool_tree/${view.tree}/alerts`).catch(() => [])]);
  const fetched = performance.now();
  view.pools = pools;
  const table = main.querySelector('#pools-table');
  if (!table || table.dataset.tree !== view.tree) {   // a new page, not a refresh of this one
    const opts = t.names.map((n) => `<option${n === view.tree ? ' selected' : ''}>${esc(n)}</option>`).join('');
    main.innerHTML = `<h1>Pools</h1><div class="toolbar">Tree <select id="tree">${opts}</select>
      <input id="filter" placeholder="filter pools" value="${esc(view.filter)}">
      <span class="legend"><i class="bar fair"></i>fair share <i class="bar usage"></i>usage <i class="bar demand"></i>demand (of the cluster)</span>
      <span class="count" id="pool-count"></span></div><ul id="tree-alerts" class="alerts"></ul>`;
    main.querySelector('#tree').addEventListener('change', (e) => { location.hash = `#/pools/${encodeURIComponent(e.target.value)}`; });
    main.querySelector('#filter').addEventListener('input', (e) => { view.filter = e.target.value; render(main); });
  }
  setHtml(main.querySelector('#pool-count'), `${Object.keys(pools).length - 1} pools`);
  setHtml(main.querySelector('#tree-alerts'), (alerts || []).map((a) => `<li class="error">${esc(a.message)}</li>`).join(''));
  render(main);
  if (timing) timing({ fetch_ms: fetched - t0, render_ms: performance.now() - fetched, pools: Object.keys(pools).length });
}

function poolPath(tree, pools, name) {
  const chain = [];
  for (let p = name; p && p !== ROOT; p = pools[p] && pools[p].parent) chain.unshift(p);
  return `//sys/pool_trees/${tree}/${chain.join('/')}`;
}

// upstream's user-managed pool attributes (TSchedulerPoolManager::IsUserManagedAttribute, as
// the server's user_managed in src/server/api_cypress.c; ui_browser.sh checks they agree):
// `write` sets them, every other attribute also needs `administer`.
const USER_MANAGED = ['weight', 'max_operation_count', 'max_running_operation_count', 'min_share_resources',
  'strong_guarantee_resources', 'forbid_immediate_operations', 'mode', 'fifo_sort_parameters', 'resource_limits',
  'create_ephemeral_subpools', 'ephemeral_subpool_config', 'abc'];

// The effective ACL (the pool's @effective_acl): its own ACEs and those it inherits, in the
// order a check reads them, each with the object it is set on.
function aclTable(acl, path) {
  const own = `node ${path}`;
  const rows = acl.map((a) => `<tr class="ace-${esc(a.action)}"><td>${esc(a.action)}</td><td>${esc(a.subjects.join(', '))}</td>
    <td>${esc(a.permissions.join(', '))}</td><td>${esc(a.inheritance_mode)}</td>
    <td class="ace-from">${a.from === own ? 'this pool' : esc(a.from.replace(/^node /, ''))}</td></tr>`).join('');
  return `<table id="effective-acl" class="acl"><thead><tr><th>Action</th><th>Subjects</th><th>Permissions</th><th>Inheritance</th><th>Set on</th></tr></thead>
    <tbody>${rows || '<tr><td colspan="5">no ACEs: only superusers have access</td></tr>'}</tbody></table>`;
}

function diffTable(diff) {
  const rows = Object.entries(diff.pools || {}).filter(([, d]) => d.changed).map(([name, d]) => {
    const b = d.before ? d.before.fair_share.total : null, a = d.after ? d.after.fair_share.total : null;
    return `<tr data-pool="${esc(name)}"><td>${esc(name)}</td><td>${pct(b)}</td><td>${pct(a)}</td><td>${b != null && a != null ? (a > b + 1e-6 ? '▲' : a < b - 1e-6 ? '▼' : '') : ''}</td></tr>`;
  }).join('');
  const alerts = ((diff.alerts && diff.alerts.after) || []).map((x) => `<li>${esc(x.message)}</li>`).join('');
  return `<table class="diff"><thead><tr><th>Pool</th><th>Fair share now</th><th>After</th><th></th></tr></thead><tbody>${rows || '<tr><td colspan="4">no fair share changes</td></tr>'}</tbody></table>${alerts ? `<ul class="alerts">${alerts}</ul>` : ''}`;
}

export async function poolPage(main, [tree, name]) {
  const pools = await poolsOf(tree);
  const p = pools[name];
  if (!p) { main.innerHTML = errorBox({ message: `no pool "${name}" in tree "${tree}"` }); return; }
  const path = poolPath(tree, pools, name);
  const [attrs, ops, me, acl, may] = await Promise.all([api.get(`${path}/@`), api.listOperations({ pool: name, limit: 100 }),
    api.currentUser(), api.get(`${path}/@effective_acl`), api.may(path, ['write', 'administer'])]);
  // the editor offers the attributes this user may set: all with administer, else the user-managed
  const editable = Object.keys(attrs).filter((k) => may.administer || USER_MANAGED.includes(k));
  const canEdit = may.write && editable.length > 0;
  const first = editable.includes('weight') ? 'weight' : editable[0];
  const attrRows = Object.entries(attrs).map(([k, v]) => `<tr data-attr="${esc(k)}"><th>${esc(k)}</th><td><code>${esc(JSON.stringify(v))}</code></td></tr>`).join('');
  const vol = Object.entries(p.accumulated_resource_volume || {}).filter(([, v]) => v).map(([k, v]) => `${k}=${num(v)}`).join(' ');
  const cap = Object.entries(p.integral_pool_capacity || {}).filter(([, v]) => v).map(([k, v]) => `${k}=${num(v)}`).join(' ');
  const opRows = ops.operations.map((o) => `<tr><td><a href="#/operation/${esc(o.id)}">${esc(o.id)}</a></td><td>${esc(o.user)}</td><td>${esc(o.state)}</td><td>${o.brief_progress.jobs.running}/${o.brief_progress.jobs.total}</td><td>${time(o.start_time)}</td></tr>`).join('');
  main.innerHTML = `<h1>Pool ${esc(name)} <small>tree ${esc(tree)} · <code>${esc(path)}</code> ·
    <a href="#/charts/${encodeURIComponent(tree)}?pools=${encodeURIComponent(name)}">charts</a></small></h1>
  <section class="cards">
    <div><b>Fair share</b> <span id="pool-fair-share">${pct(p.fair_share_ratio)}</span>${shareBars(p.fair_share_ratio, p.usage_ratio, p.demand_ratio)}</div>
    <div><b>Usage</b> ${pct(p.usage_ratio)} <b>Demand</b> ${pct(p.demand_ratio)}</div>
    <div><b>Starvation</b> ${esc(p.starvation_status)} <b>Operations</b> ${p.running_operation_count}/${p.operation_count}</div>
    <div><b>Integral</b> ${esc(p.integral_guarantee_type)} · volume <span id="integral-volume">${esc(vol || '0')}</span> · capacity ${esc(cap || '0')}</div>
  </section>
  ${canEdit ? `<h2>Edit an attribute</h2>
  <form id="edit" class="edit">
    <select id="edit-attr">${editable.map((k) => `<option${k === first ? ' selected' : ''}>${esc(k)}</option>`).join('')}</select>
    <input id="edit-value" size="50" value="${esc(JSON.stringify(attrs[first]))}">
    <button type="button" id="edit-preview">Preview</button>
    <button type="submit" id="edit-save">Save</button>
    <span class="hint">JSON value; Preview is a dry run (nothing changes)</span>
    ${may.administer ? '' : '<span class="hint" id="edit-write-only">without administer: the user-managed attributes only</span>'}
  </form>` : `<p class="hint" id="edit-readonly">Signed in as ${esc(me.user)} (role ${esc(me.role)}): editing this pool needs the write permission on it.</p>`}
  <div id="edit-result"></div>
  ${whatIfForm(attrs)}
  <h2>Attributes</h2><table class="kv">${attrRows}</table>
  <h2>Access (effective ACL)</h2>${aclTable(acl, path)}
  <h2>Operations (${ops.operations.length})</h2>
  <table><thead><tr><th>Id</th><th>User</th><th>State</th><th>Running/total jobs</th><th>Started</th></tr></thead><tbody>${opRows}</tbody></table>`;
  bindWhatIf(main, path, name, attrs);
  if (!canEdit) return;
  const attrSel = main.querySelector('#edit-attr'), input = main.querySelector('#edit-value'), out = main.querySelector('#edit-result');
  attrSel.addEventListener('change', () => { input.value = JSON.stringify(attrs[attrSel.value]); });
  const parse = () => {
    try { return { value: JSON.parse(input.value) }; } catch (e) { return { error: `${attrSel.value}: not a JSON value: ${e.message}` }; }
  };
  const run = async (dry) => {
    const v = parse();
    if (v.error) { out.innerHTML = errorBox({ message: v.error }); return; }
    out.innerHTML = '<p>…</p>';
    try {
      const r = await api.set(`${path}/@${attrSel.value}`, v.value, dry);
      if (dry) out.innerHTML = `<div id="dry-run"><h3>Preview: fair shares after setting ${esc(attrSel.value)} = ${esc(input.value)} (not applied)</h3>${diffTable(r)}</div>`;
      else { await poolPage(main, [tree, name]); main.querySelector('#edit-result').innerHTML = `<p class="ok" id="saved">Saved ${esc(attrSel.value)} = ${esc(input.value)}</p>`; }
    } catch (e) { out.innerHTML = `<div id="refusal">${errorBox(e)}</div>`; }
  };
  main.querySelector('#edit-preview').addEventListener('click', () => run(true));
  main.querySelector('#edit').addEventListener('submit', (ev) => { ev.preventDefault(); run(false); });
}
