/* test_sim.c — the simulator through its API: the skipping of idle work is exact (same outputs
 * as running every heartbeat and update), the abort and preemption paths, usage changes of a
 * running job, the actual-usage model, operations in two trees, heartbeat phases given per node
 * group, per-job durations, and determinism. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/scenario.h"
#include "sim/sim.h"
#include "sim/sim_internal.h"

/* JSON written with single quotes, for readability. */
static char *q(const char *text)
{
    char *buf = strdup(text);
    assert_non_null(buf);
    for (char *p = buf; *p; p++)
        if (*p == '\'')
            *p = '"';
    return buf;
}

struct run {
    struct ps_scenario *sc;
    struct ps_sim *sim;
    FILE *events, *pools;
    char *events_text, *pools_text, *ops_text, *summary_text;
    size_t events_len, pools_len, ops_len, summary_len;
};

static void start(struct run *r, const char *scenario, bool exhaustive)
{
    memset(r, 0, sizeof *r);
    char *text = q(scenario);
    struct ps_error err;
    ps_error_init(&err);
    if (ps_scenario_parse(text, strlen(text), &r->sc, &err) != 0)
        fail_msg("scenario: %s", err.msg);
    free(text);
    r->events = open_memstream(&r->events_text, &r->events_len);
    r->pools = open_memstream(&r->pools_text, &r->pools_len);
    struct ps_sim_options options = {.events = r->events, .pools = r->pools, .exhaustive = exhaustive};
    if (ps_sim_new(r->sc, &options, &r->sim, &err) != 0)
        fail_msg("sim: %s", err.msg);
}

static void finish_run(struct run *r)
{
    struct ps_error err;
    ps_error_init(&err);
    if (ps_sim_run(r->sim, &err) != 0)
        fail_msg("run: %s", err.msg);
    FILE *ops = open_memstream(&r->ops_text, &r->ops_len);
    FILE *summary = open_memstream(&r->summary_text, &r->summary_len);
    assert_int_equal(ps_sim_write_operations_csv(r->sim, ops, &err), 0);
    assert_int_equal(ps_sim_write_summary(r->sim, summary, &err), 0);
    fclose(ops);
    fclose(summary);
    fclose(r->events);
    fclose(r->pools);
}

static void release(struct run *r)
{
    ps_sim_free(r->sim);
    ps_scenario_free(r->sc);
    free(r->events_text);
    free(r->pools_text);
    free(r->ops_text);
    free(r->summary_text);
}

/* The summary without its "scheduler" block (heartbeat and update counts differ by design). */
static char *summary_without_scheduler(const char *s)
{
    char *copy = strdup(s);
    char *from = strstr(copy, "\"scheduler\": {");
    assert_non_null(from);
    char *to = strchr(from, '}');
    memmove(from, to + 1, strlen(to + 1) + 1);
    return copy;
}

/* The two runs wrote the same outputs (the summary but for its "scheduler" block). */
static void assert_same_outputs(const struct run *x, const struct run *y)
{
    assert_int_equal(x->events_len, y->events_len);
    assert_memory_equal(x->events_text, y->events_text, x->events_len);
    assert_int_equal(x->pools_len, y->pools_len);
    assert_memory_equal(x->pools_text, y->pools_text, x->pools_len);
    assert_string_equal(x->ops_text, y->ops_text);
    char *a = summary_without_scheduler(x->summary_text), *b = summary_without_scheduler(y->summary_text);
    assert_string_equal(a, b);
    free(a);
    free(b);
}

/* The scenario run with the skipping of idle work (fast) and without it (full, the exhaustive
 * mode): both must write the same outputs. */
static void run_fast_and_full(const char *scenario, struct run *fast, struct run *full)
{
    start(fast, scenario, false);
    finish_run(fast);
    start(full, scenario, true);
    finish_run(full);
    assert_same_outputs(fast, full);
}

/* Several trees, filters, FIFO and weighted pools, count limits, jobs of mixed lengths that do
 * not line up with the heartbeat period, and a long idle gap: the skipping has much to skip. */
