/* Tests of the job CPU monitor: the upstream vector replayed from its file, then the rules of
 * semantics.md 4.2 one by one, the upstream integration expectations of 4.3, and validation. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <string.h>

#include "core/cpu_monitor.h"
#include "core/error.h"

#define VECTOR_PATH PS_TEST_DATA_DIR "/vectors/job-cpu-monitor.json"

/* One key through the config's table (attr.h), as every reader sets it: booleans for
 * enable_cpu_reclaim when value is 0 or 1, numbers otherwise. */
static int cfg_set(struct ps_cpu_monitor_config *cfg, const char *key, double value,
                   struct ps_error *err)
{
    struct ps_value v = strcmp(key, "enable_cpu_reclaim") == 0 && (value == 0 || value == 1)
                            ? ps_value_bool(value != 0)
                            : ps_value_number(value);
    return ps_attr_set(&ps_cpu_monitor_config_table, cfg, key, &v, err);
}

static int cfg_get(const struct ps_cpu_monitor_config *cfg, const char *key, double *value,
                   struct ps_error *err)
{
    struct ps_value v;
    int rc = ps_attr_get(&ps_cpu_monitor_config_table, cfg, key, &v, err);
    if (rc == 0)
        *value = v.type == PS_VALUE_BOOL ? (v.boolean ? 1.0 : 0.0) : v.number;
    ps_value_release(&v);
    return rc;
}

/* Maps a JSON config object onto the config through the generic setter, as shells will. */
static void apply_json_config(struct ps_cpu_monitor_config *cfg, json_t *obj)
{
    const char *key;
    json_t *value;
    json_object_foreach(obj, key, value) {
        double v;
        if (json_is_boolean(value))
            v = json_is_true(value) ? 1.0 : 0.0;
        else
            v = json_number_value(value);
        struct ps_error err;
        ps_error_init(&err);
        int rc = cfg_set(cfg, key, v, &err);
        if (rc != 0)
            print_error("set %s: %s\n", key, err.msg);
        assert_int_equal(rc, 0);
    }
}

/* A monitor with a config, started at t = 0. */
static void make_monitor(struct ps_cpu_monitor *m, const struct ps_cpu_monitor_config *cfg,
                         double limit)
{
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_cpu_monitor_init(m, cfg, limit, &err), 0);
    assert_int_equal(ps_cpu_monitor_start(m, 0, &err), 0);
}

/* Feeds `n` ticks of constant usage (cores) at check_period spacing, continuing from *now and
 * *cpu; returns the last tick. */
static struct ps_cpu_monitor_tick run(struct ps_cpu_monitor *m, int n, double usage,
                                      int64_t *now, double *cpu)
{
    struct ps_cpu_monitor_tick t;
    memset(&t, 0, sizeof t);
    for (int i = 0; i < n; i++) {
        *now += m->config.check_period_ms;
        *cpu += usage * (double)m->config.check_period_ms / 1000.0;
        assert_int_equal(ps_cpu_monitor_tick(m, *now, *cpu, NULL, NULL, &t, NULL), 0);
    }
    return t;
}

