// app.js — the web UI's shell: login with a token (kept in this tab's sessionStorage), a hash
// router (#/pools, #/pool/<tree>/<pool>, #/operations, #/operation/<id>, #/nodes, #/charts) and
// a periodic refresh of list pages. Timings of each render go to window.psTimings (docs/ui.md).
import { api, token, setToken, AUTHENTICATION_ERROR, ORCHID } from './api.js';
import { errorBox } from './util.js';
import { poolsPage, poolPage } from './pools.js';
import { operationsPage, operationPage } from './operations.js';
import { nodesPage } from './nodes.js';
import { chartsPage } from './charts_page.js';

const REFRESH_MS = 5000;
const routes = {
  pools: { page: poolsPage, refresh: true },
  pool: { page: poolPage },
  operations: { page: operationsPage, refresh: true },
  operation: { page: operationPage, refresh: true },
  nodes: { page: nodesPage, refresh: true },
  charts: { page: chartsPage, refresh: true },
};

const main = document.getElementById('main');
const loginForm = document.getElementById('login');
window.psTimings = [];
let timer = null;

function parse() {
  const h = location.hash.replace(/^#\/?/, '') || 'pools';
  const [path, q] = h.split('?');
  const [name, ...params] = path.split('/').map(decodeURIComponent);
  return { name, params, query: new URLSearchParams(q || '') };
}

// One render at a time, in the order asked: a navigation while a page still loads (the login's
// page, then a link) renders after it, so an older page never replaces a newer one. A request
// still queued when a newer one comes is dropped (the newer renders the page asked last), and
// so is one for the page already shown or being rendered (a link followed while the login
// still answered, then the login's own request) while nothing else is queued: rendering it
// again would replace a form the user is filling in. A refresh, or force (window.psShow),
// always renders.
let rendering = Promise.resolve();
let asked = 0, started = 0;   // requests made; the last one that rendered
let shown = null;   // the hash of the page shown or being rendered; null: the login form
function show(isRefresh, force) {
  if (!isRefresh && !force && asked === started && shown === location.hash) return rendering;
  const mine = ++asked;
  rendering = rendering.catch(() => {}).then(() => {
    if (mine !== asked) return undefined;
    started = mine;
    shown = location.hash;
    return render(isRefresh);
  });
  return rendering;
}

async function render(isRefresh) {
  clearTimeout(timer);
  if (!token()) { login(); return; }
  const r = parse();
  const route = routes[r.name] || routes.pools;
  document.querySelectorAll('nav a').forEach((a) => a.classList.toggle('on', a.dataset.page === r.name || (a.dataset.page === 'pools' && r.name === 'pool') || (a.dataset.page === 'operations' && r.name === 'operation')));
  const t0 = performance.now();
  try {
    const me = await api.currentUser();
    const who = document.getElementById('who');
    who.textContent = who.title = `${me.user} (${me.role})`;   // a long name is cut (style.css)
    showHa();   // not awaited: the page does not wait for it
    await route.page(main, r.params, (t) => window.psTimings.push({ page: r.name, refresh: !!isRefresh, ...t }), r.query);
    window.psTimings.push({ page: r.name, refresh: !!isRefresh, total_ms: performance.now() - t0 });
  } catch (e) {
    if (e.code === AUTHENTICATION_ERROR) { setToken(null); login(e.message); return; }
    main.innerHTML = errorBox(e);
  }
  if (route.refresh)
    timer = setTimeout(() => { if (!document.activeElement || !['INPUT', 'SELECT', 'TEXTAREA'].includes(document.activeElement.tagName)) show(true); else timer = setTimeout(() => show(true), REFRESH_MS); }, REFRESH_MS);
}

// With standby schedulers (--ha, docs/ha.md) the header says whether this page's instance
// leads or stands by (its own /readyz: a standby forwards the API calls, not that), the epoch,
// and in its tooltip the leader's address, since when it leads and the standbys (the orchid's
// scheduler/service, the leader's view). Hidden without --ha (epoch 0); never in the way.
async function showHa() {
  const el = document.getElementById('ha');
  try {
    const ready = await (await fetch('/readyz')).json();
    if (!ready.epoch) { el.hidden = true; return; }
    const s = await api.get(`${ORCHID}/service`);
    const standby = ready.role === 'standby';
    el.textContent = `${standby ? 'standby' : 'leader'} · epoch ${ready.epoch}`;
    el.title = `${standby ? `this scheduler stands by; the leader is ${s.address}` : `this scheduler (${s.address}) leads`}`
      + ` since ${new Date(s.last_connection_time).toLocaleString()}; standbys: ${s.standbys.join(', ') || 'none'}`;
    el.className = standby ? 'standby' : (s.standbys.length ? '' : 'alone');
    el.hidden = false;
  } catch (e) {
    el.hidden = true;
  }
}

function login(message) {
  shown = null;
  main.innerHTML = '';
  document.getElementById('who').textContent = document.getElementById('who').title = '';
  loginForm.hidden = false;
  document.getElementById('login-error').textContent = message || '';
  document.getElementById('logout').hidden = true;
}

loginForm.addEventListener('submit', async (ev) => {
  ev.preventDefault();
  setToken(document.getElementById('token').value.trim());
  try {
    await api.currentUser();
  } catch (e) {
    setToken(null);
    document.getElementById('login-error').textContent = e.message;
    return;
  }
  loginForm.hidden = true;
  document.getElementById('logout').hidden = false;
  show();
});
document.getElementById('logout').addEventListener('click', () => { setToken(null); login(); });
window.addEventListener('hashchange', () => show());
if (token()) document.getElementById('logout').hidden = false;
show();
window.psShow = (isRefresh) => show(isRefresh, true);
