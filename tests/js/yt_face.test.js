// Drives poolsched's YTsaurus face with the official JavaScript wrapper (@ytsaurus/javascript-wrapper,
// pinned in package.json): every command of docs/api.md "The YTsaurus face", in v3 and v4.
// usage: PS_PORT=... PS_TOKEN=... PS_SECRET=... node yt_face.test.js
// Prints one line per check and "N passed, N failed"; exits 1 when any check failed.
'use strict';
const assert = require('node:assert/strict');
const axios = require('axios');
const yt = require('@ytsaurus/javascript-wrapper')();

const port = process.env.PS_PORT;
const proxy = '127.0.0.1:' + port;
const base = 'http://' + proxy;
yt.setup.setGlobalOption('proxy', proxy);
yt.setup.setGlobalOption('secure', false);
yt.setup.setGlobalOption('authentication', {type: 'oauth', token: process.env.PS_TOKEN});

// Commands the wrapper does not list (start_operation, get_job_stderr) go through its own
// request machinery, as a user adds them.
const custom = (version, name, method, dataType) =>
    yt.core._initCommand(version, {name, method, dataType}, name);
const startOperation = {v3: custom('v3', 'start_operation', 'POST', 'json'),
                        v4: custom('v4', 'start_operation', 'POST', 'json')};
const getJobStderr = {v3: custom('v3', 'get_job_stderr', 'GET', 'text'),
                      v4: custom('v4', 'get_job_stderr', 'GET', 'text')};
const getCurrentUser = {v3: custom('v3', 'get_current_user', 'GET', 'json'),
                        v4: custom('v4', 'get_current_user', 'GET', 'json')};

let passed = 0, failed = 0;
async function check(name, fn) {
    try {
        await fn();
        passed++;
        console.log('ok   ' + name);
    } catch (e) {
        failed++;
        console.log('FAIL ' + name + ': ' + (e && e.stack ? e.stack : JSON.stringify(e)));
    }
}
async function rejects(promise, code) {
    try {
        await promise;
    } catch (e) {
        assert.equal(e.code, code, 'error ' + JSON.stringify(e));
        assert.equal(typeof e.message, 'string');
        assert.ok(Array.isArray(e.inner_errors) && typeof e.attributes === 'object');
        return e;
    }
    throw new Error('expected error ' + code);
}

// A fake node: heartbeats with the cluster secret until the scheduler starts a job on it.
async function heartbeat(jobs) {
    const r = await axios.post(base + '/internal/v1/node/heartbeat',
        {node_id: 'js-node', tags: [], resource_limits: {cpu: 4, memory: 8 * 2 ** 30, user_slots: 8}, jobs},
        {headers: {Authorization: 'OAuth ' + process.env.PS_SECRET}});
    return r.data;
}

