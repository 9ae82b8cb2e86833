// The parameters of a request the official YTsaurus wrapper sent: base64 JSON split over the
// X-YT-Parameters-0, -1, ... headers (Playwright's request.headers(): lower-case names). Shared
// by the tests and measure.js, which replace the page's `get` of one orchid path.
'use strict';

function ytParams(headers) {
  const chunks = Object.keys(headers).filter((k) => /^x-yt-parameters-\d+$/.test(k))
    .sort((a, b) => Number(a.split('-').pop()) - Number(b.split('-').pop()));
  return JSON.parse(Buffer.from(chunks.map((k) => headers[k]).join(''), 'base64').toString() || '{}');
}

// Routes the page's `get` of one path (GET_ROUTE) to the real reply with its value replaced
// by `value` (the reply's shape kept: {value} or the bare value); other gets go on to the
// routes set before (another replaceGet: several paths replaced at once), else to the server.
// page.unroute(GET_ROUTE) ends them.
const GET_ROUTE = '**/api/v4/get**';
function replaceGet(page, path, value) {
  return page.route(GET_ROUTE, async (route) => {
    if (ytParams(route.request().headers()).path !== path) return route.fallback();
    const r = await route.fetch();
    const body = await r.json();
    return route.fulfill({ response: r, body: JSON.stringify(body.value !== undefined ? { ...body, value } : value) });
  });
}

module.exports = { ytParams, replaceGet, GET_ROUTE };