static void test_vector_replay(void **state)
{
    (void)state;
    json_error_t jerr;
    json_t *root = json_load_file(VECTOR_PATH, 0, &jerr);
    if (!root)
        print_error("%s: %s\n", VECTOR_PATH, jerr.text);
    assert_non_null(root);

    struct ps_cpu_monitor_config cfg;
    ps_cpu_monitor_config_init(&cfg);
    apply_json_config(&cfg, json_object_get(root, "config"));
    assert_true(cfg.enable_cpu_reclaim);
    double limit = json_number_value(json_object_get(root, "cpu_limit"));
    assert_true(limit > 0);

    struct ps_cpu_monitor m;
    make_monitor(&m, &cfg, limit);
    json_t *trace = json_object_get(root, "trace");
    assert_true(json_array_size(trace) > 10);

    double cpu = 0, smoothed_sum = 0, preemptible_sum = 0;
    size_t i;
    json_t *step;
    json_array_foreach(trace, i, step) {
        int64_t tick = json_integer_value(json_object_get(step, "tick"));
        assert_int_equal(tick, (int64_t)i);
        int64_t now = tick * cfg.check_period_ms;
        json_t *usage = json_object_get(step, "usage");
        if (usage)
            cpu += json_number_value(usage) * (double)cfg.check_period_ms / 1000.0;
        struct ps_cpu_monitor_tick t;
        assert_int_equal(ps_cpu_monitor_tick(&m, now, cpu, NULL, NULL, &t, NULL), 0);
        assert_true(t.checked);

        json_t *smoothed = json_object_get(step, "smoothed_usage");
        assert_int_equal(t.measured, smoothed != NULL);
        if (smoothed) {
            double want = json_number_value(smoothed);
            /* Bit-exact: the vector was replayed in the same double arithmetic. */
            if (t.smoothed_usage != want)
                print_error("tick %lld: smoothed %.17g, vector %.17g\n", (long long)tick,
                            t.smoothed_usage, want);
            assert_true(t.smoothed_usage == want);
            smoothed_sum += want;
        }
        double want_soft = json_number_value(json_object_get(step, "soft_limit"));
        if (m.soft_limit != want_soft)
            print_error("tick %lld: soft %.17g, vector %.17g\n", (long long)tick, m.soft_limit,
                        want_soft);
        assert_true(m.soft_limit == want_soft);
        if (smoothed)
            preemptible_sum += limit - want_soft;
        /* Reclaim is on in the vector: every change must be applied. */
        assert_int_equal(t.apply, t.changed);
    }

    /* Aggregates over 1-second intervals, summed from the vector's own numbers. */
    size_t measured = json_array_size(trace) - 1;
    struct ps_cpu_monitor_stats s = ps_cpu_monitor_stats(&m);
    assert_true(s.valid);
    assert_int_equal(s.aggregated_max_cpu_usage_x100, (int64_t)(limit * (double)measured * 100));
    assert_true(llabs(s.aggregated_smoothed_cpu_usage_x100 - (int64_t)(smoothed_sum * 100)) <= 1);
    assert_true(llabs(s.aggregated_preemptible_cpu_x100 - (int64_t)(preemptible_sum * 100)) <= 1);
    assert_int_equal(s.aggregated_preempted_cpu_x100, s.aggregated_preemptible_cpu_x100);
    assert_int_equal(s.preemptible_cpu_x100, (int64_t)((limit - m.soft_limit) * 100));

    ps_cpu_monitor_release(&m);
    json_decref(root);
}

/* The vector's two decisions, exactly: 2 * 0.97 and then * 0.97 again, bit for bit. */
static void test_vector_decisions_are_exact_products(void **state)
{
    (void)state;
    struct ps_cpu_monitor_config cfg;
    ps_cpu_monitor_config_init(&cfg);
    cfg.enable_cpu_reclaim = true;
    struct ps_cpu_monitor m;
    make_monitor(&m, &cfg, 2.0);
    int64_t now = -1000;
    double cpu = 0;
    run(&m, 1, 0.0, &now, &cpu); /* baseline at t = 0 */
    run(&m, 11, 0.5, &now, &cpu);
    assert_true(m.soft_limit == 2.0);
    struct ps_cpu_monitor_tick t = run(&m, 1, 0.5, &now, &cpu);
    assert_true(t.changed);
    assert_true(t.old_soft_limit == 2.0);
    assert_true(t.new_soft_limit == 2.0 * 0.97);
    run(&m, 5, 0.5, &now, &cpu);
    assert_true(m.soft_limit == 2.0 * 0.97 * 0.97);
    ps_cpu_monitor_release(&m);
}

static void test_start_delay(void **state)
{
    (void)state;
    struct ps_cpu_monitor_config cfg;
    ps_cpu_monitor_config_init(&cfg);
    cfg.start_delay_ms = 3000;
    struct ps_cpu_monitor m;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_cpu_monitor_init(&m, &cfg, 2.0, &err), 0);
    assert_int_equal(ps_cpu_monitor_start(&m, 500, &err), 0);
    assert_int_equal(ps_cpu_monitor_start(&m, 600, &err), PS_ESTATE);

    struct ps_cpu_monitor_tick t;
    assert_int_equal(ps_cpu_monitor_tick(&m, 1500, 1.0, NULL, NULL, &t, NULL), 0);
    assert_false(t.checked);
    assert_int_equal(ps_cpu_monitor_tick(&m, 3499, 2.0, NULL, NULL, &t, NULL), 0);
    assert_false(t.checked);
    assert_int_equal(ps_cpu_monitor_statistics(&m, (struct ps_stat_sample[8]){0}), 0);
    /* 500 + 3000: the check starts; this tick is only the baseline. */
    assert_int_equal(ps_cpu_monitor_tick(&m, 3500, 3.0, NULL, NULL, &t, NULL), 0);
    assert_true(t.checked);
    assert_false(t.measured);
    assert_int_equal(t.vote, PS_CPU_VOTE_NONE);
    /* Measured from the baseline, not from the ticks before the start. */
    assert_int_equal(ps_cpu_monitor_tick(&m, 4500, 3.25, NULL, NULL, &t, NULL), 0);
    assert_true(t.measured);
    assert_true(t.cpu_usage == 0.25);
    assert_true(t.smoothed_usage == 2.0); /* the first smoothed value is the hard limit */
    assert_int_equal(t.vote, PS_CPU_VOTE_INCREASE);
    assert_int_equal(ps_cpu_monitor_tick(&m, 5500, 3.5, NULL, NULL, &t, NULL), 0);
    assert_true(t.smoothed_usage == 0.1 * 0.25 + (1 - 0.1) * 2.0);
    /* The latch holds: a later tick is checked without looking at the start instant again. */
    assert_true(m.check_started);
    ps_cpu_monitor_release(&m);
}

