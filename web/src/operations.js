// operations.js — the operations list with filters and counters (#/operations?pool=&user=&state=)
// and an operation's page (#/operation/<id>): spec, resulting spec, progress, pending reason,
// alerts, and its jobs with node, CPU limit and guarantee (reclaim), memory, stderr; suspend,
// resume, complete and abort for those who may manage it.
import { api, AUTHORIZATION_ERROR } from './api.js';
import { esc, num, bytes, time, sortRows, tableHead, rowHtml, bindSortHead, setHtml, errorBox } from './util.js';
import { vtable } from './vtable.js';

const view = { pool: '', user: '', state: '', limit: 100, sort: null, desc: false };

function counters(name, counts, key) {
  const items = Object.entries(counts || {}).sort((a, b) => b[1] - a[1]).slice(0, 20)
    .map(([k, n]) => `<a href="#" data-filter="${key}" data-value="${esc(k)}" class="${view[key] === k ? 'on' : ''}">${esc(k)} <b>${n}</b></a>`).join(' ');
  return `<div class="counters"><span>${name}:</span> ${items}</div>`;
}

function progress(o) {
  const j = o.brief_progress ? o.brief_progress.jobs : o.progress;
  const w = (n) => (j.total ? (100 * n) / j.total : 0);
  return `<div class="progress" title="running ${j.running}, completed ${j.completed}, failed ${j.failed}, aborted ${j.aborted} of ${j.total}">`
    + `<div class="p-completed" style="width:${w(j.completed)}%"></div><div class="p-running" style="width:${w(j.running)}%"></div></div>`
    + `<span>${j.running} running · ${j.completed}/${j.total}</span>`;
}

const opPools = (o) => Object.entries(o.pool_per_tree || {}).map(([t, p]) => `${t}/${p}`).join(', ');
const opState = (o) => `${o.state}${o.suspended ? ' (suspended)' : ''}`;
// width: as in pools.js (the columns without one share the rest of the page)
const OP_COLUMNS = [
  { key: 'id', title: 'Id', html: (o) => `<a href="#/operation/${esc(o.id)}">${esc(o.id)}</a>`, tip: (o) => o.id },
  { key: 'user', title: 'User' },
  { key: 'state', title: 'State', width: '9em', html: (o) => `<span class="state-${esc(o.state)}">${esc(opState(o))}</span>`, tip: opState },
  { key: 'pool', title: 'Pools', value: (o) => Object.values(o.pool_per_tree || {}).join(','), html: (o) => esc(opPools(o)), tip: opPools },
  { key: 'progress', title: 'Jobs', value: (o) => o.brief_progress.jobs.running, html: progress },
  { key: 'start_time', title: 'Started', width: '13.5em', html: (o) => time(o.start_time), tip: (o) => time(o.start_time) },
];

// The list is virtualised (vtable.js): up to 1,000 operations shown, tens of rows in the DOM.
// A refresh keeps the page (its form, counters and table) and rewrites what changed; a sort
// reorders the rows (each key computed once) and renders the window in the viewport.
const vt = vtable({ id: 'ops-table', cols: OP_COLUMNS.length, key: (o) => o.id, html: (o) => rowHtml(OP_COLUMNS, o, ` data-op="${esc(o.id)}"`) });
let reply = null;

function showRows(tbl) {
  vt.show(tbl, sortRows(OP_COLUMNS, reply.operations, view));
}

