// api.js — calls the scheduler's YTsaurus face (/api/v4, docs/api.md) through the official
// YTsaurus JavaScript wrapper (@ytsaurus/javascript-wrapper, bundled into
// vendor/yt-wrapper.min.js by scripts/ui-vendor.sh), with the token of this tab. Errors are
// YTsaurus errors {code, message, attributes, inner_errors}; ApiError carries them.
/* global ytWrapper */

const KEY = 'poolsched.token';
const yt = ytWrapper();
yt.setup.setGlobalOption('proxy', location.host);
yt.setup.setGlobalOption('secure', location.protocol === 'https:');

let me = null;   // the promise of get_current_user for this token
export function token() { return sessionStorage.getItem(KEY); }
export function setToken(t) {
  if (t) sessionStorage.setItem(KEY, t); else sessionStorage.removeItem(KEY);
  me = null;
  yt.setup.setGlobalOption('authentication', { type: 'oauth', token: t || '' });
}
setToken(token());

// YTsaurus error codes the UI acts on (yt/yt/client/security_client).
export const AUTHENTICATION_ERROR = 900;
export const AUTHORIZATION_ERROR = 901;

export class ApiError extends Error {
  constructor(e) {
    super(e && e.message ? e.message : String(e));
    this.code = e && e.code;
    this.body = e;
  }
}

async function wrap(promise) {
  try { return await promise; } catch (e) { throw new ApiError(e); }
}

// Commands the wrapper does not list go through its own request machinery, as its users add them.
const getJobStderr = yt.core._initCommand('v4', { name: 'get_job_stderr', method: 'GET', dataType: 'text' }, 'get_job_stderr');
const getCurrentUser = yt.core._initCommand('v4', { name: 'get_current_user', method: 'GET', dataType: 'json' }, 'get_current_user');

// POST /api/v1/<command>: the reply, or an ApiError with the server's message.
async function v1(command, params) {
  const resp = await fetch(`/api/v1/${command}`, {
    method: 'POST', headers: { Authorization: `OAuth ${token() || ''}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(params || {}) });
  const json = await resp.json();
  if (!resp.ok) throw new ApiError({ code: json.code, message: json.message });
  return json;
}

export const api = {
  get: async (path) => (await wrap(yt.v4.get({ path }))).value,
  list: async (path) => (await wrap(yt.v4.list({ path }))).value,
  // set's reply comes back as text (the wrapper's set is dataType text): the dry run's diff is JSON
  set: async (path, value, dryRun) => {
    const r = await wrap(yt.v4.set(dryRun ? { path, dry_run: true } : { path }, value));
    return typeof r === 'string' ? JSON.parse(r || '{}') : r;
  },
  listOperations: (p) => wrap(yt.v4.listOperations(Object.fromEntries(Object.entries(p).filter(([, v]) => v !== '' && v != null)))),
  getOperation: (id) => wrap(yt.v4.getOperation({ operation_id: id })),
  listJobs: (id) => wrap(yt.v4.listJobs({ operation_id: id })),
  jobStderr: (op, job) => wrap(getJobStderr({ operation_id: op, job_id: job })),
  // {user, role}: who this token is, once per token.
  currentUser: () => {
    if (!me) me = wrap(getCurrentUser({})).catch((e) => { me = null; throw e; });
    return me;
  },
  // {permission: true/false} for this token on path (a pool, a tree, //sys/operations/<id>):
  // pages offer only what the user may do (the server refuses the rest anyway). An admin token
  // is a superuser; otherwise check_permission answers by the user's groups and the ACLs.
  may: async (path, permissions) => {
    const who = await api.currentUser();
    const answers = await Promise.all(permissions.map((permission) => who.role === 'admin' ? { action: 'allow' }
      : wrap(yt.v4.checkPermission({ user: who.user, permission, path }))));
    return Object.fromEntries(permissions.map((p, i) => [p, answers[i].action === 'allow']));
  },
  // abort, suspend, resume, complete (upstream's abort_op, ...): `manage` on the operation
  operationAction: (action, id) => wrap(yt.v4[`${action}Operation`]({ operation_id: id })),
  // Not YTsaurus commands: the scheduler's own /api/v1 (docs/api.md "History", "What if").
  history: (params) => v1('get_history', params),
  startWhatIf: (params) => v1('start_what_if', params),
  getWhatIf: (id) => v1('get_what_if', { id }),
};

export const ORCHID = '//sys/scheduler/orchid/scheduler';