/* Idle until the floor, then busy back up to the hard limit. */
static void test_floor_then_increase_to_hard_limit(void **state)
{
    (void)state;
    struct ps_cpu_monitor_config cfg;
    ps_cpu_monitor_config_init(&cfg);
    cfg.enable_cpu_reclaim = true;
    struct ps_cpu_monitor m;
    make_monitor(&m, &cfg, 4.0);
    assert_true(m.min_limit == 1.0);
    int64_t now = 0;
    double cpu = 0;
    assert_int_equal(ps_cpu_monitor_tick(&m, now, cpu, NULL, NULL, NULL, NULL), 0);

    double lowest = 4.0;
    for (int i = 0; i < 600; i++) {
        run(&m, 1, 0.0, &now, &cpu);
        lowest = fmin(lowest, m.soft_limit);
    }
    /* 4 * 0.97^46 < 1: the last decrease is clamped to the floor exactly. */
    assert_true(m.soft_limit == 1.0);
    assert_true(lowest == 1.0);
    struct ps_cpu_monitor_stats s = ps_cpu_monitor_stats(&m);
    assert_int_equal(s.preemptible_cpu_x100, 300);
    assert_int_equal(s.smoothed_cpu_usage_x100, 0);

    /* Busy at the hard limit: each decision multiplies by 1.45 until the cap. */
    const double want[] = {1.45, 1.45 * 1.45, 1.45 * 1.45 * 1.45, 4.0};
    size_t seen = 0;
    for (int i = 0; i < 200; i++) {
        struct ps_cpu_monitor_tick t = run(&m, 1, 4.0, &now, &cpu);
        if (t.changed) {
            assert_true(seen < 4);
            assert_true(fabs(t.new_soft_limit - want[seen]) < 1e-12);
            assert_true(t.apply);
            seen++;
        }
    }
    assert_int_equal(seen, 4);
    assert_true(m.soft_limit == 4.0); /* capped at the hard limit, exactly */
    assert_int_equal(ps_cpu_monitor_stats(&m).preemptible_cpu_x100, 0);
    ps_cpu_monitor_release(&m);
}

/* A limit below min_cpu_limit is its own floor: nothing can be reclaimed. */
static void test_floor_is_limit_when_limit_below_min(void **state)
{
    (void)state;
    struct ps_cpu_monitor_config cfg;
    ps_cpu_monitor_config_init(&cfg);
    cfg.enable_cpu_reclaim = true;
    struct ps_cpu_monitor m;
    make_monitor(&m, &cfg, 0.5);
    assert_true(m.min_limit == 0.5);
    int64_t now = 0;
    double cpu = 0;
    assert_int_equal(ps_cpu_monitor_tick(&m, now, cpu, NULL, NULL, NULL, NULL), 0);
    for (int i = 0; i < 100; i++) {
        struct ps_cpu_monitor_tick t = run(&m, 1, 0.0, &now, &cpu);
        assert_false(t.decided);
    }
    assert_true(m.soft_limit == 0.5);
    ps_cpu_monitor_release(&m);
}

/* With smoothing_factor 1 the smoothed value is the measured usage, so each tick's vote can be
 * chosen: with soft = 1, usage 0.1 votes decrease, 0.75 keep, 0.95 increase. */
static int64_t g_now;
static double g_cpu;

static enum ps_cpu_vote vote_with(struct ps_cpu_monitor *m, double usage,
                                  struct ps_cpu_monitor_tick *t)
{
    *t = run(m, 1, usage, &g_now, &g_cpu);
    return t->vote;
}

static void window_monitor(struct ps_cpu_monitor *m, int window, int threshold)
{
    struct ps_cpu_monitor_config cfg;
    ps_cpu_monitor_config_init(&cfg);
    cfg.smoothing_factor = 1.0;
    cfg.min_cpu_limit = 0.1;
    cfg.vote_window_size = window;
    cfg.vote_decision_threshold = threshold;
    make_monitor(m, &cfg, 1.0);
    g_now = 0;
    g_cpu = 0;
    assert_int_equal(ps_cpu_monitor_tick(m, g_now, g_cpu, NULL, NULL, NULL, NULL), 0);
}

