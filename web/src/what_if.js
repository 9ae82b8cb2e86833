// what_if.js — the "What if" form of a pool's page: a proposed change of this pool (weight,
// guarantee, limits, ...) replayed over the cluster's recent past (docs/what-if.md) through the
// scheduler's what-if task (start_what_if, get_what_if: docs/api.md "What if"); shows the
// task's progress, then per pool and per user recorded -> changed, and links the report.
import { api } from './api.js';
import { esc, num, errorBox } from './util.js';

const ATTRS = ['weight', 'strong_guarantee_resources', 'resource_limits', 'max_running_operation_count', 'max_share_ratio'];
const POLL_MS = 500;

export function whatIfForm(attrs) {
  const opts = ATTRS.map((k) => `<option${k === 'weight' ? ' selected' : ''}>${esc(k)}</option>`).join('');
  return `<h2>What if</h2>
  <form id="what-if" class="edit">
    <select id="what-if-attr">${opts}</select>
    <input id="what-if-value" size="30" value="${esc(JSON.stringify(attrs.weight ?? 1))}">
    since <input id="what-if-since" size="6" value="1h">
    <button type="submit" id="what-if-run">Replay</button>
    <span class="hint">JSON value; the cluster's past since then (7d, 12h, 30m) replayed as recorded and with this change</span>
  </form>
  <div id="what-if-result"></div>`;
}

const seconds = (ms) => (ms == null ? '' : (ms / 1000).toFixed(1));
const COLS = [['wait p50 s', 'wait_p50_ms', seconds], ['wait p95 s', 'wait_p95_ms', seconds],
  ['usage', 'mean_usage', (x) => num(x, 3)], ['preempted', 'preempted_jobs', num], ['jobs done', 'jobs_completed', num]];

function table(what, rec, chg, mark) {
  const names = [...new Set([...Object.keys(rec || {}), ...Object.keys(chg || {})])].sort();
  const rows = names.map((n) => {
    const a = (rec || {})[n] || {}, b = (chg || {})[n] || {};
    const cells = COLS.map(([, k, f]) => `<td data-key="${k}" data-recorded="${a[k] ?? ''}" data-changed="${b[k] ?? ''}">${f(a[k])} → ${f(b[k])}</td>`).join('');
    return `<tr data-${what}="${esc(n)}"${n === mark ? ' class="this"' : ''}><td>${esc(n)}</td>${cells}</tr>`;
  }).join('');
  return `<table id="what-if-${what}s" class="diff"><thead><tr><th>${what}</th>${COLS.map(([t]) => `<th>${t}<br>recorded → changed</th>`).join('')}</tr></thead><tbody>${rows}</tbody></table>`;
}

function answer(task, pool) {
  const r = task.result, f = r.fidelity;
  const fid = `fidelity of the no-change replay: start error p50 ${seconds(f.start_error_p50_ms)} s, usage error ${num(f.usage_error_mean, 3)}: ${f.within_tolerance ? 'within tolerance' : '<b>OUTSIDE tolerance</b>'}`;
  // a window asked from before the event log's record starts where the record does
  const clipped = r.requested_since < r.since ? ' <span id="what-if-window-start">(the event log starts here: it holds nothing before)</span>' : '';
  return `<div id="what-if-answer"><p>${esc(new Date(r.since).toISOString())}${clipped} – ${esc(new Date(r.until).toISOString())}, tree ${esc(r.tree)}; ${fid}.
    <a id="what-if-report" href="${esc(task.report)}" target="_blank" rel="noopener">report</a></p>
    ${table('pool', r.recorded.pools, r.changed.pools, pool)}${table('user', r.recorded.users, r.changed.users, null)}</div>`;
}

export function bindWhatIf(main, path, pool, attrs) {
  const form = main.querySelector('#what-if');
  const out = main.querySelector('#what-if-result');
  const attrSel = main.querySelector('#what-if-attr');
  attrSel.addEventListener('change', () => { main.querySelector('#what-if-value').value = JSON.stringify(attrs[attrSel.value] ?? null); });
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const attr = attrSel.value, text = main.querySelector('#what-if-value').value;
    let value;
    try { value = JSON.parse(text); } catch (e) { out.innerHTML = errorBox({ message: `${attr}: not a JSON value: ${e.message}` }); return; }
    const button = main.querySelector('#what-if-run');
    button.disabled = true;
    // start_what_if answers once the record is read and both scenarios are built (seconds for a
    // long window): say so meanwhile
    out.innerHTML = '<p id="what-if-starting">Reading the cluster\'s record…</p>';
    try {
      const { id } = await api.startWhatIf({ since: main.querySelector('#what-if-since').value, set: { [`${path}/@${attr}`]: value } });
      for (;;) {
        const task = await api.getWhatIf(id);
        if (task.state === 'running') {
          out.innerHTML = `<p>Replaying (${esc(task.run)} run) <progress id="what-if-progress" max="100" value="${task.progress}"></progress> ${task.progress}%</p>`;
          await new Promise((r) => setTimeout(r, POLL_MS));
          continue;
        }
        out.innerHTML = task.state === 'completed' ? answer(task, pool) : `<div id="what-if-error">${errorBox({ message: task.error })}</div>`;
        break;
      }
    } catch (e) {
      out.innerHTML = `<div id="what-if-error">${errorBox(e)}</div>`;
    } finally {
      button.disabled = false;
    }
  });
}
