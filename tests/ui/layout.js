// The page's layout at the window's width, as a list of problems (empty: none): the page does
// not scroll sideways (document.scrollingElement.scrollWidth <= clientWidth); no element of the
// page (the header's Log out, a table's columns, an alert, a card, a chart) reaches past the
// window's right edge, unless an ancestor clips it (a cell that cuts its value); no chart is
// wider than its box; and every value
// cut by its box (scrollWidth > clientWidth: a table cell, the header's user) carries its whole
// text in a title. Shared by layout.test.js and report.test.js.
'use strict';

async function layoutProblems(page) {
  return page.evaluate(() => {
    const out = [];
    const de = document.scrollingElement;
    const W = de.clientWidth;
    if (de.scrollWidth > W) out.push(`the page scrolls sideways: scrollWidth ${de.scrollWidth} > clientWidth ${W}`);
    const name = (el) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${el.className && typeof el.className === 'string' ? `.${el.className.trim().split(/\s+/).join('.')}` : ''}`
      + ` "${(el.textContent || '').trim().slice(0, 40)}"`;
    const clips = (el) => ['hidden', 'clip', 'auto', 'scroll'].includes(getComputedStyle(el).overflowX);
    const walk = (el, clipped) => {
      for (const c of el.children) {
        const r = c.getBoundingClientRect();
        if (!clipped && (r.width || r.height) && (r.right > W + 0.5 || r.left < -0.5))
          out.push(`${name(c)} spans ${Math.round(r.left)}..${Math.round(r.right)} px, the window ${W} px`);
        walk(c, clipped || clips(c));
      }
    };
    walk(document.body, false);
    // a chart (uPlot's canvas, axes and legend) inside its box
    for (const c of document.querySelectorAll('.chart')) {
      const box = c.getBoundingClientRect(), u = c.querySelector('.uplot');
      const r = u && u.getBoundingClientRect();
      if (r && (r.right > box.right + 0.5 || r.left < box.left - 0.5))
        out.push(`the chart "${c.dataset.title}" spans ${Math.round(r.left)}..${Math.round(r.right)} px, its box ${Math.round(box.left)}..${Math.round(box.right)} px`);
    }
    // a cut value: its visible text (without buttons such as a pool's fold toggle) in the title
    for (const el of document.querySelectorAll('table.vtable td, #who')) {
      if (el.scrollWidth <= el.clientWidth + 1) continue;
      const copy = el.cloneNode(true);
      copy.querySelectorAll('button').forEach((b) => b.remove());
      const text = copy.textContent.trim();
      if (!el.title || !el.title.includes(text)) out.push(`${name(el)} is cut without its text in a title (title "${el.title}")`);
    }
    return out;
  });
}

// The cells cut at this width (their titles): a test shows its long values were there and cut.
function cutTitles(page, selector) {
  return page.$$eval(selector, (els) => els.filter((el) => el.scrollWidth > el.clientWidth + 1).map((el) => el.title));
}

module.exports = { layoutProblems, cutTitles, WIDTHS: [1280, 1400, 1920] };