static const char *busy =
    "{'heartbeat_period': 3000, 'fair_share_update_period': 700,"
    " 'node_groups': [{'name': 'cpu', 'count': 5, 'resource_limits': {'cpu': 8, 'memory': 68719476736,"
    "                  'user_slots': 8, 'gpu': 0, 'network': 0}, 'tags': ['dc1']},"
    "                 {'name': 'big', 'count': 2, 'resource_limits': {'cpu': 32, 'memory': 137438953472,"
    "                  'user_slots': 32, 'gpu': 4, 'network': 0}, 'tags': ['dc1', 'gpu']},"
    "                 {'name': 'other', 'count': 3, 'resource_limits': {'cpu': 4, 'memory': 17179869184,"
    "                  'user_slots': 4, 'gpu': 0, 'network': 0}, 'tags': ['dc2']}],"
    " 'default_tree': 'main',"
    " 'pool_trees': {"
    "   'main': {'nodes_filter': 'dc1', 'pools': ["
    "     {'name': 'prod', 'weight': 3, 'strong_guarantee_resources': {'cpu': 20}},"
    "     {'name': 'batch', 'mode': 'fifo', 'max_running_operation_count': 2},"
    "     {'name': 'ml', 'scheduling_tag_filter': 'gpu'}]},"
    "   'side': {'nodes_filter': 'dc2', 'pools': [{'name': 'burst', 'integral_guarantees':"
    "     {'guarantee_type': 'burst', 'resource_flow': {'cpu': 2}, 'burst_guarantee_resources': {'cpu': 6}}}]}},"
    " 'operations': ["
    "   {'id': 'p1', 'start_time': 0, 'spec': {'pool': 'prod'}, 'tasks': ["
    "     {'name': 'map', 'job_count': 60, 'duration': 7300, 'resources': {'cpu': 2, 'user_slots': 1}},"
    "     {'name': 'reduce', 'job_count': 10, 'duration': 11100, 'resources': {'cpu': 4, 'user_slots': 1}}]},"
    "   {'id': 'b1', 'start_time': 500, 'spec': {'pool': 'batch', 'weight': 2}, 'tasks': ["
    "     {'job_count': 40, 'duration': 5100, 'resources': {'cpu': 1, 'user_slots': 1}}]},"
    "   {'id': 'b2', 'start_time': 900, 'spec': {'pool': 'batch'}, 'tasks': ["
    "     {'job_count': 40, 'duration': 4300, 'resources': {'cpu': 1.5, 'user_slots': 1}}]},"
    "   {'id': 'b3', 'start_time': 950, 'spec': {'pool': 'batch'}, 'tasks': ["
    "     {'job_count': 5, 'duration': 4300, 'resources': {'cpu': 1, 'user_slots': 1}}]},"
    "   {'id': 'm1', 'start_time': 2000, 'user': 'ann', 'spec': {'pool': 'ml'}, 'tasks': ["
    "     {'job_count': 12, 'duration': 20000, 'resources': {'cpu': 8, 'gpu': 1, 'user_slots': 1}}]},"
    "   {'id': 's1', 'start_time': 100, 'spec': {'pool_trees': ['side']}, 'tasks': ["
    "     {'job_count': 30, 'duration': 2500, 'resources': {'cpu': 1, 'user_slots': 1}}]},"
    "   {'id': 's2', 'start_time': 300000, 'spec': {'pool_trees': ['side'], 'pool': 'burst'}, 'tasks': ["
    "     {'job_count': 30, 'duration': 2500, 'resources': {'cpu': 1, 'user_slots': 1}}]},"
    "   {'id': 'late', 'start_time': 400000, 'spec': {'pool': 'prod'}, 'tasks': ["
    "     {'job_count': 20, 'duration': 9000, 'resources': {'cpu': 3, 'user_slots': 1}}]},"
    "   {'id': 'never', 'start_time': 1000, 'spec': {'pool': 'prod', 'scheduling_tag_filter': '!gpu'},"
    "    'tasks': [{'job_count': 1, 'duration': 1000, 'resources': {'cpu': 16, 'user_slots': 1}}]}]}";

static void test_skipping_is_exact(void **state)
{
    (void)state;
    struct run fast, full;
    run_fast_and_full(busy, &fast, &full);
    assert_true(fast.events_len > 10000);
    struct ps_sim_stats sf, su;
    ps_sim_get_stats(fast.sim, &sf);
    ps_sim_get_stats(full.sim, &su);
    /* The fast run really skipped work. */
    assert_true(sf.heartbeats * 3 < su.heartbeats);
    /* "main" skips most of its updates; "side" has an integral pool and skips none. */
    assert_true(sf.fair_share_updates_skipped * 3 > su.fair_share_updates);
    assert_int_equal(sf.fair_share_updates + sf.fair_share_updates_skipped, su.fair_share_updates);
    assert_int_equal(su.fair_share_updates_skipped, 0);
    assert_int_equal(sf.operations_completed, 8);
    assert_int_equal(sf.jobs_running, 0);
    /* "never" fails at the first resource demand check after safe_scheduler_online_time
     * (core/exec_nodes.h), which ends the run */
    assert_int_equal(sf.operations_failed, 1);
    assert_non_null(strstr(fast.summary_text, "\"end\": \"all_operations_finished\""));
    assert_non_null(strstr(fast.events_text, "No online node can satisfy the resource demand"));
    /* Same input, same bytes. */
    struct run again;
    start(&again, busy, false);
    finish_run(&again);
    assert_memory_equal(fast.events_text, again.events_text, fast.events_len);
    assert_string_equal(fast.summary_text, again.summary_text);
    release(&again);
    release(&fast);
    release(&full);
}

/* The length of text's lines (after a first header line when header) whose time, their
 * first number, is at most t. */
static size_t through(const char *text, size_t len, bool header, int64_t t)
{
    const char *p = text, *end = text + len;
    if (header)
        p = strchr(p, '\n') + 1;
    while (p < end) {
        const char *digits = p + strspn(p, "{\"time:");
        if (strtoll(digits, NULL, 10) > t)
            break;
        p = strchr(p, '\n') + 1;
    }
    return (size_t)(p - text);
}

/* A run in steps hands every line up to each step's time to its files before ps_sim_run_until
 * returns (the simulator gathers them in blocks), and writes what one run does. */
static void test_outputs_reach_files_at_each_step(void **state)
{
    (void)state;
    struct run whole, steps;
    start(&whole, busy, false);
    finish_run(&whole);
    start(&steps, busy, false);
    struct ps_error err;
    ps_error_init(&err);
    int64_t times[] = {0, 1000, 7500, 30000, 120000, 600000};
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++) {
        assert_int_equal(ps_sim_run_until(steps.sim, times[i], &err), 0);
        fflush(steps.events);
        fflush(steps.pools);
        size_t ev = through(whole.events_text, whole.events_len, false, times[i]);
        size_t po = through(whole.pools_text, whole.pools_len, true, times[i]);
        assert_int_equal(steps.events_len, ev);
        assert_memory_equal(steps.events_text, whole.events_text, ev);
        assert_int_equal(steps.pools_len, po);
        assert_memory_equal(steps.pools_text, whole.pools_text, po);
    }
    assert_true(steps.events_len > 1000 && steps.pools_len > 1000);
    finish_run(&steps);
    assert_same_outputs(&steps, &whole);
    release(&steps);
    release(&whole);
}

/* Starvation and preemption with the skipping on and off: A fills 10 nodes, B (sibling pool,
 * equal weight) arrives at 20 s and starves, so preemptive heartbeats take A's jobs (some A
 * jobs interruptible: job_preempted, then job_aborted 10 s later); a third pool with aggressive
 * starvation; a node shrink, lowered pool limits and an operation update as events; periods
 * that do not line up; a long idle gap and a late operation. */