static void test_window_and_threshold(void **state)
{
    (void)state;
    struct ps_cpu_monitor m;
    struct ps_cpu_monitor_tick t;
    window_monitor(&m, 5, 3);
    /* First measured tick: smoothed = hard = 1, ratio 1 > 0.9. */
    assert_int_equal(vote_with(&m, 0.1, &t), PS_CPU_VOTE_INCREASE);
    assert_int_equal(vote_with(&m, 0.1, &t), PS_CPU_VOTE_DECREASE);
    assert_int_equal(vote_with(&m, 0.1, &t), PS_CPU_VOTE_DECREASE);
    assert_int_equal(vote_with(&m, 0.1, &t), PS_CPU_VOTE_DECREASE);
    assert_int_equal(m.vote_count, 4);
    /* [I D D D K]: sum -2, not beyond the threshold: the oldest (I) drops out. */
    assert_int_equal(vote_with(&m, 0.75, &t), PS_CPU_VOTE_KEEP);
    assert_false(t.decided);
    assert_int_equal(m.vote_count, 4);
    /* [D D D K K]: sum -3 == -threshold: strict, still no decision. */
    assert_int_equal(vote_with(&m, 0.75, &t), PS_CPU_VOTE_KEEP);
    assert_false(t.decided);
    /* [D D K K D]: -3 again. [D K K D D]: -3. Then [K K D D D]: -3, [K D D D D]: -4 decides. */
    vote_with(&m, 0.1, &t);
    assert_false(t.decided);
    vote_with(&m, 0.1, &t);
    assert_false(t.decided);
    vote_with(&m, 0.1, &t);
    assert_false(t.decided);
    vote_with(&m, 0.1, &t);
    assert_true(t.decided);
    assert_true(t.new_soft_limit == 0.97);
    assert_int_equal(m.vote_count, 0); /* cleared on a decision */
    /* The window must fill again before the next decision: four votes are not enough. */
    for (int i = 0; i < 4; i++) {
        vote_with(&m, 0.05, &t);
        assert_false(t.decided);
    }
    vote_with(&m, 0.05, &t);
    assert_true(t.decided);
    assert_true(t.new_soft_limit == 0.97 * 0.97);
    ps_cpu_monitor_release(&m);
}

static void test_bounds_are_strict(void **state)
{
    (void)state;
    struct ps_cpu_monitor m;
    struct ps_cpu_monitor_tick t;
    window_monitor(&m, 5, 3);
    vote_with(&m, 0.0, &t); /* the hard-limit tick */
    /* soft = 1: ratio exactly 0.6 and exactly 0.9 are both "keep". */
    assert_int_equal(vote_with(&m, 0.6, &t), PS_CPU_VOTE_KEEP);
    assert_int_equal(vote_with(&m, 0.9, &t), PS_CPU_VOTE_KEEP);
    assert_int_equal(vote_with(&m, 0.59, &t), PS_CPU_VOTE_DECREASE);
    assert_int_equal(vote_with(&m, 0.91, &t), PS_CPU_VOTE_INCREASE);
    ps_cpu_monitor_release(&m);
}

/* A decisive window at the cap clears the votes without a decision. */
static void test_votes_cleared_without_change(void **state)
{
    (void)state;
    struct ps_cpu_monitor m;
    struct ps_cpu_monitor_tick t;
    window_monitor(&m, 5, 3);
    for (int i = 0; i < 4; i++)
        vote_with(&m, 1.0, &t);
    assert_int_equal(m.vote_count, 4);
    assert_int_equal(vote_with(&m, 1.0, &t), PS_CPU_VOTE_INCREASE);
    assert_false(t.decided); /* min(1 * 1.45, 1) == soft */
    assert_int_equal(m.vote_count, 0);
    ps_cpu_monitor_release(&m);
}

/* Threshold 0 in a window of 1: every vote but "keep" decides. */
static void test_window_of_one(void **state)
{
    (void)state;
    struct ps_cpu_monitor m;
    struct ps_cpu_monitor_tick t;
    window_monitor(&m, 1, 0);
    vote_with(&m, 0.0, &t); /* increase vote at the cap: no change */
    assert_false(t.decided);
    vote_with(&m, 0.0, &t);
    assert_true(t.decided);
    assert_true(m.soft_limit == 0.97);
    vote_with(&m, 0.7, &t); /* ratio 0.7 / 0.97 keeps */
    assert_int_equal(t.vote, PS_CPU_VOTE_KEEP);
    assert_false(t.decided);
    assert_int_equal(m.vote_count, 0);
    ps_cpu_monitor_release(&m);
}

struct setter_log {
    int calls;
    double last;
    bool answer;
};

static bool fake_set(void *ctx, double cores)
{
    struct setter_log *log = ctx;
    log->calls++;
    log->last = cores;
    return log->answer;
}

