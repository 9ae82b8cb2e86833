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

// Sorting: a row's key is a finite number or a string; numbers come before text (a missing
// value), strings compare with one collator (String.localeCompare builds one per call).
export const collator = new Intl.Collator(undefined, { numeric: true });
export function sortKey(v) { return typeof v === 'number' && isFinite(v) ? v : String(v ?? ''); }
export function compareKeys(x, y) {
  if (typeof x === 'number' && typeof y === 'number') return x - y;
  if (typeof x === 'number') return -1;
  if (typeof y === 'number') return 1;
  return collator.compare(x, y);
}

// The rows ordered by the column state.sort names (columns [{key, value(row)}]; value defaults
// to row[key]), reversed with state.desc; each row's key computed once; ties keep their order.
export function sortRows(columns, rows, state) {
  const col = state.sort && columns.find((c) => c.key === state.sort);
  if (!col) return rows;
  const val = col.value || ((r) => r[col.key]);
  const sign = state.desc ? -1 : 1;
  const keyed = rows.map((r, i) => [sortKey(val(r)), i, r]);
  keyed.sort((a, b) => sign * compareKeys(a[0], b[0]) || a[1] - b[1]);
  return keyed.map((k) => k[2]);
}

// A cell's whole text as its title (shown on hover): a long value is cut to its column's width
// (style.css table.vtable); empty: no title.
export function tipAttr(text) {
  const t = String(text ?? '');
  return t ? ` title="${esc(t)}"` : '';
}

// One row of a table: columns [{key, html(row), tip(row)}] (html defaults to the escaped
// row[key]; tip, the cell's whole text for its title, to row[key] for a column without html);
// attrs go into the <tr> (e.g. ' data-node="n1"').
export function rowHtml(columns, row, attrs = '') {
  return `<tr${attrs}>${columns.map((c) => `<td class="c-${c.key}"${tipAttr(c.tip ? c.tip(row) : c.html ? '' : row[c.key])}>${c.html ? c.html(row) : esc(row[c.key])}</td>`).join('')}</tr>`;
}

// A table's head: columns [{key, title, width}]; a column with a width (CSS, e.g. '6em') keeps
// it, the others share the rest of the table's width (table.vtable: fixed layout).
export function tableHead(columns, state) {
  return columns.map((c) => `<th data-sort="${c.key}"${c.width ? ` style="width:${c.width}"` : ''}${state.sort === c.key ? ` class="${state.desc ? 'desc' : 'asc'}"` : ''}>${esc(c.title)}</th>`).join('');
}

// Clicking a header of tbl sorts by its column (again: reverses) and marks it; onChange
// re-renders. One listener on the head, so it survives the body's repaints.
export function bindSortHead(tbl, state, onChange) {
  tbl.tHead.addEventListener('click', (ev) => {
    const th = ev.target.closest('th[data-sort]');
    if (!th) return;
    if (state.sort === th.dataset.sort) state.desc = !state.desc;
    else { state.sort = th.dataset.sort; state.desc = false; }
    for (const c of tbl.tHead.rows[0].cells) c.className = state.sort === c.dataset.sort ? (state.desc ? 'desc' : 'asc') : '';
    onChange();
  });
}

// Sets an element's HTML only when it changed: a write before a table's paint costs a layout.
export function setHtml(el, html) {
  if (el.psHtml !== html) { el.innerHTML = html; el.psHtml = html; }
}

export function errorBox(e) {
  return `<div class="error"${e.code != null ? ` data-code="${esc(e.code)}"` : ''}>${esc(e.message)}${e.code != null ? ` <small>(error ${esc(e.code)})</small>` : ''}</div>`;
}
