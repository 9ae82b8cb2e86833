// vtable.js — a virtualised table body, shared by the pools, operations, nodes and jobs tables
// (docs/ui.md "With a large tree"): of a page's ordered rows only those in or near the window's
// viewport are in the DOM, between two spacer rows that keep the table's full height (rows have
// one height, style.css `table.vtable`: cells do not wrap, a long value is cut, its whole text
// in the cell's title). A sort, filter or refresh hands over the
// new order and this renders its window: tens of rows whatever the table's size.
//
// vtable({ id, cols, key(row), html(row) }) -> { reset(), show(tbl, rows) }
//   id: the table element's id (found again on scroll); cols: its column count;
//   key(row): a row's identity (a refresh with the same keys in the window rewrites only the
//   rows whose HTML changed); html(row): the row's <tr>, without a class "spacer".
//   reset(): the table element was replaced (a new page): the next show() draws it afresh.
//   show(tbl, rows): rows is the whole order; renders the rows in the viewport.

const OVERSCAN = 25;          // rows rendered beyond each edge of the viewport
const ROW_PX = 30;            // style.css; measured once per table (zoom)

export function vtable({ id, cols, key, html: rowHtml }) {
  const win = { rows: [], first: 0, last: -1, keys: [], html: [], rowPx: ROW_PX, measured: false };

  function range(tbl) {
    const n = win.rows.length;
    const top = tbl.tBodies[0].getBoundingClientRect().top;   // of the rows, in the viewport
    const h = win.rowPx;
    const first = Math.max(0, Math.floor(-top / h) - OVERSCAN);
    const last = Math.min(n - 1, Math.ceil((window.innerHeight - top) / h) + OVERSCAN);
    return [Math.min(first, Math.max(0, n - 1)), last];
  }

  // Renders the window's rows (range) into the table's body. When the same rows are in the
  // window in the same order (a refresh), only the rows whose HTML changed are rewritten, one
  // by one when they are a few, else in one go; and nothing reads the layout after writing it.
  function paint(tbl, force) {
    const [first, last] = range(tbl);
    const keys = [], html = [];
    for (let i = first; i <= last; i++) {
      keys.push(key(win.rows[i]));
      html.push(rowHtml(win.rows[i]));
    }
    const body = tbl.tBodies[0];
    const same = !force && first === win.first && keys.length === win.keys.length && keys.every((k, i) => k === win.keys[i]);
    const changed = same ? html.reduce((n, h, i) => n + (win.html[i] !== h), 0) : html.length;
    if (same && changed <= 8) {
      const trs = body.rows;
      html.forEach((h, i) => { if (win.html[i] !== h) trs[i + 1].outerHTML = h; });
    } else {
      const below = Math.max(0, win.rows.length - 1 - last);
      body.innerHTML = `<tr class="spacer"${first ? '' : ' hidden'}><td colspan="${cols}" style="height:${first * win.rowPx}px"></td></tr>${html.join('')}`
        + `<tr class="spacer"${below ? '' : ' hidden'}><td colspan="${cols}" style="height:${below * win.rowPx}px"></td></tr>`;
    }
    Object.assign(win, { first, last, keys, html });
    if (same) return;
    // Once per table, the height of a row as drawn (the spacers are sized with it). The columns'
    // widths do not depend on the rows (style.css: fixed layout), so scrolling never moves them.
    const [r1, r2] = [body.rows[1], body.rows[2]];
    if (!win.measured && r2 && !r2.classList.contains('spacer')) {
      win.measured = true;
      const h = r2.getBoundingClientRect().top - r1.getBoundingClientRect().top;
      if (h > 0 && Math.abs(h - win.rowPx) > 0.01) { win.rowPx = h; paint(tbl, true); }
    }
  }

  // The rows for a new scroll position, once per frame.
  let scrollPending = false;
  function onScroll() {
    if (scrollPending) return;
    scrollPending = true;
    requestAnimationFrame(() => {
      scrollPending = false;
      const tbl = document.getElementById(id);
      if (!tbl || !tbl.tBodies[0]) return;
      const [first, last] = range(tbl);
      if (first !== win.first || last !== win.last) paint(tbl);
    });
  }
  window.addEventListener('scroll', onScroll, { passive: true });
  window.addEventListener('resize', onScroll, { passive: true });

  return {
    reset() { win.keys = []; win.measured = false; },
    show(tbl, rows) {
      win.rows = rows;
      tbl.dataset.rows = String(rows.length);   // rows in the order, in the DOM or not
      paint(tbl);
    },
  };
}