/* Idle trace with a given reclaim setting and callback; returns the final monitor state. */
static void idle_trace(struct ps_cpu_monitor *m, bool reclaim, struct setter_log *log,
                       int *changes, int *applies, int *refusals)
{
    struct ps_cpu_monitor_config cfg;
    ps_cpu_monitor_config_init(&cfg);
    cfg.enable_cpu_reclaim = reclaim;
    make_monitor(m, &cfg, 2.0);
    *changes = *applies = *refusals = 0;
    double cpu = 0;
    for (int64_t now = 0; now <= 100000; now += 1000) {
        struct ps_cpu_monitor_tick t;
        assert_int_equal(ps_cpu_monitor_tick(m, now, cpu, log ? fake_set : NULL, log, &t, NULL),
                         0);
        *changes += t.changed;
        *applies += t.apply;
        *refusals += t.refused;
        cpu += 0.2;
    }
}

static void test_dry_run_with_reclaim_off(void **state)
{
    (void)state;
    struct ps_cpu_monitor off, on;
    struct setter_log log_off = {0, 0, true}, log_on = {0, 0, true};
    int changes_off, applies_off, refusals_off, changes_on, applies_on, refusals_on;
    idle_trace(&off, false, &log_off, &changes_off, &applies_off, &refusals_off);
    idle_trace(&on, true, &log_on, &changes_on, &applies_on, &refusals_on);

    /* The soft limit moves the same way; only "apply" and the callback differ. */
    assert_true(changes_off > 3);
    assert_int_equal(changes_off, changes_on);
    assert_true(off.soft_limit == on.soft_limit);
    assert_true(off.soft_limit < 2.0);
    assert_int_equal(applies_off, 0);
    assert_int_equal(log_off.calls, 0);
    assert_int_equal(applies_on, changes_on);
    assert_int_equal(log_on.calls, changes_on);
    assert_true(log_on.last == on.soft_limit);

    struct ps_cpu_monitor_stats s_off = ps_cpu_monitor_stats(&off);
    struct ps_cpu_monitor_stats s_on = ps_cpu_monitor_stats(&on);
    assert_true(s_off.preemptible_cpu_x100 > 0);
    assert_true(s_off.aggregated_preemptible_cpu_x100 > 0);
    assert_int_equal(s_off.aggregated_preemptible_cpu_x100, s_on.aggregated_preemptible_cpu_x100);
    assert_int_equal(s_off.aggregated_preempted_cpu_x100, 0);
    assert_int_equal(s_on.aggregated_preempted_cpu_x100, s_on.aggregated_preemptible_cpu_x100);

    /* With reclaim on, a refused guarantee leaves the soft limit alone. */
    struct ps_cpu_monitor refused;
    struct setter_log log_no = {0, 0, false};
    int changes, applies, refusals;
    idle_trace(&refused, true, &log_no, &changes, &applies, &refusals);
    assert_int_equal(changes, 0);
    assert_int_equal(applies, 0);
    assert_true(refusals > 3);
    assert_int_equal(log_no.calls, refusals);
    assert_true(refused.soft_limit == 2.0);

    ps_cpu_monitor_release(&off);
    ps_cpu_monitor_release(&on);
    ps_cpu_monitor_release(&refused);
}

/* Aggregates grow by each tick's own interval, in seconds. */
static void test_aggregates_use_interval(void **state)
{
    (void)state;
    struct ps_cpu_monitor_config cfg;
    ps_cpu_monitor_config_init(&cfg);
    struct ps_cpu_monitor m;
    make_monitor(&m, &cfg, 2.0);
    struct ps_cpu_monitor_tick t;
    assert_int_equal(ps_cpu_monitor_tick(&m, 0, 0.0, NULL, NULL, &t, NULL), 0);
    assert_int_equal(ps_cpu_monitor_tick(&m, 300, 0.3, NULL, NULL, &t, NULL), 0);
    assert_true(t.cpu_usage == 1.0);
    assert_true(t.smoothed_usage == 2.0);
    assert_int_equal(ps_cpu_monitor_tick(&m, 1000, 0.65, NULL, NULL, &t, NULL), 0);
    assert_true(t.cpu_usage == 0.5);
    struct ps_cpu_monitor_stats s = ps_cpu_monitor_stats(&m);
    /* 2 cores * (0.3 s + 0.7 s) */
    assert_int_equal(s.aggregated_max_cpu_usage_x100, 200);
    /* 2 * 0.3 + 1.85 * 0.7 = 1.895 core-seconds, truncated */
    assert_int_equal(s.aggregated_smoothed_cpu_usage_x100, 189);
    assert_int_equal(s.smoothed_cpu_usage_x100, 185);
    assert_int_equal(s.aggregated_preemptible_cpu_x100, 0);
    ps_cpu_monitor_release(&m);
}