static const char *preempting =
    "{'heartbeat_period': 3000, 'fair_share_update_period': 700,"
    " 'node_groups': [{'name': 'n', 'count': 10, 'resource_limits': {'cpu': 10, 'memory': 107374182400,"
    "                  'user_slots': 10, 'gpu': 0, 'network': 0}}],"
    " 'pool_trees': {'physical': {'fair_share_starvation_timeout': 20000,"
    "   'fair_share_aggressive_starvation_timeout': 45000,"
    "   'preemptive_scheduling_backoff': 4100,"
    "   'pools': [{'name': 'a'}, {'name': 'b'},"
    "             {'name': 'c', 'enable_aggressive_starvation': true}, {'name': 'd'}]}},"
    " 'operations': ["
    "   {'id': 'A', 'start_time': 0, 'spec': {'pool': 'a'}, 'tasks': ["
    "     {'name': 'long', 'job_count': 60, 'duration': 121300, 'interruptible': true,"
    "      'resources': {'cpu': 2, 'memory': 1073741824, 'user_slots': 1}},"
    "     {'name': 'short', 'job_count': 80, 'duration': 37100,"
    "      'resources': {'cpu': 2, 'memory': 1073741824, 'user_slots': 1}}]},"
    "   {'id': 'B', 'start_time': 20000, 'spec': {'pool': 'b'}, 'tasks': ["
    "     {'job_count': 70, 'duration': 90700, 'resources': {'cpu': 2, 'memory': 1073741824, 'user_slots': 1}}]},"
    "   {'id': 'C', 'start_time': 41000, 'spec': {'pool': 'c'}, 'tasks': ["
    "     {'job_count': 30, 'duration': 60900, 'resources': {'cpu': 1, 'memory': 1073741824, 'user_slots': 1}}]},"
    "   {'id': 'D', 'start_time': 5000, 'spec': {'pool': 'd'}, 'tasks': ["
    "     {'job_count': 40, 'duration': 50300, 'resources': {'cpu': 1, 'memory': 1073741824, 'user_slots': 1}}]},"
    "   {'id': 'late', 'start_time': 900000, 'spec': {'pool': 'b'}, 'tasks': ["
    "     {'job_count': 20, 'duration': 9100, 'resources': {'cpu': 3, 'memory': 1073741824, 'user_slots': 1}}]}],"
    " 'events': ["
    "   {'time': 63500, 'type': 'set_node_resources', 'node': 'n-3', 'resource_limits': {'cpu': 3}},"
    "   {'time': 98300, 'type': 'set_pool_attribute', 'pool': 'd', 'key': 'resource_limits', 'value': {'cpu': 4}},"
    "   {'time': 120000, 'type': 'update_operation', 'operation': 'B', 'parameters': {'weight': 3}},"
    "   {'time': 200000, 'type': 'set_node_resources', 'node': 'n-3', 'resource_limits': {'cpu': 10}}]}";

static int count(const char *text, const char *needle);

static void test_skipping_is_exact_with_preemption(void **state)
{
    (void)state;
    struct run fast, full;
    run_fast_and_full(preempting, &fast, &full);
    struct ps_sim_stats sf, su;
    ps_sim_get_stats(fast.sim, &sf);
    ps_sim_get_stats(full.sim, &su);
    print_message("preemption run: %lld preempted, %lld/%lld heartbeats, %lld/%lld updates (fast/full)\n",
                  (long long)sf.attempts_preempted, (long long)sf.heartbeats, (long long)su.heartbeats,
                  (long long)sf.fair_share_updates, (long long)su.fair_share_updates);
    /* Preemption really happened, for each reason, and interruptible victims were interrupted. */
    assert_true(sf.attempts_preempted >= 10);
    assert_int_equal(sf.attempts_preempted, su.attempts_preempted);
    assert_true(count(fast.events_text, "\"preemption_reason\":\"preempted_for_starving_operation\"") >= 10);
    assert_true(count(fast.events_text, "\"preemption_reason\":\"resource_overcommit\"") >= 1);
    assert_true(count(fast.events_text, "\"preemption_reason\":\"resource_limits_violated\"") >= 1);
    assert_true(count(fast.events_text, "\"interrupt_timeout\":10000") >= 1);
    assert_true(count(fast.events_text, "\"status\":\"starving\"") >= 1);
    /* ... and the fast run still skipped work (the idle gap before "late"). */
    assert_true(sf.heartbeats * 2 < su.heartbeats);
    assert_int_equal(sf.operations_completed, 5);
    release(&fast);
    release(&full);
}

static const char *small =
    "{'heartbeat_period': 5000, 'fair_share_update_period': 1000,"
    " 'node_groups': [{'name': 'n', 'count': 2, 'resource_limits': {'cpu': 4, 'memory': 17179869184,"
    "                  'user_slots': 4, 'gpu': 0, 'network': 0}}],"
    " 'pool_trees': {'physical': {'pools': [{'name': 'p'}]}},"
    " 'operations': ["
    "   {'id': 'op', 'start_time': 0, 'spec': {'pool': 'p'}, 'tasks': ["
    "     {'name': 'map', 'job_count': 8, 'duration': 60000, 'resources': {'cpu': 1, 'user_slots': 1},"
    "      'cpu_usage': [[0, 0.5], [30000, 3]]}]}]}";