async function main() {
    await check('discovery: GET /api and /hosts', async () => {
        assert.deepEqual((await axios.get(base + '/api')).data, ['v3', 'v4']);
        assert.deepEqual((await axios.get(base + '/hosts')).data, [proxy]);
    });
    await check('get_supported_features', async () => {
        const f = await yt.v3.getSupportedFeatures({});
        assert.ok(f.features.primitive_types.includes('int64'));
    });

    await check('get_current_user: v4 only, {user} and the token\'s role', async () => {
        assert.deepEqual(await getCurrentUser.v4({}), {user: 'admin', role: 'admin'});
        const e = await rejects(getCurrentUser.v3({}), 1);
        assert.match(e.message, /Command get_current_user is not registered/);
    });

    for (const v of ['v3', 'v4']) {
        const api = yt[v];
        const val = (x) => (v === 'v4' ? {value: x} : x);
        const pool = 'js_' + v;
        const P = '//sys/pools/' + pool;
        await check(v + ' create + exists', async () => {
            await api.create({type: 'scheduler_pool', path: P, attributes: {weight: 2}});
            assert.deepEqual(await api.exists({path: P}), val(true));
            assert.deepEqual(await api.exists({path: P + '_nope'}), val(false));
        });
        await check(v + ' set (value in the body) + get', async () => {
            await api.set({path: P + '/@weight'}, 5);
            assert.deepEqual(await api.get({path: P + '/@weight'}), val(5));
            await api.set({path: P + '/@strong_guarantee_resources'}, {cpu: 1});
            assert.deepEqual(await api.get({path: P + '/@strong_guarantee_resources'}), val({cpu: 1}));
        });
        await check(v + ' get and list with an attributes filter', async () => {
            const g = await api.get({path: P, attributes: ['weight']});
            assert.deepEqual(v === 'v4' ? g.value.$attributes : g.$attributes, {weight: 5});
            const l = await api.list({path: '//sys/pools', attributes: ['weight']});
            const items = v === 'v4' ? l.value : l;
            const mine = items.find((i) => i.$value === pool);
            assert.deepEqual(mine, {$attributes: {weight: 5}, $value: pool});
        });
        await check(v + ' list', async () => {
            const l = await api.list({path: '//sys/pools'});
            assert.ok((v === 'v4' ? l.value : l).includes(pool));
        });
        await check(v + ' errors: resolve 500, already exists 501, generic 1', async () => {
            await rejects(api.get({path: P + '/missing'}), yt.codes.NODE_DOES_NOT_EXIST);
            await rejects(api.create({type: 'scheduler_pool', path: P}), yt.codes.NODE_ALREADY_EXISTS);
            await rejects(api.set({path: P + '/@weight'}, 'heavy'), yt.codes.GENERAL_ERROR);
        });

        let opId;
        await check(v + ' start_operation', async () => {
            const spec = {pool, title: 'Nightly JS ' + v, tasks: {t: {command: 'echo hi', job_count: 1, cpu_limit: 1}}};
            const r = await startOperation[v]({operation_type: 'vanilla', spec});
            opId = v === 'v4' ? r.operation_id : r;
            assert.match(opId, /^[0-9a-f]+-[0-9a-f]+-[0-9a-f]+-[0-9a-f]+$/);
        });
        await check(v + ' get_operation', async () => {
            const op = await api.getOperation({operation_id: opId});
            assert.equal(op.id, opId);
            assert.equal(op.type, 'vanilla');
            assert.equal(op.authenticated_user, 'admin');
            assert.match(op.start_time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
            assert.equal(op.brief_progress.jobs.total, 1);
            assert.equal(op.runtime_parameters.scheduling_options_per_pool_tree.physical.pool, pool);
            const some = await api.getOperation({operation_id: opId, attributes: ['id', 'state']});
            assert.deepEqual(Object.keys(some).sort(), ['id', 'state']);
        });
        await check(v + ' list_operations with counters', async () => {
            const r = await api.listOperations({pool});
            assert.deepEqual(r.operations.map((o) => o.id), [opId]);
            assert.equal(r.pool_counts[pool], 1);   // over every pool: the pool filter is not applied to it
            assert.equal(r.user_counts.admin, 1);
            assert.equal(Object.values(r.state_counts).reduce((a, b) => a + b, 0), 1);
            assert.equal(r.failed_jobs_count, 0);
            assert.equal(r.incomplete, false);
            // upstream's default attributes: brief_spec, no specs; `attributes` asks for them
            const op = r.operations[0];
            assert.deepEqual(op.brief_spec, {pool, title: 'Nightly JS ' + v});
            assert.equal(op.provided_spec, undefined);
            assert.equal(op.full_spec, undefined);
            const full = await api.listOperations({pool, attributes: ['id', 'provided_spec']});
            assert.deepEqual(Object.keys(full.operations[0]).sort(), ['id', 'provided_spec']);
            assert.equal(full.operations[0].provided_spec.title, 'Nightly JS ' + v);
        });
        await check(v + ' list_operations: filter (case-insensitive, over id, user, pools, title), limit 1..1000', async () => {
            assert.deepEqual((await api.listOperations({filter: 'nightly js ' + v})).operations.map((o) => o.id), [opId]);
            assert.deepEqual((await api.listOperations({filter: pool.toUpperCase()})).operations.map((o) => o.id), [opId]);
            assert.deepEqual((await api.listOperations({filter: opId})).operations.map((o) => o.id), [opId]);
            assert.equal((await api.listOperations({filter: 'no-such-title'})).operations.length, 0);
            const e = await rejects(api.listOperations({limit: 1001}), 1);
            assert.match(e.message, /limit: must be an integer from 1 to 1000, got 1001/);
        });
        await check(v + ' suspend_operation, resume_operation', async () => {
            await api.suspendOperation({operation_id: opId});
            assert.equal((await api.getOperation({operation_id: opId})).suspended, true);
            await api.resumeOperation({operation_id: opId});
            assert.equal((await api.getOperation({operation_id: opId})).suspended, false);
        });
        await check(v + ' update_operation_parameters', async () => {
            await api.updateOperationParameters({operation_id: opId, _parameters: {weight: 3}});
            const op = await api.getOperation({operation_id: opId});
            assert.equal(op.runtime_parameters.weight, 3);
        });
        await check(v + ' list_jobs, get_job, get_job_stderr', async () => {
            let job;
            for (let i = 0; i < 100 && !job; i++) {
                const out = await heartbeat([]);
                job = out.jobs_to_start.find((j) => j.operation_id === opId) || out.jobs_to_start[0];
                if (!job) await new Promise((r) => setTimeout(r, 100));
            }
            assert.ok(job, 'no job started on the fake node');
            await heartbeat([{job_id: job.job_id, state: 'completed', stderr: 'hello from ' + v}]);
            const jobs = await api.listJobs({operation_id: opId});
            const j = jobs.jobs.find((x) => x.id === job.job_id);
            assert.ok(j, JSON.stringify(jobs));
            assert.equal(j.state, 'completed');
            assert.equal(jobs.state_counts.completed, 1);
            const one = await api.getJob({operation_id: opId, job_id: job.job_id});
            assert.equal(one.id, job.job_id);
            assert.equal(one.address, 'js-node');
            assert.equal(await getJobStderr[v]({operation_id: opId, job_id: job.job_id}), 'hello from ' + v);
            await rejects(api.getJob({operation_id: opId, job_id: 'nope'}), 1918);
        });
        await check(v + ' complete_operation / abort_operation; no such operation 1915', async () => {
            const op = await api.getOperation({operation_id: opId});
            if (op.state !== 'completed') await api.completeOperation({operation_id: opId});
            const spec = {pool, tasks: {t: {command: 'sleep 1', job_count: 1}}};
            const r = await startOperation[v]({operation_type: 'vanilla', spec});
            const id2 = v === 'v4' ? r.operation_id : r;
            await api.abortOperation({operation_id: id2});
            assert.equal((await api.getOperation({operation_id: id2})).state, 'aborted');
            await rejects(api.abortOperation({operation_id: id2}), 1916);
            await rejects(api.getOperation({operation_id: '1-2-3-4'}), 1915);
        });
        await check(v + ' remove', async () => {
            await api.remove({path: P + '/@strong_guarantee_resources'});
        });
    }

    await check('authentication 900, authorization 901', async () => {
        const bad = {setup: {authentication: {type: 'oauth', token: 'f'.repeat(32)}}};
        await rejects(yt.v4.get({...bad, parameters: {path: '//sys/pools'}}), 900);
        const issued = await axios.post(base + '/api/v1/issue_token', {user: 'alice', role: 'user'},
            {headers: {Authorization: 'OAuth ' + process.env.PS_TOKEN}});
        const alice = {setup: {authentication: {type: 'oauth', token: issued.data.token}}};
        await rejects(yt.v4.create({...alice, parameters: {type: 'scheduler_pool', path: '//sys/pools/evil'}}),
            yt.codes.PERMISSION_DENIED);
        assert.ok((await yt.v4.list({...alice, parameters: {path: '//sys/pools'}})).value.includes('js_v4'));
    });

    console.log(passed + ' passed, ' + failed + ' failed');
    process.exit(failed ? 1 : 0);
}

main().catch((e) => {
    console.log('FAIL harness: ' + (e && e.stack ? e.stack : JSON.stringify(e)));
    console.log(passed + ' passed, ' + (failed + 1) + ' failed');
    process.exit(1);
});