/* The statistics paths, in order, with upstream's compatibility names. */
static void test_statistics_paths(void **state)
{
    (void)state;
    struct ps_cpu_monitor m;
    int c, a, r;
    idle_trace(&m, false, NULL, &c, &a, &r);
    struct ps_stat_sample out[PS_CPU_MONITOR_STAT_COUNT];
    assert_int_equal(ps_cpu_monitor_statistics(&m, out), 8);
    const char *paths[] = {
        "/job_proxy/smoothed_cpu_usage_x100",
        "/job_proxy/preemptable_cpu_x100",
        "/job_proxy/preemptible_cpu_x100",
        "/job_proxy/aggregated_smoothed_cpu_usage_x100",
        "/job_proxy/aggregated_max_cpu_usage_x100",
        "/job_proxy/aggregated_preemptable_cpu_x100",
        "/job_proxy/aggregated_preemptible_cpu_x100",
        "/job_proxy/aggregated_preempted_cpu_x100",
    };
    for (int i = 0; i < 8; i++)
        assert_string_equal(out[i].path, paths[i]);
    assert_int_equal(out[1].value, out[2].value);
    assert_int_equal(out[5].value, out[6].value);
    /* 100 one-second intervals at the hard limit 2. */
    assert_int_equal(out[4].value, 20000);
    /* Truncation toward zero of the smoothed value. */
    assert_int_equal(out[0].value, (int64_t)(m.smoothed_usage * 100));
    ps_cpu_monitor_release(&m);
}

/* semantics.md 4.3: the upstream integration test's spec, a job with CPU limit 1. */
static void old_config(struct ps_cpu_monitor_config *cfg)
{
    ps_cpu_monitor_config_init(cfg);
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(cfg_set(cfg, "check_period", 10, &err), 0);
    assert_int_equal(cfg_set(cfg, "increase_coefficient", 1.15, &err), 0);
    assert_int_equal(cfg_set(cfg, "decrease_coefficient", 0.85, &err), 0);
    assert_int_equal(cfg_set(cfg, "smoothing_factor", 0.2, &err), 0);
    assert_int_equal(cfg_set(cfg, "vote_window_size", 5, &err), 0);
    assert_int_equal(cfg_set(cfg, "vote_decision_threshold", 3, &err), 0);
    assert_int_equal(cfg_set(cfg, "min_cpu_limit", 0.1, &err), 0);
    assert_int_equal(cfg_set(cfg, "enable_cpu_reclaim", 1, &err), 0);
    assert_int_equal(ps_cpu_monitor_config_validate(cfg, &err), 0);
}

/* A job running for 5 s, statistics read at its end (as the per-job values the test's .max
 * aggregates over). usage_cores is what the job burns per check. */
static struct ps_cpu_monitor_stats integration_job(double usage_cores)
{
    struct ps_cpu_monitor_config cfg;
    old_config(&cfg);
    struct ps_cpu_monitor m;
    make_monitor(&m, &cfg, 1.0);
    int64_t now = 0;
    double cpu = 0;
    assert_int_equal(ps_cpu_monitor_tick(&m, now, cpu, NULL, NULL, NULL, NULL), 0);
    run(&m, 500, usage_cores, &now, &cpu);
    struct ps_cpu_monitor_stats s = ps_cpu_monitor_stats(&m);
    ps_cpu_monitor_release(&m);
    return s;
}

static void test_upstream_sleeping_job(void **state)
{
    (void)state;
    struct ps_cpu_monitor_stats s = integration_job(0.0);
    assert_true(s.valid);
    assert_true(s.smoothed_cpu_usage_x100 <= 15);
    assert_true(s.preemptible_cpu_x100 >= 85);
    /* With min_cpu_limit 0.1 the soft limit bottoms out at 0.1: 90 is the most possible. */
    assert_int_equal(s.preemptible_cpu_x100, 90);
    assert_true(s.aggregated_preempted_cpu_x100 > 0);
    /* A sleeping job that still wakes up a little. */
    s = integration_job(0.02);
    assert_true(s.smoothed_cpu_usage_x100 <= 15);
    assert_true(s.preemptible_cpu_x100 >= 85);
}

static void test_upstream_busy_job(void **state)
{
    (void)state;
    struct ps_cpu_monitor_stats s = integration_job(1.0);
    assert_true(s.smoothed_cpu_usage_x100 >= 85);
    assert_int_equal(s.preemptible_cpu_x100, 0);
    assert_int_equal(s.aggregated_preemptible_cpu_x100, 0);
    /* A busy loop a little short of a full core (scheduler noise) is still busy. */
    s = integration_job(0.93);
    assert_true(s.smoothed_cpu_usage_x100 >= 85);
    assert_int_equal(s.preemptible_cpu_x100, 0);
}