static int count(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* Node loss and other aborts: the job goes back to pending, retried first with attempt 1,
 * and the operation still completes with every job. */
static void test_abort_returns_job_to_pending(void **state)
{
    (void)state;
    struct run r;
    start(&r, small, false);
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_sim_run_until(r.sim, 20000, &err), 0);
    struct ps_sim_stats s;
    ps_sim_get_stats(r.sim, &s);
    assert_int_equal(s.jobs_running, 8);
    assert_int_equal(ps_sim_abort_job(r.sim, "op/0/3/0", "node_offline", &err), 0);
    assert_int_equal(ps_sim_abort_job(r.sim, "op/0/3/0", "node_offline", &err), PS_ENOENT);
    ps_sim_get_stats(r.sim, &s);
    assert_int_equal(s.jobs_running, 7);
    assert_int_equal(s.attempts_aborted, 1);
    finish_run(&r);
    assert_non_null(strstr(r.events_text, "{\"time\":20000,\"event_type\":\"job_aborted\",\"job_id\":\"op/0/3/0\""));
    assert_non_null(strstr(r.events_text, "\"reason\":\"node_offline\",\"statistics\":{\"time/total\":"));
    assert_non_null(strstr(r.events_text, "\"event_type\":\"job_started\",\"job_id\":\"op/0/3/1\""));
    assert_int_equal(count(r.events_text, "\"job_completed\""), 8);
    /* Not a preemption: the preemption columns stay 0. */
    assert_non_null(strstr(r.ops_text, "\nop,8,0,0,"));
    assert_non_null(strstr(r.summary_text, "\"aborted\": 1"));
    assert_non_null(strstr(r.summary_text, "\"started\": 9"));
    release(&r);
}

/* The preemption hook: a victim with an interrupt timeout is aborted when it expires (and
 * counted in the preemption columns); one without is aborted at once. */
static void test_preemption_path(void **state)
{
    (void)state;
    struct run r;
    start(&r, small, false);
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_sim_run_until(r.sim, 10000, &err), 0);
    struct ps_sim *sim = r.sim;
    const struct sim_node *n = &sim->nodes[0];
    assert_int_equal(n->job_count, 4);
    int64_t a = n->jobs[0], b = n->jobs[1];
    char id_a[64], id_b[64];
    sim_job_id(sim, &sim->jobs[a], id_a, sizeof id_a);
    sim_job_id(sim, &sim->jobs[b], id_b, sizeof id_b);
    assert_int_equal(sim_job_preempt(sim, a, 0, "preemption_for_starving", 10000, &err), 0);
    assert_int_equal(sim_job_preempt(sim, b, -1, "resource_overcommit", 0, &err), 0);
    assert_int_equal(sim->nodes[0].job_count, 3);   /* b is gone, a still runs */
    finish_run(&r);
    char want[256];
    snprintf(want, sizeof want, "{\"time\":10000,\"event_type\":\"job_preempted\",\"job_id\":\"%s\"", id_a);
    assert_non_null(strstr(r.events_text, want));
    assert_non_null(strstr(r.events_text, "\"preempted_for\":\"op\",\"preemption_reason\":\"preemption_for_starving\",\"interrupt_timeout\":10000}"));
    snprintf(want, sizeof want, "{\"time\":20000,\"event_type\":\"job_aborted\",\"job_id\":\"%s\"", id_a);
    assert_non_null(strstr(r.events_text, want));
    snprintf(want, sizeof want, "{\"time\":10000,\"event_type\":\"job_aborted\",\"job_id\":\"%s\"", id_b);
    assert_non_null(strstr(r.events_text, want));
    /* Both preempted: 2 jobs, 20 s + 10 s of lost work (both started at 0), counted in
     * jobs_total_duration too (8 x 60 s completed + 30 s), as YTsaurus's simulator. */
    assert_non_null(strstr(r.ops_text, "\nop,8,2,0,"));
    assert_non_null(strstr(r.ops_text, ",510000,60000,30000,vanilla,completed,true\n"));
    assert_non_null(strstr(r.summary_text, "\"preempted\": 2"));
    release(&r);
}

/* Job failures (the memory checks' job_failed path): a failed job is retried; past the spec's
 * max_failed_job_count the operation fails and its running jobs are aborted. */
static void fail_jobs_of_node(struct ps_sim *sim, int node)
{
    for (int k = 0; k < sim->nodes[node].job_count; k++) {
        struct sim_job *job = &sim->jobs[sim->nodes[node].jobs[k]];
        job->end_kind = SIM_END_FAILED;
        job->end_reason = "Memory limit exceeded";
    }
}

static void test_job_failures(void **state)
{
    (void)state;
    struct ps_error err;
    ps_error_init(&err);
    /* Within the limit (default 10): 4 failures, retried, the operation completes. */
    struct run r;
    start(&r, small, false);
    assert_int_equal(ps_sim_run_until(r.sim, 1000, &err), 0);
    fail_jobs_of_node(r.sim, 0);
    finish_run(&r);
    assert_int_equal(count(r.events_text, "\"event_type\":\"job_failed\""), 4);
    assert_non_null(strstr(r.events_text, "{\"time\":60000,\"event_type\":\"job_failed\",\"job_id\":\"op/0/0/0\""));
    assert_non_null(strstr(r.events_text, "\"error\":\"Memory limit exceeded\",\"statistics\":{"));
    assert_int_equal(count(r.events_text, "\"event_type\":\"job_completed\""), 8);
    assert_non_null(strstr(r.ops_text, ",completed,true\n"));
    assert_non_null(strstr(r.summary_text, "\"failed\": 4"));
    release(&r);

    /* max_failed_job_count 2: the second failure fails the operation (failed >= max). */
    char *text = strdup(small);
    char *at = strstr(text, "'spec': {'pool': 'p'}");
    assert_non_null(at);
    char *scenario = malloc(strlen(text) + 64);
    snprintf(scenario, strlen(text) + 64, "%.*s'spec': {'pool': 'p', 'max_failed_job_count': 2}%s",
             (int)(at - text), text, at + strlen("'spec': {'pool': 'p'}"));
    start(&r, scenario, false);
    assert_int_equal(ps_sim_run_until(r.sim, 1000, &err), 0);
    fail_jobs_of_node(r.sim, 0);
    finish_run(&r);
    assert_int_equal(count(r.events_text, "\"event_type\":\"job_failed\""), 2);
    /* Still running then: node 0's third and fourth jobs and node 1's four (started at 2500). */
    assert_int_equal(count(r.events_text, "\"reason\":\"operation_failed\""), 6);
    assert_non_null(strstr(r.events_text, "{\"time\":60000,\"event_type\":\"operation_failed\",\"operation_id\":\"op\",\"error\":\"Failed jobs limit exceeded\"}"));
    assert_non_null(strstr(r.ops_text, "\nop,8,0,0,60000,60000,0,0,0,vanilla,failed,true\n"));
    struct ps_sim_stats st;
    ps_sim_get_stats(r.sim, &st);
    assert_int_equal(st.operations_failed, 1);
    assert_int_equal(st.jobs_running, 0);
    assert_int_equal(st.attempts_started, st.jobs_completed + st.jobs_failed + st.attempts_aborted);
    release(&r);
    free(scenario);
    free(text);
}

