// nodes.js — the nodes the scheduler knows (#/nodes): state, tags, tree, resources used of
// total, running jobs, bans and alerts (the orchid's nodes map).
import { api, ORCHID } from './api.js';
import { esc, resources, time, table, bindSort } from './util.js';

const view = { sort: 'id', desc: false };

function used(n) {
  const l = n.resource_limits || {}, u = n.resource_usage || {};
  return ['cpu', 'memory', 'user_slots'].map((k) => {
    const f = l[k] ? Math.min(1, (u[k] || 0) / l[k]) : 0;
    return `<div class="res"><span>${k}</span><div class="bars"><div class="bar usage" style="width:${100 * f}%"></div></div>`
      + `<small>${esc(resources({ [k]: u[k] || 0 }).replace(/^.*=/, '') || '0')} / ${esc(resources({ [k]: l[k] }).replace(/^.*=/, ''))}</small></div>`;
  }).join('');
}

const COLUMNS = [
  { key: 'id', title: 'Node' },
  { key: 'state', title: 'State', html: (n) => `<span class="state-${esc(n.state)}">${esc(n.state)}</span>${n.banned ? ` <span class="error">banned${n.ban_message ? `: ${esc(n.ban_message)}` : ''}</span>` : ''}` },
  { key: 'tags', title: 'Tags', value: (n) => (n.tags || []).join(','), html: (n) => esc((n.tags || []).join(', ')) },
  { key: 'tree', title: 'Tree', html: (n) => esc(n.tree ?? '') },
  { key: 'resources', title: 'Used / total', value: (n) => (n.resource_usage || {}).cpu, html: used },
  { key: 'running_job_count', title: 'Running jobs' },
  { key: 'last_heartbeat_time', title: 'Last heartbeat', html: (n) => time(n.last_heartbeat_time) },
  { key: 'alerts', title: 'Alerts', value: (n) => (n.alerts || []).length, html: (n) => esc((n.alerts || []).map((a) => a.message).join('; ')) },
];

export async function nodesPage(main) {
  const nodes = await api.get(`${ORCHID}/nodes`);
  const rows = Object.entries(nodes).map(([id, n]) => ({ id, ...n, _attrs: ` data-node="${esc(id)}"` }));
  const render = () => {
    main.innerHTML = `<h1>Nodes</h1><p class="count">${rows.length} nodes, ${rows.filter((n) => n.state === 'online').length} online</p>${table(COLUMNS, rows, view, 'id="nodes-table"')}`;
    bindSort(main, view, render);
  };
  render();
}