static void test_tick_errors_leave_state(void **state)
{
    (void)state;
    struct ps_cpu_monitor_config cfg;
    ps_cpu_monitor_config_init(&cfg);
    struct ps_cpu_monitor m;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_cpu_monitor_init(&m, &cfg, 1.0, &err), 0);
    assert_int_equal(ps_cpu_monitor_tick(&m, 0, 0, NULL, NULL, NULL, &err), PS_ESTATE);
    assert_non_null(strstr(err.msg, "before start"));
    assert_int_equal(ps_cpu_monitor_start(&m, 0, NULL), 0);
    assert_int_equal(ps_cpu_monitor_tick(&m, 1000, 1.0, NULL, NULL, NULL, NULL), 0);

    ps_error_init(&err);
    assert_int_equal(ps_cpu_monitor_tick(&m, 1000, 1.5, NULL, NULL, NULL, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "now_ms 1000"));
    ps_error_init(&err);
    assert_int_equal(ps_cpu_monitor_tick(&m, 2000, 0.5, NULL, NULL, NULL, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "cumulative"));
    ps_error_init(&err);
    assert_int_equal(ps_cpu_monitor_tick(&m, 2000, NAN, NULL, NULL, NULL, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "total_cpu_seconds"));
    assert_int_equal(ps_cpu_monitor_tick(&m, 2000, -1, NULL, NULL, NULL, NULL), PS_EINVAL);
    assert_false(m.has_smoothed);
    assert_true(m.last_check_ms == 1000);

    struct ps_cpu_monitor_tick t;
    assert_int_equal(ps_cpu_monitor_tick(&m, 2000, 1.5, NULL, NULL, &t, NULL), 0);
    assert_true(t.measured);
    assert_true(t.cpu_usage == 0.5);
    ps_cpu_monitor_release(&m);
    ps_cpu_monitor_release(&m); /* twice is harmless */

    ps_error_init(&err);
    assert_int_equal(ps_cpu_monitor_init(&m, &cfg, -1, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "cpu_limit"));
    ps_cpu_monitor_release(&m);
}

static void test_config_keys(void **state)
{
    (void)state;
    const char *names[] = {"enable_cpu_reclaim", "check_period", "start_delay",
                           "smoothing_factor", "relative_upper_bound", "relative_lower_bound",
                           "increase_coefficient", "decrease_coefficient", "vote_window_size",
                           "vote_decision_threshold", "min_cpu_limit"};
    const double defaults[] = {0, 1000, 0, 0.1, 0.9, 0.6, 1.45, 0.97, 5, 3, 1};
    struct ps_cpu_monitor_config cfg;
    ps_cpu_monitor_config_init(&cfg);
    const struct ps_attr_table *t = &ps_cpu_monitor_config_table;
    assert_int_equal(t->count, 11);
    for (int i = 0; i < 11; i++) {
        assert_string_equal(t->attrs[i].name, names[i]);
        double v = -1;
        assert_int_equal(cfg_get(&cfg, t->attrs[i].name, &v, NULL), 0);
        assert_true(v == defaults[i]);
    }
    assert_int_equal(t->attrs[1].kind, PS_ATTR_INT);
    assert_int_equal(t->attrs[0].kind, PS_ATTR_BOOL);
    assert_int_equal(ps_cpu_monitor_config_validate(&cfg, NULL), 0);

    /* Set then get round-trips, and set reaches the struct field. */
    assert_int_equal(cfg_set(&cfg, "start_delay", 2500, NULL), 0);
    assert_int_equal(cfg.start_delay_ms, 2500);
    assert_int_equal(cfg_set(&cfg, "enable_cpu_reclaim", 1, NULL), 0);
    assert_true(cfg.enable_cpu_reclaim);
    assert_int_equal(cfg_set(&cfg, "vote_window_size", 30, NULL), 0);
    assert_int_equal(cfg.vote_window_size, 30);
    double v;
    assert_int_equal(cfg_get(&cfg, "vote_window_size", &v, NULL), 0);
    assert_true(v == 30);

    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(cfg_get(&cfg, "nope", &v, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "nope"));
    ps_error_init(&err);
    assert_int_equal(cfg_set(&cfg, "smoothing", 0.5, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "unknown key"));
}

/* One bad value through the setter: the error names key, value and range; cfg unchanged. */
static void expect_set_error(const char *key, double value, const char *needle)
{
    struct ps_cpu_monitor_config cfg, before;
    ps_cpu_monitor_config_init(&cfg);
    before = cfg;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(cfg_set(&cfg, key, value, &err), PS_EINVAL);
    if (!strstr(err.msg, needle) || !strstr(err.msg, key))
        print_error("message \"%s\" lacks \"%s\"\n", err.msg, needle);
    assert_non_null(strstr(err.msg, key));
    assert_non_null(strstr(err.msg, needle));
    assert_memory_equal(&cfg, &before, sizeof cfg);
}

