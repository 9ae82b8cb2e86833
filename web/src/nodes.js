// nodes.js — the nodes the scheduler knows (#/nodes): state, tags, tree, CPU, memory and slots
// used of total, running jobs, bans and alerts (the orchid's nodes map). The table is
// virtualised (vtable.js): a cluster's 10,000 nodes, tens of rows in the DOM; a sort or filter
// reorders the rows (each key computed once per reply) and renders the window in the viewport.
import { api, ORCHID } from './api.js';
import { esc, bytes, num, time, sortRows, tableHead, rowHtml, bindSortHead, setHtml } from './util.js';
import { vtable } from './vtable.js';

const view = { sort: 'id', desc: false, filter: '', nodes: [], online: 0 };

// A resource's share of the node's limit (the sort key) and its cell: a bar and used / total.
const share = (n, k) => {
  const l = (n.resource_limits || {})[k], u = (n.resource_usage || {})[k] || 0;
  return l ? u / l : 0;
};
const fmtOf = (k) => (k === 'memory' ? bytes : num);
const usedOf = (n, k) => `${fmtOf(k)((n.resource_usage || {})[k] || 0)} / ${fmtOf(k)((n.resource_limits || {})[k] || 0)}`;
function resourceCell(k) {
  return (n) => `<div class="res"><div class="bars"><div class="bar usage" style="width:${100 * Math.min(1, share(n, k))}%"></div></div>`
    + `<small>${esc(usedOf(n, k))}</small></div>`;
}
const nodeState = (n) => `${n.state}${n.banned ? ` banned${n.ban_message ? `: ${n.ban_message}` : ''}` : ''}`;
const nodeAlerts = (n) => (n.alerts || []).map((a) => a.message).join('; ');

// width: as in pools.js (the columns without one share the rest of the page)
const COLUMNS = [
  { key: 'id', title: 'Node' },
  { key: 'state', title: 'State', html: (n) => `<span class="state-${esc(n.state)}">${esc(n.state)}</span>${n.banned ? ` <span class="error">banned${n.ban_message ? `: ${esc(n.ban_message)}` : ''}</span>` : ''}`, tip: nodeState },
  { key: 'tags', title: 'Tags', value: (n) => (n.tags || []).join(','), html: (n) => esc((n.tags || []).join(', ')), tip: (n) => (n.tags || []).join(', ') },
  { key: 'tree', title: 'Tree', html: (n) => esc(n.tree ?? ''), tip: (n) => n.tree ?? '' },
  ...['cpu', 'memory', 'user_slots'].map((k) => ({ key: k, title: `${k} used / total`, value: (n) => share(n, k), html: resourceCell(k), tip: (n) => usedOf(n, k) })),
  { key: 'running_job_count', title: 'Running jobs', width: '6em' },
  { key: 'last_heartbeat_time', title: 'Last heartbeat', width: '13.5em', html: (n) => time(n.last_heartbeat_time), tip: (n) => time(n.last_heartbeat_time) },
  { key: 'alerts', title: 'Alerts', value: (n) => (n.alerts || []).length, html: (n) => esc(nodeAlerts(n)), tip: nodeAlerts },
];

const vt = vtable({ id: 'nodes-table', cols: COLUMNS.length, key: (n) => n.id,
  html: (n) => rowHtml(COLUMNS, n, ` data-node="${esc(n.id)}"`) });

// The filter matches a node's id, state, tree or any tag (case-insensitive substring).
function showRows(main) {
  const f = view.filter.trim().toLowerCase();
  const rows = f ? view.nodes.filter((n) => n.haystack.includes(f)) : view.nodes;
  setHtml(main.querySelector('#node-count'), `${view.nodes.length} nodes, ${view.online} online${f ? `; ${rows.length} match` : ''}`);
  vt.show(main.querySelector('#nodes-table'), sortRows(COLUMNS, rows, view));
}

export async function nodesPage(main, params, timing) {
  const t0 = performance.now();
  const nodes = await api.get(`${ORCHID}/nodes`);
  const fetched = performance.now();
  view.nodes = Object.entries(nodes).map(([id, n]) => ({ id, ...n,
    haystack: [id, n.state, n.tree, ...(n.tags || [])].join('\n').toLowerCase() }));
  view.online = view.nodes.reduce((c, n) => c + (n.state === 'online'), 0);   // per reply, not per keystroke
  let tbl = main.querySelector('#nodes-table');
  if (!tbl) {   // a new page, not a refresh of this one
    main.innerHTML = `<h1>Nodes</h1><div class="toolbar">
      <input id="filter" placeholder="filter: id, state, tree or tag" value="${esc(view.filter)}">
      <span class="count" id="node-count"></span></div>
      <table id="nodes-table" class="vtable"><thead><tr>${tableHead(COLUMNS, view)}</tr></thead><tbody></tbody></table>`;
    tbl = main.querySelector('#nodes-table');
    vt.reset();
    bindSortHead(tbl, view, () => showRows(main));
    main.querySelector('#filter').addEventListener('input', (e) => { view.filter = e.target.value; showRows(main); });
  }
  showRows(main);
  if (timing) timing({ fetch_ms: fetched - t0, render_ms: performance.now() - fetched, nodes: view.nodes.length });
}
