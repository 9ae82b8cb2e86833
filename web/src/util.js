// util.js — small helpers shared by the pages: escaping, formatting, bars, sortable tables.

export function esc(s) {
  return String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}

export function pct(x) { return x == null || !isFinite(x) ? '' : `${(100 * x).toFixed(1)}%`; }

export function num(x, digits = 2) {
  if (x == null || !isFinite(x)) return '';
  return Number.isInteger(x) ? String(x) : x.toFixed(digits);
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
export function bytes(x) {
  if (x == null || !isFinite(x)) return '';
  let i = 0;
  while (Math.abs(x) >= 1024 && i < UNITS.length - 1) { x /= 1024; i++; }
  return `${i ? x.toFixed(1) : x} ${UNITS[i]}`;
}

// {cpu: 2, memory: 4294967296, user_slots: 4} -> "cpu=2 memory=4.0 GiB user_slots=4" (zeros left out)
export function resources(r) {
  if (!r) return '';
  return Object.entries(r).filter(([, v]) => v)
    .map(([k, v]) => `${k}=${k === 'memory' ? bytes(v) : num(v)}`).join(' ');
}

export function time(t) {
  if (t == null) return '';
  const d = typeof t === 'number' ? new Date(t) : new Date(t);
  return isNaN(d) ? String(t) : d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

// Fair share, usage and demand as three bars on one scale (0..1 of the cluster).
export function shareBars(fair, usage, demand) {
  const w = (x) => `${Math.max(0, Math.min(1, x || 0)) * 100}%`;
  return `<div class="bars" title="fair share ${pct(fair)}, usage ${pct(usage)}, demand ${pct(demand)}">`
    + `<div class="bar fair" style="width:${w(fair)}"></div>`
    + `<div class="bar usage" style="width:${w(usage)}"></div>`
    + `<div class="bar demand" style="width:${w(demand)}"></div></div>`;
}

// A sortable table: columns [{key, title, html(row), value(row)}]; state {sort, desc} kept by
// the caller so a refresh keeps the order.
export function table(columns, rows, state, attrs = '') {
  if (state.sort) {
    const col = columns.find((c) => c.key === state.sort);
    if (col) {
      const val = col.value || ((r) => r[col.key]);
      rows = [...rows].sort((a, b) => {
        const x = val(a), y = val(b);
        const c = typeof x === 'number' && typeof y === 'number' ? x - y : String(x ?? '').localeCompare(String(y ?? ''));
        return state.desc ? -c : c;
      });
    }
  }
  const head = columns.map((c) => `<th data-sort="${c.key}"${state.sort === c.key ? ` class="${state.desc ? 'desc' : 'asc'}"` : ''}>${esc(c.title)}</th>`).join('');
  const body = rows.map((r) => `<tr${r._attrs || ''}>${columns.map((c) => `<td class="c-${c.key}">${c.html ? c.html(r) : esc(r[c.key])}</td>`).join('')}</tr>`).join('');
  return `<table ${attrs}><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

// Clicking a header sorts by it (again: reverses); onChange re-renders.
export function bindSort(root, state, onChange) {
  root.querySelectorAll('th[data-sort]').forEach((th) => th.addEventListener('click', () => {
    if (state.sort === th.dataset.sort) state.desc = !state.desc;
    else { state.sort = th.dataset.sort; state.desc = false; }
    onChange();
  }));
}

export function errorBox(e) {
  return `<div class="error"${e.code != null ? ` data-code="${esc(e.code)}"` : ''}>${esc(e.message)}${e.code != null ? ` <small>(error ${esc(e.code)})</small>` : ''}</div>`;
}