/* The actual-usage model and usage changes of a running job (the CPU monitor's hooks). */
static void test_usage_model_and_changes(void **state)
{
    (void)state;
    struct run r;
    start(&r, small, false);
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_sim_run_until(r.sim, 1000, &err), 0);
    struct ps_sim *sim = r.sim;
    int64_t slot = sim->nodes[0].jobs[0];
    const struct sim_job *job = &sim->jobs[slot];
    /* cpu_usage [[0, 0.5], [30000, 3]], capped by the 1-core request. */
    assert_int_equal(sim_job_cpu_at(sim, job, 0), 50);
    assert_int_equal(sim_job_cpu_at(sim, job, 29999), 50);
    assert_int_equal(sim_job_cpu_at(sim, job, 30000), 100);
    assert_int_equal(sim_job_cpu_time_ms(sim, job, 60000), 15000 + 30000);
    /* A lower cpu guarantee frees cpu on the node, in the snapshot and in the tree. */
    int elem = sim_job_element(sim, job);
    assert_true(elem > 0);
    struct sim_tree *T = &sim->trees[0];
    int64_t before = ps_sched_usage(T->ts.snap, elem).v[PS_RES_CPU];
    struct ps_resources lower = job->resources;
    lower.v[PS_RES_CPU] = 40;
    assert_int_equal(sim_job_set_usage(sim, slot, lower, &err), 0);
    assert_int_equal(ps_sched_usage(T->ts.snap, elem).v[PS_RES_CPU], before - 60);
    assert_int_equal(sim->nodes[0].usage.v[PS_RES_CPU], 4 * 100 - 60);
    assert_int_equal(T->usage.v[PS_RES_CPU], 4 * 100 - 60);   /* node 1 has not heartbeated yet */
    lower.v[PS_RES_CPU] = -1;
    assert_int_equal(sim_job_set_usage(sim, slot, lower, &err), PS_EINVAL);
    finish_run(&r);
    /* user_job/cpu/user of a completed job: 0.5 x 30 s + 1 x 30 s = 45 s. */
    assert_int_equal(count(r.events_text, "\"user_job/cpu/user\":45000"), 8);
    release(&r);
}

/* An operation in two trees runs on the nodes of both, drawing from one set of pending jobs. */
static void test_operation_in_two_trees(void **state)
{
    (void)state;
    struct run r;
    start(&r,
          "{'node_groups': [{'name': 'a', 'count': 1, 'resource_limits': {'cpu': 4, 'memory': 17179869184,"
          "                  'user_slots': 4, 'gpu': 0, 'network': 0}, 'tags': ['x']},"
          "                 {'name': 'b', 'count': 1, 'resource_limits': {'cpu': 4, 'memory': 17179869184,"
          "                  'user_slots': 4, 'gpu': 0, 'network': 0}, 'tags': ['y']}],"
          " 'default_tree': 'tx',"
          " 'pool_trees': {'tx': {'nodes_filter': 'x'}, 'ty': {'nodes_filter': 'y'}},"
          " 'operations': [{'id': 'op', 'start_time': 0, 'spec': {'pool_trees': ['tx', 'ty']},"
          "   'tasks': [{'job_count': 16, 'duration': 10000, 'resources': {'cpu': 1, 'user_slots': 1}}]}]}",
          false);
    finish_run(&r);
    assert_int_equal(count(r.events_text, "\"node_id\":\"a-0\",\"task\""), 8);
    assert_int_equal(count(r.events_text, "\"node_id\":\"b-0\",\"task\""), 8);
    assert_non_null(strstr(r.events_text, "\"pools\":{\"tx\":\"root\",\"ty\":\"root\"}"));
    assert_non_null(strstr(r.ops_text, "\nop,16,0,0,"));
    assert_non_null(strstr(r.ops_text, ",completed,true\n"));
    release(&r);
}

/* Two one-slot nodes, two operations submitted 30 ms apart, heartbeats every 100 ms. */
static const char *phase_race =
    "{'heartbeat_period': 100, 'fair_share_update_period': 10,"
    " 'node_groups': [{'name': 'n', 'count': 2, 'resource_limits': {'cpu': 1, 'user_slots': 1}%s}],"
    " 'pool_trees': {'physical': {'pools': [{'name': 'p'}]}},"
    " 'operations': ["
    "   {'id': 'first', 'start_time': 0, 'spec': {'pool': 'p'}, 'tasks': ["
    "     {'job_count': 2, 'duration': 1000, 'resources': {'cpu': 1, 'user_slots': 1}}]},"
    "   {'id': 'second', 'start_time': 30, 'spec': {'pool': 'p'}, 'tasks': ["
    "     {'job_count': 2, 'duration': 1000, 'resources': {'cpu': 1, 'user_slots': 1}}]}]}";

