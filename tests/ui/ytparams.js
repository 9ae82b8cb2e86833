// The parameters of a request the official YTsaurus wrapper sent: base64 JSON split over the
// X-YT-Parameters-0, -1, ... headers (Playwright's request.headers(): lower-case names). Shared
// by the tests and measure.js, which route the page's `get` of one orchid path.
'use strict';

function ytParams(headers) {
  const chunks = Object.keys(headers).filter((k) => /^x-yt-parameters-\d+$/.test(k))
    .sort((a, b) => Number(a.split('-').pop()) - Number(b.split('-').pop()));
  return JSON.parse(Buffer.from(chunks.map((k) => headers[k]).join(''), 'base64').toString() || '{}');
}

module.exports = { ytParams };