static void test_config_validation_errors(void **state)
{
    (void)state;
    expect_set_error("smoothing_factor", 0, "(0, 1]");
    expect_set_error("smoothing_factor", 1.5, "got 1.5");
    expect_set_error("smoothing_factor", NAN, "must be a finite number");
    expect_set_error("relative_upper_bound", 0, "(0, 1]");
    expect_set_error("relative_upper_bound", 1.01, "(0, 1]");
    expect_set_error("relative_lower_bound", -0.1, "[0, 1)");
    expect_set_error("relative_lower_bound", 1, "[0, 1)");
    expect_set_error("increase_coefficient", 0.99, "[1, 2]");
    expect_set_error("increase_coefficient", 2.5, "[1, 2]");
    expect_set_error("decrease_coefficient", 1.2, "[0, 1]");
    expect_set_error("decrease_coefficient", -0.5, "[0, 1]");
    expect_set_error("vote_window_size", 0, "[1, 1000000]");
    expect_set_error("vote_window_size", 2.5, "must be an integer");
    expect_set_error("vote_decision_threshold", -1, "[0, 1000000]");
    expect_set_error("min_cpu_limit", -0.1, "[0, 1]");
    expect_set_error("min_cpu_limit", 1.5, "[0, 1]");
    expect_set_error("check_period", 0, "(0, 1000000000000]");
    expect_set_error("check_period", 10.5, "must be an integer");
    expect_set_error("start_delay", -1, "[0, 1000000000000]");
    expect_set_error("enable_cpu_reclaim", 2, "must be a boolean");

    /* Relations between keys are checked by validate. */
    struct ps_cpu_monitor_config cfg;
    struct ps_error err;
    ps_cpu_monitor_config_init(&cfg);
    cfg.relative_lower_bound = 0.9;
    cfg.relative_upper_bound = 0.6;
    ps_error_init(&err);
    assert_int_equal(ps_cpu_monitor_config_validate(&cfg, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "relative_lower_bound 0.9 must be less than "
                                    "relative_upper_bound 0.6"));

    ps_cpu_monitor_config_init(&cfg);
    cfg.vote_decision_threshold = 5;
    ps_error_init(&err);
    assert_int_equal(ps_cpu_monitor_config_validate(&cfg, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "vote_decision_threshold is 5"));
    assert_non_null(strstr(err.msg, "vote_window_size = 5"));

    /* Fields set directly are checked too. */
    ps_cpu_monitor_config_init(&cfg);
    cfg.check_period_ms = 0;
    ps_error_init(&err);
    assert_int_equal(ps_cpu_monitor_config_validate(&cfg, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "job_cpu_monitor/check_period: must be in (0, "));
    ps_cpu_monitor_config_init(&cfg);
    cfg.smoothing_factor = NAN;
    assert_int_equal(ps_cpu_monitor_config_validate(&cfg, NULL), PS_EINVAL);

    /* init refuses an invalid config. */
    struct ps_cpu_monitor m;
    ps_cpu_monitor_config_init(&cfg);
    cfg.vote_window_size = 0;
    ps_error_init(&err);
    assert_int_equal(ps_cpu_monitor_init(&m, &cfg, 1.0, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "vote_window_size: must be in [1, 1000000], got 0"));
    ps_cpu_monitor_release(&m);

    /* The boundaries themselves are allowed. */
    ps_cpu_monitor_config_init(&cfg);
    assert_int_equal(cfg_set(&cfg, "smoothing_factor", 1, NULL), 0);
    assert_int_equal(cfg_set(&cfg, "relative_lower_bound", 0, NULL), 0);
    assert_int_equal(cfg_set(&cfg, "relative_upper_bound", 1, NULL), 0);
    assert_int_equal(cfg_set(&cfg, "increase_coefficient", 2, NULL), 0);
    assert_int_equal(cfg_set(&cfg, "decrease_coefficient", 0, NULL), 0);
    assert_int_equal(cfg_set(&cfg, "min_cpu_limit", 0, NULL), 0);
    assert_int_equal(cfg_set(&cfg, "vote_decision_threshold", 0, NULL), 0);
    assert_int_equal(ps_cpu_monitor_config_validate(&cfg, NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vector_replay),
        cmocka_unit_test(test_vector_decisions_are_exact_products),
        cmocka_unit_test(test_start_delay),
        cmocka_unit_test(test_floor_then_increase_to_hard_limit),
        cmocka_unit_test(test_floor_is_limit_when_limit_below_min),
        cmocka_unit_test(test_window_and_threshold),
        cmocka_unit_test(test_bounds_are_strict),
        cmocka_unit_test(test_votes_cleared_without_change),
        cmocka_unit_test(test_window_of_one),
        cmocka_unit_test(test_dry_run_with_reclaim_off),
        cmocka_unit_test(test_aggregates_use_interval),
        cmocka_unit_test(test_statistics_paths),
        cmocka_unit_test(test_upstream_sleeping_job),
        cmocka_unit_test(test_upstream_busy_job),
        cmocka_unit_test(test_tick_errors_leave_state),
        cmocka_unit_test(test_config_keys),
        cmocka_unit_test(test_config_validation_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