/* the start of a job_started event of op at t */
#define STARTED(t, op) "{\"time\":" #t ",\"event_type\":\"job_started\",\"job_id\":\"" op "/"

static void run_phase_race(struct run *r, const char *phase)
{
    char text[1024];
    snprintf(text, sizeof text, phase_race, phase);
    start(r, text, false);
    finish_run(r);
}

/* heartbeat_phase: nodes that beat together (as a recorded cluster's may) give the first
 * operation both slots before the second comes; the default phases, spread over the period
 * (node 1 at 50 ms), give the second a slot at once. */
static void test_heartbeat_phase(void **state)
{
    (void)state;
    struct run spread, together;
    run_phase_race(&spread, "");
    run_phase_race(&together, ", 'heartbeat_phase': 0");
    assert_non_null(strstr(spread.events_text, STARTED(0, "first")));
    assert_non_null(strstr(spread.events_text, STARTED(50, "second")));
    assert_int_equal(count(together.events_text, STARTED(0, "first")), 2);
    assert_non_null(strstr(together.events_text, STARTED(1000, "second")));
    assert_null(strstr(together.events_text, "{\"time\":50,"));
    release(&spread);
    release(&together);
    /* a phase inside the period: both nodes at 40 ms, after both submissions: one each */
    struct run late;
    run_phase_race(&late, ", 'heartbeat_phase': 40");
    assert_int_equal(count(late.events_text, STARTED(40, "first")), 1);
    assert_int_equal(count(late.events_text, STARTED(40, "second")), 1);
    release(&late);
}

/* text with send_heartbeat_on_job_finished on in every node group (a new string) */
static char *with_oob(const char *text)
{
    static const char from[] = ", 'count': ", to[] = ", 'send_heartbeat_on_job_finished': true, 'count': ";
    char *out = calloc(strlen(text) * 2 + 1, 1);
    assert_non_null(out);
    char *o = out;
    for (const char *p = text; *p;) {
        if (strncmp(p, from, sizeof from - 1) == 0) {
            o = stpcpy(o, to);
            p += sizeof from - 1;
        } else {
            *o++ = *p++;
        }
    }
    assert_non_null(strstr(out, to));
    return out;
}

/* One one-slot node beating every second, jobs of 150 ms: each freed slot waits for the next
 * beat, or with send_heartbeat_on_job_finished is taken at once, the node's next periodic beat
 * then a period after its last one (1450 ms, not its phase 1000). */
static void test_heartbeat_on_job_finished(void **state)
{
    (void)state;
    static const char *one_node =
        "{'heartbeat_period': 1000, 'fair_share_update_period': 10,"
        " 'node_groups': [{'name': 'n', 'count': 1, 'resource_limits': {'cpu': 1, 'user_slots': 1}}],"
        " 'pool_trees': {'physical': {'pools': [{'name': 'p'}]}},"
        " 'operations': ["
        "   {'id': 'first', 'start_time': 0, 'spec': {'pool': 'p'}, 'tasks': ["
        "     {'job_count': 3, 'duration': 150, 'resources': {'cpu': 1, 'user_slots': 1}}]},"
        "   {'id': 'later', 'start_time': 500, 'spec': {'pool': 'p'}, 'tasks': ["
        "     {'job_count': 1, 'duration': 150, 'resources': {'cpu': 1, 'user_slots': 1}}]}]}";
    struct run periodic, oob;
    start(&periodic, one_node, false);
    finish_run(&periodic);
    assert_non_null(strstr(periodic.events_text, STARTED(1000, "first")));
    assert_non_null(strstr(periodic.events_text, STARTED(2000, "first")));
    assert_non_null(strstr(periodic.events_text, STARTED(3000, "later")));
    char *text = with_oob(one_node);
    start(&oob, text, false);
    finish_run(&oob);
    assert_non_null(strstr(oob.events_text, STARTED(150, "first")));
    assert_non_null(strstr(oob.events_text, STARTED(300, "first")));
    assert_non_null(strstr(oob.events_text, STARTED(1450, "later")));
    free(text);
    release(&periodic);
    release(&oob);
}

/* The heartbeat reporting a job's end comes before the fair share update of its millisecond:
 * the scheduler learns of the end from it. a1's job ends at 300 ms, an update's time; the slot
 * goes to b1, running, not to a2, which that update admits (a runs one operation at a time)
 * and which the pools' order would favour. */
static void test_reporting_heartbeat_before_update(void **state)
{
    (void)state;
    static const char *text =
        "{'heartbeat_period': 1000, 'fair_share_update_period': 100,"
        " 'node_groups': [{'name': 'n', 'count': 1, 'send_heartbeat_on_job_finished': true,"
        "                  'resource_limits': {'cpu': 1, 'user_slots': 1}}],"
        " 'pool_trees': {'physical': {'pools': [{'name': 'a', 'max_running_operation_count': 1},"
        "                                       {'name': 'b'}]}},"
        " 'operations': ["
        "   {'id': 'a1', 'start_time': 0, 'spec': {'pool': 'a'}, 'tasks': ["
        "     {'job_count': 1, 'duration': 300, 'resources': {'cpu': 1, 'user_slots': 1}}]},"
        "   {'id': 'a2', 'start_time': 0, 'spec': {'pool': 'a'}, 'tasks': ["
        "     {'job_count': 1, 'duration': 300, 'resources': {'cpu': 1, 'user_slots': 1}}]},"
        "   {'id': 'b1', 'start_time': 0, 'spec': {'pool': 'b'}, 'tasks': ["
        "     {'job_count': 1, 'duration': 300, 'resources': {'cpu': 1, 'user_slots': 1}}]}]}";
    struct run r;
    start(&r, text, false);
    finish_run(&r);
    assert_non_null(strstr(r.events_text, STARTED(0, "a1")));
    assert_non_null(strstr(r.events_text, STARTED(300, "b1")));
    assert_non_null(strstr(r.events_text, STARTED(600, "a2")));
    release(&r);
}

