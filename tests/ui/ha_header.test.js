// The web UI's header with standby schedulers (docs/ha.md): the page of the leader says
// "leader · epoch E", the page of a standby (its API calls forwarded to the leader) says
// "standby · epoch E", and the tooltip names the leader and the standbys. Run by
// tests/scripts/ha_forward.py with PS_LEADER_URL, PS_STANDBY_URL, PS_LEADER, PS_STANDBY (the
// addresses), PS_EPOCH, PS_TOKEN, PS_CHROMIUM.
'use strict';
const { chromium } = require('playwright-core');

const env = process.env;
let failed = 0;
function check(name, ok, detail) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${ok ? '' : `: ${detail || ''}`}`);
  if (!ok) failed++;
}

async function header(browser, url) {
  const page = await browser.newPage();
  page.on('pageerror', (e) => check('no script error on the page', false, e.message));
  await page.goto(`${url}/`);
  await page.waitForSelector('#login:not([hidden])');
  await page.fill('#token', env.PS_TOKEN);
  await page.click('#login button[type=submit]');
  await page.waitForSelector('#ha:not([hidden])', { timeout: 60000 });
  const h = { text: await page.textContent('#ha'), title: await page.getAttribute('#ha', 'title') };
  await page.close();
  return h;
}

(async () => {
  const browser = await chromium.launch({ executablePath: env.PS_CHROMIUM, args: ['--no-sandbox'] });
  try {
    const l = await header(browser, env.PS_LEADER_URL);
    check('the leader\'s page: "leader · epoch E"', l.text === `leader · epoch ${env.PS_EPOCH}`, l.text);
    check('its tooltip names it, since when, the standby', l.title.includes(env.PS_LEADER) &&
      / since /.test(l.title) && l.title.includes(`standbys: ${env.PS_STANDBY}`), l.title);
    const s = await header(browser, env.PS_STANDBY_URL);
    check('the standby\'s page: "standby · epoch E"', s.text === `standby · epoch ${env.PS_EPOCH}`, s.text);
    check('its tooltip names the leader', s.title.includes(`the leader is ${env.PS_LEADER}`), s.title);
  } catch (e) {
    check('the header checks ran', false, e.stack);
  }
  await browser.close();
  process.exit(failed ? 1 : 0);
})();
