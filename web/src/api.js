// api.js — calls the scheduler's YTsaurus face (/api/v4, docs/api.md) with the token of this tab.
// Reads are GET with the parameters in the query string, writes PUT/POST with the value as the
// body, as YTsaurus's HTTP proxies take them. Errors are YTsaurus errors {code, message, ...}.

const KEY = 'poolsched.token';

export function token() { return sessionStorage.getItem(KEY); }
export function setToken(t) { if (t) sessionStorage.setItem(KEY, t); else sessionStorage.removeItem(KEY); }

export class ApiError extends Error {
  constructor(status, body) {
    super(body && body.message ? body.message : `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

async function call(method, command, params, body) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {}))
    if (v !== undefined && v !== null && v !== '') q.set(k, typeof v === 'string' ? v : JSON.stringify(v));
  const headers = { Authorization: `OAuth ${token() || ''}` };
  const init = { method, headers };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const resp = await fetch(`/api/v4/${command}?${q}`, init);
  const text = await resp.text();
  let json = null;
  try { json = text ? JSON.parse(text) : {}; } catch (e) { json = { message: text }; }
  if (!resp.ok) throw new ApiError(resp.status, json);
  return json;
}

export const api = {
  get: async (path) => (await call('GET', 'get', { path })).value,
  list: async (path) => (await call('GET', 'list', { path })).value,
  set: (path, value, dryRun) => call('PUT', 'set', { path, dry_run: dryRun ? 'true' : undefined }, value),
  listOperations: (p) => call('GET', 'list_operations', p),
  getOperation: (id) => call('GET', 'get_operation', { operation_id: id }),
  listJobs: (id) => call('GET', 'list_jobs', { operation_id: id }),
  jobStderr: async (op, job) => {
    const q = new URLSearchParams({ operation_id: op, job_id: job });
    const resp = await fetch(`/api/v4/get_job_stderr?${q}`, { headers: { Authorization: `OAuth ${token() || ''}` } });
    const text = await resp.text();
    if (!resp.ok) throw new ApiError(resp.status, (() => { try { return JSON.parse(text); } catch (e) { return { message: text }; } })());
    return text;
  },
  history: async (params) => {
    const resp = await fetch('/api/v1/get_history', {
      method: 'POST', headers: { Authorization: `OAuth ${token() || ''}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(params || {}) });
    const json = await resp.json();
    if (!resp.ok) throw new ApiError(resp.status, json);
    return json;
  },
};

export const ORCHID = '//sys/scheduler/orchid/scheduler';