/* The skipping stays exact with out-of-band heartbeats (preemption included), and they change
 * the run. */
static void test_skipping_is_exact_with_heartbeats_on_job_finished(void **state)
{
    (void)state;
    const char *scenarios[] = {busy, preempting};
    for (size_t i = 0; i < 2; i++) {
        char *text = with_oob(scenarios[i]);
        struct run fast, full, periodic;
        run_fast_and_full(text, &fast, &full);
        start(&periodic, scenarios[i], false);
        finish_run(&periodic);
        assert_true(fast.events_len != periodic.events_len ||
                    memcmp(fast.events_text, periodic.events_text, fast.events_len) != 0);
        free(text);
        release(&fast);
        release(&full);
        release(&periodic);
    }
}

/* Statuses that change with time alone: starvation timeouts of pools (their own, a tree's) and
 * of operations (their spec's, shortened by few pending allocations), aggressive starvation, and
 * weights inferred from a moving average of usage. Preemption is rare (a long backoff), so the
 * starving stay starving long enough to become aggressively starving. Updates skipped between
 * the timeouts must change nothing; with the exact outputs checked against the exhaustive run,
 * the fast one still skips most updates. */
static const char *timed =
    "{'heartbeat_period': 2000, 'fair_share_update_period': 300,"
    " 'node_groups': [{'name': 'n', 'count': 6, 'resource_limits': {'cpu': 6, 'memory': 107374182400,"
    "                  'user_slots': 6, 'gpu': 0, 'network': 0}}],"
    " 'pool_trees': {'physical': {'fair_share_starvation_timeout': 9100,"
    "   'fair_share_aggressive_starvation_timeout': 23300,"
    "   'preemptive_scheduling_backoff': 400000,"
    "   'allocation_count_preemption_timeout_coefficient': 4,"
    "   'pools': [{'name': 'hog'},"
    "             {'name': 'agg', 'enable_aggressive_starvation': true,"
    "              'fair_share_starvation_timeout': 5300},"
    "             {'name': 'calm'}]}},"
    " 'operations': ["
    "   {'id': 'H', 'start_time': 0, 'spec': {'pool': 'hog'}, 'tasks': ["
    "     {'job_count': 200, 'duration': 61700, 'resources': {'cpu': 1, 'memory': 1073741824, 'user_slots': 1}}]},"
    "   {'id': 'G', 'start_time': 4100, 'spec': {'pool': 'agg'}, 'tasks': ["
    "     {'job_count': 40, 'duration': 30300, 'resources': {'cpu': 1, 'memory': 1073741824, 'user_slots': 1}}]},"
    "   {'id': 'C', 'start_time': 7700, 'spec': {'pool': 'calm', 'fair_share_starvation_timeout': 17900},"
    "    'tasks': [{'job_count': 3, 'duration': 20900,"
    "               'resources': {'cpu': 1, 'memory': 1073741824, 'user_slots': 1}}]},"
    "   {'id': 'late', 'start_time': 500000, 'spec': {'pool': 'calm'}, 'tasks': ["
    "     {'job_count': 5, 'duration': 9100, 'resources': {'cpu': 2, 'memory': 1073741824, 'user_slots': 1}}]}]}";

/* The same with weights from historic usage: the update runs every period (time moves them). */
static const char *historic =
    "{'heartbeat_period': 2000, 'fair_share_update_period': 300,"
    " 'node_groups': [{'name': 'n', 'count': 2, 'resource_limits': {'cpu': 4, 'memory': 107374182400,"
    "                  'user_slots': 4, 'gpu': 0, 'network': 0}}],"
    " 'pool_trees': {'physical': {'pools': [{'name': 'top', 'infer_children_weights_from_historic_usage': true,"
    "      'historic_usage_config': {'aggregation_mode': 'exponential_moving_average', 'ema_alpha': 0.05}},"
    "     {'name': 'x', 'parent': 'top'}, {'name': 'y', 'parent': 'top'}]}},"
    " 'operations': ["
    "   {'id': 'X', 'start_time': 0, 'spec': {'pool': 'x'}, 'tasks': ["
    "     {'job_count': 60, 'duration': 7300, 'resources': {'cpu': 1, 'memory': 1073741824, 'user_slots': 1}}]},"
    "   {'id': 'Y', 'start_time': 20000, 'spec': {'pool': 'y'}, 'tasks': ["
    "     {'job_count': 60, 'duration': 7300, 'resources': {'cpu': 1, 'memory': 1073741824, 'user_slots': 1}}]}]}";

static void test_skipping_is_exact_with_timed_statuses(void **state)
{
    (void)state;
    const char *scenarios[] = {timed, historic};
    for (size_t i = 0; i < 2; i++) {
        struct run fast, full;
        run_fast_and_full(scenarios[i], &fast, &full);
        struct ps_sim_stats sf, su;
        ps_sim_get_stats(fast.sim, &sf);
        ps_sim_get_stats(full.sim, &su);
        print_message("timed run %zu: %lld/%lld updates (fast/full)\n", i,
                      (long long)sf.fair_share_updates, (long long)su.fair_share_updates);
        if (i == 0) {
            assert_true(count(fast.events_text, "\"status\":\"starving\"") >= 2);
            assert_true(count(fast.events_text, "\"status\":\"aggressively_starving\"") >= 1);
            assert_true(sf.fair_share_updates * 4 < su.fair_share_updates);
        }
        release(&fast);
        release(&full);
    }
}

/* The resource demand check sees node limits as they are now: a node that shrinks under the
 * jobs' size fails both operations at the next check, with the new maximum in the message
 * (core/exec_nodes.h answers from the tree's cache per filter, which the change refreshes). */