export async function operationsPage(main, params, timing, query) {
  for (const k of ['pool', 'user', 'state']) view[k] = query.get(k) || '';
  if ([100, 1000].includes(Number(query.get('limit')))) view.limit = Number(query.get('limit'));
  const t0 = performance.now();
  const r = await api.listOperations({ pool: view.pool, user: view.user, state: view.state, limit: view.limit });
  const fetched = performance.now();
  reply = r;
  const filters = JSON.stringify([view.pool, view.user, view.state, view.limit]);
  let tbl = main.querySelector('#ops-table');
  if (!tbl || tbl.dataset.filters !== filters) {   // a new page, not a refresh of this one
    main.innerHTML = `<h1>Operations</h1>
    <form id="op-filters" class="toolbar">
      Pool <input name="pool" value="${esc(view.pool)}"> User <input name="user" value="${esc(view.user)}">
      State <select name="state">${['', 'pending', 'running', 'completed', 'failed', 'aborted'].map((s) => `<option${s === view.state ? ' selected' : ''}>${s}</option>`).join('')}</select>
      Show <select name="limit">${[100, 1000].map((n) => `<option${n === view.limit ? ' selected' : ''}>${n}</option>`).join('')}</select>
      <button>Filter</button></form>
    <div id="op-counters"></div><p class="count" id="op-count"></p>
    <table id="ops-table" class="vtable"><thead><tr>${tableHead(OP_COLUMNS, view)}</tr></thead><tbody></tbody></table>`;
    tbl = main.querySelector('#ops-table');
    tbl.dataset.filters = filters;
    vt.reset();
    bindSortHead(tbl, view, () => showRows(tbl));
    main.querySelector('#op-filters').addEventListener('submit', (ev) => {
      ev.preventDefault();
      const f = new FormData(ev.target);
      const q = new URLSearchParams();
      for (const k of ['pool', 'user', 'state', 'limit']) if (f.get(k)) q.set(k, f.get(k));
      location.hash = `#/operations?${q}`;
    });
    main.querySelector('#op-counters').addEventListener('click', (ev) => {
      const a = ev.target.closest('[data-filter]');
      if (!a) return;
      ev.preventDefault();
      const q = new URLSearchParams();
      for (const k of ['pool', 'user', 'state']) if (view[k]) q.set(k, view[k]);
      if (view[a.dataset.filter] === a.dataset.value) q.delete(a.dataset.filter); else q.set(a.dataset.filter, a.dataset.value);
      location.hash = `#/operations?${q}`;
    });
  }
  setHtml(main.querySelector('#op-counters'), `${counters('State', r.state_counts, 'state')}${counters('Pool', r.pool_counts, 'pool')}${counters('User', r.user_counts, 'user')}`);
  setHtml(main.querySelector('#op-count'), `${r.operations.length} shown${r.incomplete ? ' (more match: raise Show)' : ''}`);
  showRows(tbl);
  if (timing) timing({ fetch_ms: fetched - t0, render_ms: performance.now() - fetched, operations: r.operations.length });
}

function memory(j) {
  const s = j.statistics || {};
  const peak = s['user_job/max_memory'];
  return `${bytes(j.memory_reserve)} / ${bytes(j.memory_limit)}${peak != null ? ` · peak ${bytes(peak)}` : ''}`;
}

const jobState = (j) => `${j.state}${j.abort_reason ? ` (${j.abort_reason})` : ''}`;
const JOB_COLUMNS = [
  { key: 'id', title: 'Job', html: (j) => `<a href="#" data-stderr="${esc(j.id)}">${esc(j.id)}</a>`, tip: (j) => j.id },
  { key: 'task_name', title: 'Task' },
  { key: 'state', title: 'State', html: (j) => `<span class="state-${esc(j.state)}">${esc(j.state)}</span>${j.abort_reason ? ` (${esc(j.abort_reason)})` : ''}`, tip: jobState },
  { key: 'node_id', title: 'Node' },
  { key: 'cpu_limit', title: 'CPU limit', width: '5.5em', html: (j) => num(j.cpu_limit), tip: (j) => num(j.cpu_limit) },
  { key: 'cpu_guarantee', title: 'CPU guarantee', width: '10em',
    html: (j) => `<span class="${j.cpu_guarantee < j.cpu_limit ? 'reclaimed' : ''}">${num(j.cpu_guarantee)}</span>`,
    tip: (j) => `${num(j.cpu_guarantee)}${j.cpu_guarantee < j.cpu_limit ? ' (reclaimed by the job CPU monitor)' : ''}` },
  { key: 'memory', title: 'Memory reserve / limit · peak', value: (j) => j.memory_reserve, html: (j) => esc(memory(j)), tip: memory },
  { key: 'start_time', title: 'Started', width: '13.5em', html: (j) => time(j.start_time), tip: (j) => time(j.start_time) },
  { key: 'error', title: 'Error', html: (j) => esc(j.error || ''), tip: (j) => j.error || '' },
];

// The jobs table is virtualised too (an operation may have thousands). A refresh keeps the page
// (the open stderr, the spec's folds, the sort of the jobs) and rewrites its cards and rows.
const jobsVt = vtable({ id: 'jobs-table', cols: JOB_COLUMNS.length, key: (j) => j.id,
  html: (j) => rowHtml(JOB_COLUMNS, j, ` data-job="${esc(j.id)}"`) });
const jobView = { id: null, sort: null, desc: false, jobs: [], manage: false };

// The actions an active operation offers to whoever has `manage` on it (its user, its ACL's
// subjects, superusers); none once it finished, none without manage.
function opActions(o) {
  if (!jobView.manage || !['pending', 'running'].includes(o.state)) return '';
  const b = (action, label) => `<button type="button" data-action="${action}" id="op-${action}">${label}</button>`;
  return `${o.suspended ? b('resume', 'Resume') : b('suspend', 'Suspend')} ${b('complete', 'Complete')} ${b('abort', 'Abort')}`;
}

function opCards(o) {
  const p = o.progress || {};
  return `<div><b>State</b> <span class="state-${esc(o.state)}" id="op-state">${esc(o.state)}</span>${o.suspended ? ' (suspended)' : ''} · <b>User</b> ${esc(o.user)} · <b>Type</b> ${esc(o.operation_type)}</div>
    <div><b>Pools</b> ${esc(Object.entries(o.pool_per_tree || {}).map(([t, q]) => `${t}/${q}`).join(', '))} · <b>Started</b> ${time(o.start_time)}${o.finish_time ? ` · <b>Finished</b> ${time(o.finish_time)}` : ''}</div>
    <div><b>Progress</b> ${progress(o)} <small>pending ${p.pending ?? 0}, failed ${p.failed ?? 0}, aborted ${p.aborted ?? 0}</small></div>
    ${o.pending_reason ? `<div><b>Pending reason</b> <span id="pending-reason">${esc(o.pending_reason)}</span></div>` : ''}
    ${o.error ? `<div class="error"><b>Error</b> ${esc(typeof o.error === 'string' ? o.error : o.error.message)}</div>` : ''}`;
}

export async function operationPage(main, [id]) {
  // without `read` on the operation its jobs are not shown (403, YTsaurus error 901)
  const [o, jobs] = await Promise.all([api.getOperation(id), api.listJobs(id).catch((e) => {
    if (e.code !== AUTHORIZATION_ERROR) throw e;
    return { jobs: [], state_counts: {}, denied: e.message };
  })]);
  let tbl = main.querySelector('#jobs-table');
  if (!tbl || tbl.dataset.op !== id) {   // a new page, not a refresh of this one
    if (jobView.id !== id) Object.assign(jobView, { id, sort: null, desc: false });
    jobView.manage = (await api.may(`//sys/operations/${id}`, ['manage'])).manage;
    main.innerHTML = `<h1>Operation <code>${esc(o.id)}</code></h1>
    <section class="cards" id="op-cards"></section><div class="actions" id="op-actions"></div><div id="op-result"></div><div id="op-alerts"></div>
    <h2 id="jobs-title"></h2><pre id="stderr" hidden></pre>
    <table id="jobs-table" class="vtable" data-op="${esc(id)}"><thead><tr>${tableHead(JOB_COLUMNS, jobView)}</tr></thead><tbody></tbody></table>
    <details><summary>Spec</summary><pre>${esc(JSON.stringify(o.spec, null, 2))}</pre></details>
    <details><summary>Resulting spec</summary><pre>${esc(JSON.stringify(o.resulting_spec, null, 2))}</pre></details>`;
    main.querySelector('#op-actions').addEventListener('click', async (ev) => {
      const action = ev.target.dataset && ev.target.dataset.action;
      if (!action || (['abort', 'complete'].includes(action) && !confirm(`${action} operation ${id}?`))) return;
      const out = main.querySelector('#op-result');
      try { await api.operationAction(action, id); out.innerHTML = ''; await operationPage(main, [id]); } catch (e) { out.innerHTML = errorBox(e); }
    });
    tbl = main.querySelector('#jobs-table');
    jobsVt.reset();
    bindSortHead(tbl, jobView, () => jobsVt.show(tbl, sortRows(JOB_COLUMNS, jobView.jobs, jobView)));
    tbl.tBodies[0].addEventListener('click', async (ev) => {
      const a = ev.target.closest('[data-stderr]');
      if (!a) return;
      ev.preventDefault();
      const pre = main.querySelector('#stderr');
      pre.hidden = false;
      try { pre.textContent = `stderr of ${a.dataset.stderr}:\n${await api.jobStderr(id, a.dataset.stderr)}`; } catch (e) { pre.textContent = e.message; }
    });
  }
  const alerts = Object.entries(o.alerts || {}).map(([k, a]) => `<li><b>${esc(k)}</b>: ${esc(a.message)}</li>`).join('');
  setHtml(main.querySelector('#op-cards'), opCards(o));
  setHtml(main.querySelector('#op-actions'), opActions(o));
  setHtml(main.querySelector('#op-alerts'), alerts ? `<h2>Alerts</h2><ul class="alerts">${alerts}</ul>` : '');
  // list_jobs answers at most 1,000 (upstream's default limit); state_counts count them all
  const total = Object.values(jobs.state_counts || {}).reduce((a, n) => a + n, 0);
  setHtml(main.querySelector('#jobs-title'), jobs.denied ? `Jobs <small id="jobs-denied">(not shown: ${esc(jobs.denied)})</small>`
    : `Jobs (${total > jobs.jobs.length ? `the first ${jobs.jobs.length} of ${total}` : jobs.jobs.length})`);
  jobView.jobs = jobs.jobs;
  jobsVt.show(tbl, sortRows(JOB_COLUMNS, jobView.jobs, jobView));
}