static void test_demand_check_after_node_change(void **state)
{
    (void)state;
    static const char *shrinking =
        "{'heartbeat_period': 1000, 'fair_share_update_period': 1000,"
        " 'safe_scheduler_online_time': 0,"
        " 'node_groups': [{'name': 'big', 'count': 1, 'tags': ['fast'],"
        "                  'resource_limits': {'cpu': 8, 'memory': 17179869184, 'user_slots': 8}},"
        "                 {'name': 'small', 'count': 1, 'tags': ['fast'],"
        "                  'resource_limits': {'cpu': 4, 'memory': 17179869184, 'user_slots': 8}}],"
        " 'pool_trees': {'physical': {'pools': [{'name': 'p'}]}},"
        " 'operations': ["
        "   {'id': 'plain', 'start_time': 0, 'spec': {'pool': 'p'}, 'tasks': ["
        "     {'job_count': 4, 'duration': 100000, 'resources': {'cpu': 6, 'user_slots': 1}}]},"
        "   {'id': 'filtered', 'start_time': 0, 'spec': {'pool': 'p', 'scheduling_tag_filter': 'fast'},"
        "    'tasks': [{'job_count': 4, 'duration': 100000, 'resources': {'cpu': 6, 'user_slots': 1}}]}],"
        " 'events': ["
        "   {'time': 20000, 'type': 'set_node_resources', 'node': 'big-0', 'resource_limits': {'cpu': 5}}]}";
    struct run r;
    start(&r, shrinking, false);
    struct ps_error err;
    ps_error_init(&err);
    /* checked (and cached) at 0 and 15 s: a job fits the big node */
    assert_int_equal(ps_sim_run_until(r.sim, 19000, &err), 0);
    struct ps_sim_stats st;
    ps_sim_get_stats(r.sim, &st);
    assert_int_equal(st.operations_failed, 0);
    finish_run(&r);
    ps_sim_get_stats(r.sim, &st);
    assert_int_equal(st.operations_failed, 2);
    assert_int_equal(count(r.events_text, "No online node can satisfy the resource demand"), 2);
    assert_int_equal(count(r.events_text, "max_available_resources {user_slots=8; cpu=5.00;"), 2);
    release(&r);
}

/* One one-slot node at half speed; a task whose first three jobs have their own durations. */
static const char *own_durations =
    "{'heartbeat_period': 100, 'fair_share_update_period': 10,"
    " 'node_groups': [{'name': 'n', 'count': 1, 'resource_limits': {'cpu': 1, 'user_slots': 1},"
    "                  'job_duration_factor': 2, 'send_heartbeat_on_job_finished': true}],"
    " 'pool_trees': {'physical': {'pools': [{'name': 'p'}]}},"
    " 'operations': ["
    "   {'id': 'op', 'start_time': 0, 'spec': {'pool': 'p'}, 'tasks': ["
    "     {'job_count': 4, 'duration': 1000, 'resources': {'cpu': 1, 'user_slots': 1},"
    "      'job_durations': [300, 100, 200]}]}]}";

/* The time of the event of this type for this job (an id "op/task/index/attempt"). */
static long long event_time(const char *events, const char *type, const char *job)
{
    char needle[160];
    snprintf(needle, sizeof needle, "\"event_type\":\"%s\",\"job_id\":\"%s\"", type, job);
    const char *at = strstr(events, needle);
    if (!at)
        fail_msg("no %s event of %s", type, job);
    while (at > events && strncmp(at, "{\"time\":", 8) != 0)
        at--;
    return atoll(at + 8);
}

static long long run_time(const char *events, const char *job)
{
    return event_time(events, "job_completed", job) - event_time(events, "job_started", job);
}

/* job_durations: the task's jobs take them in start order (times the node's factor), the
 * jobs beyond the list last duration, and a retried job keeps its own. */
static void test_job_durations(void **state)
{
    (void)state;
    struct run r;
    start(&r, own_durations, false);
    finish_run(&r);
    assert_int_equal(run_time(r.events_text, "op/0/0/0"), 600);
    assert_int_equal(run_time(r.events_text, "op/0/1/0"), 200);
    assert_int_equal(run_time(r.events_text, "op/0/2/0"), 400);
    assert_int_equal(run_time(r.events_text, "op/0/3/0"), 2000);
    assert_true(event_time(r.events_text, "job_started", "op/0/1/0") >=
                event_time(r.events_text, "job_completed", "op/0/0/0"));
    release(&r);

    start(&r, own_durations, false);
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_sim_run_until(r.sim, 700, &err), 0);
    assert_int_equal(ps_sim_abort_job(r.sim, "op/0/1/0", "node_offline", &err), 0);
    finish_run(&r);
    assert_int_equal(run_time(r.events_text, "op/0/1/1"), 200);
    assert_int_equal(run_time(r.events_text, "op/0/2/0"), 400);
    assert_int_equal(run_time(r.events_text, "op/0/3/0"), 2000);
    release(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_skipping_is_exact),
        cmocka_unit_test(test_outputs_reach_files_at_each_step),
        cmocka_unit_test(test_skipping_is_exact_with_preemption),
        cmocka_unit_test(test_abort_returns_job_to_pending),
        cmocka_unit_test(test_preemption_path),
        cmocka_unit_test(test_job_failures),
        cmocka_unit_test(test_usage_model_and_changes),
        cmocka_unit_test(test_operation_in_two_trees),
        cmocka_unit_test(test_heartbeat_phase),
        cmocka_unit_test(test_heartbeat_on_job_finished),
        cmocka_unit_test(test_reporting_heartbeat_before_update),
        cmocka_unit_test(test_skipping_is_exact_with_heartbeats_on_job_finished),
        cmocka_unit_test(test_skipping_is_exact_with_timed_statuses),
        cmocka_unit_test(test_demand_check_after_node_change),
        cmocka_unit_test(test_job_durations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
