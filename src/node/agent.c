#include "node/agent.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "core/node_dyncfg.h"
#include "core/resources.h"
#include "io/json_value.h"
#include "node/jobs.h"
#include "node/protocol.h"
#include "platform/clock.h"
#include "platform/daemon.h"
#include "platform/http_client.h"
#include "platform/random.h"
#include "platform/wall_clock.h"

#define CHILD_TICK_GAP_MS 10
/* A heartbeat under way this long is held (a reply is made in milliseconds): a job's exit or a
 * stop signal may give it up then. */
#define HOLD_INTERRUPT_AFTER_MS 100

void ps_node_agent_config_init(struct ps_node_agent_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->heartbeat_period_ms = 5000;
    cfg->tick_ms = 100;
    cfg->min_heartbeat_gap_ms = 50;
    cfg->request_timeout_ms = 10000;
    cfg->shutdown_grace_ms = 5000;
    cfg->report_stderr_budget_bytes = 4u * 1024u * 1024u;
    ps_node_overdraft_config_init(&cfg->overdraft);
    cfg->long_poll = true;
    cfg->start_port = PS_NODE_DEFAULT_START_PORT;
    cfg->port_count = PS_NODE_DEFAULT_PORT_COUNT;
}

struct agent {
    const struct ps_node_agent_config *cfg;
    const struct ps_node_runner *runner;
    struct ps_node_jobs *jobs;
    struct ps_http_client *http;
    char url[1024];             /* the heartbeat URL of the scheduler in use */
    char urls[PS_NODE_MAX_SCHEDULERS][1024];   /* --scheduler A,B: every scheduler's */
    int url_count, url_index;
    int64_t epoch;              /* the highest leader epoch seen (0: none, no --ha) */
    struct ps_node_identity id;
    int64_t period_ms;
    bool registered;
    int64_t failures;           /* consecutive failed heartbeats */
    int64_t heartbeats;
    int64_t offline_timeout_ms; /* the scheduler's node_offline_timeout; 0 until it says */
    int64_t last_ok_sent_ms;    /* when the last accepted heartbeat was sent */
    bool lost;                  /* jobs were aborted as the scheduler has given them away */
    int64_t request_timeout_ms;
    bool long_poll_ok;          /* the scheduler holds heartbeats (it answered wait_ms) */
    int64_t last_reply_seq;     /* reply_seq of the last reply acted on (0: none) */
    bool interrupted;           /* the last heartbeat was given up (a job exited) */
    bool stop;                  /* a stop signal came while a heartbeat was under way */
    int signal_fd;              /* readable while a job exit or stop signal is pending */
    /* the loop's schedule (ms, monotonic) */
    int64_t next_tick, next_full_tick, last_tick, next_hb, last_hb;
    bool more;                  /* finished jobs are still waiting to be reported */
};

/* The node's factor from now on: its cpu limit as the scheduler counts it (vcpu), the factor it
 * reports, and the jobs it starts later (jobs.h). */
static void set_cpu_to_vcpu_factor(struct agent *a, double factor)
{
    a->id.cpu = ps_cpu_round(a->cfg->cpu * factor);
    a->id.cpu_to_vcpu_factor = factor;
    ps_node_jobs_set_cpu_to_vcpu_factor(a->jobs, factor);
}

__attribute__((format(printf, 2, 3))) static void alog(struct agent *a, const char *fmt, ...);

/* The nodes' dynamic config of a heartbeat reply (core/node_dyncfg.h): the factor it resolves
 * to for this node. A config the agent cannot use is logged and its version noted (the
 * scheduler checked it; it is not sent again until it changes). */
static void apply_dynamic_config(struct agent *a, const json_t *config, int64_t version)
{
    struct ps_value v = ps_value_null();
    struct ps_error e;
    ps_error_init(&e);
    a->id.dynamic_config_version = version;
    if (ps_json_to_value(config, &v, &e) != 0 || ps_node_dyncfg_check_node(&v, &e) != 0) {
        alog(a, "the nodes' dynamic config version %lld is not applied: %s", (long long)version,
             e.msg);
        ps_value_release(&v);
        return;
    }
    double f = ps_node_dyncfg_cpu_to_vcpu_factor(&v, a->cfg->cpu_to_vcpu_factor, a->cfg->cpu_model);
    ps_value_release(&v);
    alog(a, "the nodes' dynamic config version %lld applied: cpu_to_vcpu_factor %g",
         (long long)version, f);
    if (f != a->id.cpu_to_vcpu_factor)
        set_cpu_to_vcpu_factor(a, f);
}

int ps_node_instance_id_new(char *out, size_t size, struct ps_error *err)
{
    unsigned char b[8];
    if (size < 2 * sizeof b + 1)
        return ps_error_set(err, PS_EINVAL, "instance id buffer too small");
    int rc = ps_random_bytes(b, sizeof b, err);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < sizeof b; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
    return 0;
}

static int64_t now_ms(void)
{
    return ps_clock_monotonic_ns() / 1000000;
}

static void vlog_line(const char *node_id, const char *fmt, va_list ap)
{
    int64_t ms = ps_daemon_wall_ms();
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    char stamp[32] = "";
    if (gmtime_r(&secs, &tm))
        strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
    char line[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    fprintf(stderr, "%s.%03dZ node %s: %s\n", stamp, (int)(ms % 1000), node_id, line);
}

__attribute__((format(printf, 2, 3))) static void alog(struct agent *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog_line(a->cfg->node_id, fmt, ap);
    va_end(ap);
}

static void jobs_log(void *ctx, const char *fmt, va_list ap)
{
    struct agent *a = ctx;
    vlog_line(a->cfg->node_id, fmt, ap);
}

/* The one-line message of an error reply {"code", "message"}, or the start of the body. */
static void reply_message(const struct ps_http_result *res, char *buf, size_t size)
{
    json_t *doc = json_loadb(res->body, res->body_len, 0, NULL);
    const char *msg = doc ? json_string_value(json_object_get(doc, "message")) : NULL;
    if (msg)
        snprintf(buf, size, "%s", msg);
    else
        snprintf(buf, size, "%.200s", res->body ? res->body : "");
    json_decref(doc);
}

static void apply_reply(struct agent *a, const struct ps_node_reply *r, int64_t now)
{
    size_t acked = 0;
    for (size_t i = 0; i < r->acknowledged_count; i++)
        acked += ps_node_jobs_acknowledge(a->jobs, r->acknowledged[i]);
    for (size_t i = 0; i < r->abort_count; i++) {
        alog(a, "job %s: abort requested (%s)", r->aborts[i].job_id, r->aborts[i].reason);
        ps_node_jobs_abort(a->jobs, r->aborts[i].job_id, r->aborts[i].reason);
    }
    for (size_t i = 0; i < r->interrupt_count; i++)
        ps_node_jobs_interrupt(a->jobs, r->interrupts[i].job_id, r->interrupts[i].timeout_ms,
                               r->interrupts[i].reason, now);
    for (size_t i = 0; i < r->start_count; i++)
        ps_node_jobs_start(a->jobs, &r->starts[i], now);
    if (r->has_offline_timeout && r->node_offline_timeout_ms != a->offline_timeout_ms) {
        alog(a, "the scheduler gives a silent node's jobs away after %lld ms; this agent aborts "
             "them itself by then", (long long)r->node_offline_timeout_ms);
        a->offline_timeout_ms = r->node_offline_timeout_ms;
    }
    if (r->dynamic_config)   /* after the starts: the scheduler gave them the old factor */
        apply_dynamic_config(a, r->dynamic_config, r->dynamic_config_version);
    if (r->has_heartbeat_period && r->heartbeat_period_ms != a->period_ms) {
        alog(a, "heartbeat period is now %lld ms", (long long)r->heartbeat_period_ms);
        a->period_ms = r->heartbeat_period_ms;
    }
    if (a->cfg->verbose)
        alog(a, "heartbeat: %zu to start, %zu to interrupt, %zu to abort, %zu acknowledged",
             r->start_count, r->interrupt_count, r->abort_count, acked);
}

/* When the scheduler may declare this node offline (and rerun its jobs elsewhere), counted from
 * the sending of the last heartbeat it accepted, a little early (a quarter of the timeout, at
 * most a second): the scheduler saw that heartbeat at or after it was sent, and checks nodes
 * about once a second. INT64_MAX when unknown. */
static int64_t offline_margin(const struct agent *a)
{
    return a->offline_timeout_ms / 4 < 1000 ? a->offline_timeout_ms / 4 : 1000;
}

static int64_t lost_deadline(const struct agent *a)
{
    if (!a->registered || a->offline_timeout_ms <= 0)
        return INT64_MAX;
    return a->last_ok_sent_ms + a->offline_timeout_ms - offline_margin(a);
}

/* The runner's guard kills the jobs a little after the agent would have aborted them itself,
 * but still before the scheduler gives them away: that catches a stopped or hung agent. */
static void arm_guard(struct agent *a, int64_t now)
{
    if (!a->runner->ops->arm_deadline)
        return;
    int64_t deadline = lost_deadline(a);
    if (deadline == INT64_MAX) {
        a->runner->ops->arm_deadline(a->runner->ctx, 0);
        return;
    }
    int64_t left = deadline + offline_margin(a) / 2 - now;
    a->runner->ops->arm_deadline(a->runner->ctx, left > 1 ? left : 1);
}

/* Past the deadline every job is aborted before anything else happens (a tick, a report): the
 * scheduler has given them away, so letting them run on would run them twice. This is also
 * what an agent sees first after SIGSTOP + SIGCONT or a suspended machine. */
static void check_lost(struct agent *a, int64_t now)
{
    int64_t deadline = lost_deadline(a);
    if (a->lost || now < deadline || ps_node_jobs_running_count(a->jobs) == 0)
        return;
    alog(a, "no heartbeat accepted for %lld ms (the scheduler's node_offline_timeout is %lld "
         "ms): it has given this node's jobs away; aborting %zu running jobs",
         (long long)(now - a->last_ok_sent_ms), (long long)a->offline_timeout_ms,
         ps_node_jobs_running_count(a->jobs));
    ps_node_jobs_abort_all(a->jobs, "node_offline");
    a->lost = true;
    /* SIGKILLed processes end within milliseconds: reaping them now lets the next report say
     * "aborted" rather than "running" (a job still there is reported running, and the
     * scheduler answers with an abort it no longer needs). Bounded: 200 ms. */
    for (int i = 0; i < 40 && ps_node_jobs_running_count(a->jobs) > 0; i++) {
        ps_sleep_ms(5);
        ps_node_jobs_reap(a->jobs, now_ms());
    }
}

/* jobs.h lost_reason: "node_offline" once past the deadline. */
static const char *jobs_lost_reason(void *ctx)
{
    struct agent *a = ctx;
    return now_ms() >= lost_deadline(a) ? "node_offline" : NULL;
}

/* With several schedulers (--scheduler A,B): the next one, after a failed heartbeat or a
 * standby's 503 (ha.h). */
static void next_scheduler(struct agent *a)
{
    if (a->url_count < 2)
        return;
    a->url_index = (a->url_index + 1) % a->url_count;
    snprintf(a->url, sizeof a->url, "%s", a->urls[a->url_index]);
}

/* Logs a failed heartbeat: the first of a run of failures, then every tenth. */
static void heartbeat_failed(struct agent *a, const char *what)
{
    next_scheduler(a);
    a->failures++;
    if (a->failures == 1 || a->failures % 10 == 0)
        alog(a, "heartbeat failed (%lld in a row): %s; jobs keep running", (long long)a->failures,
             what);
}

/* The jobs' part of a wake-up: the lost check, a tick when due (at once, but CHILD_TICK_GAP_MS
 * after the previous one, when a child exited), and an early heartbeat when jobs finished.
 * Returns the number of jobs that finished. */
static size_t jobs_step(struct agent *a, enum ps_daemon_event ev, int64_t now)
{
    check_lost(a, now);
    /* A child's exit brings a tick forward, but ticks stay CHILD_TICK_GAP_MS apart so a burst
     * of exits is handled together. Such a tick only reaps (one wait4 per job): the full tick
     * samples every job's cgroup files (or /proc), and doing that on each exit cost more than
     * the short jobs themselves; full ticks keep their own period. */
    if (ev == PS_DAEMON_CHILD && a->last_tick + CHILD_TICK_GAP_MS < a->next_tick)
        a->next_tick = a->last_tick + CHILD_TICK_GAP_MS;
    size_t finished = 0;
    if (now >= a->next_tick) {
        bool full = now >= a->next_full_tick;
        finished = full ? ps_node_jobs_tick(a->jobs, now) : ps_node_jobs_reap(a->jobs, now);
        a->last_tick = now;
        if (full)
            a->next_full_tick = now + a->cfg->tick_ms;
        a->next_tick = a->next_full_tick;
        if (finished > 0 || a->more) {
            int64_t early = a->last_hb + a->cfg->min_heartbeat_gap_ms;
            if (early < a->next_hb)
                a->next_hb = early > now ? early : now;
        }
    }
    return finished;
}

/* Runs while a held heartbeat is under way (http_client.h's wait hook): signals, ticks and
 * the lost check go on; a job's exit or a stop signal gives the heartbeat up. */
static int during_heartbeat(void *ctx, int signalled, long *next_ms)
{
    struct agent *a = ctx;
    enum ps_daemon_event ev = signalled ? ps_daemon_wait(0) : PS_DAEMON_TIMEOUT;
    if (ev == PS_DAEMON_STOP) {
        a->stop = true;
        return 1;
    }
    int64_t now = now_ms();
    size_t finished = jobs_step(a, ev, now);
    *next_ms = a->next_tick > now ? (long)(a->next_tick - now) : 1;
    return finished > 0;
}

/* One heartbeat. Returns 0, or PS_EPERM when the scheduler refused the registration for good
 * (err says why). *more is set when finished jobs are still waiting to be reported. */
static int heartbeat(struct agent *a, bool *more, struct ps_error *err)
{
    *more = false;
    a->interrupted = false;
    /* Jobs the scheduler has given away are aborted before they could be reported running. */
    check_lost(a, now_ms());
    json_t *jobs = ps_node_jobs_report(a->jobs, more);
    json_t *req = jobs ? ps_node_request_build(&a->id, jobs) : NULL;
    if (!req) {
        heartbeat_failed(a, "out of memory building the request");
        return 0;
    }
    struct ps_http_result res;
    struct ps_error e;
    ps_error_init(&e);
    /* With jobs at stake, a request may not outlast the moment they must be aborted. */
    int64_t sent = now_ms(), deadline = lost_deadline(a), total = a->request_timeout_ms;
    if (deadline != INT64_MAX && ps_node_jobs_running_count(a->jobs) > 0 &&
        deadline - sent < total)
        total = deadline - sent > 200 ? deadline - sent : 200;
    ps_http_client_set_timeouts(a->http, total < 2000 ? total : 2000, total);
    int64_t wait = a->period_ms < total / 2 ? a->period_ms : total / 2;
    if (a->offline_timeout_ms > 0 && wait > a->offline_timeout_ms / 2)
        wait = a->offline_timeout_ms / 2;   /* a reply after that would be stale */
    bool hold = a->cfg->long_poll && a->signal_fd >= 0 && wait > 0 && !a->stop;
    /* last_reply_seq: a job the scheduler sent in a reply this agent never read (given up,
     * timed out) is sent again rather than declared lost */
    if (json_object_set_new(req, "last_reply_seq", json_integer(a->last_reply_seq)) != 0 ||
        (hold && json_object_set_new(req, "wait_ms", json_integer(wait)) != 0)) {
        json_decref(req);
        heartbeat_failed(a, "out of memory building the request");
        return 0;
    }
    ps_http_client_set_wait_hook(a->http, a->signal_fd, HOLD_INTERRUPT_AFTER_MS,
                                 hold ? during_heartbeat : NULL, a);
    int rc = ps_http_client_post_json(a->http, a->url, req, &res, &e);
    json_decref(req);
    a->heartbeats++;
    if (rc != 0 && ps_http_client_interrupted(a->http)) {
        a->interrupted = true;   /* a job exited: the next heartbeat reports it */
        return 0;
    }
    if (rc != 0) {
        heartbeat_failed(a, e.msg);
        return 0;
    }
    if (res.status != 200) {
        char msg[300];
        reply_message(&res, msg, sizeof msg);
        /* 409: another live agent holds this node id, or the tags match two pool trees;
         * retrying cannot help. After registration only the first (the scheduler's wording,
         * docs/api.md) is final: this node went offline and another agent took the id. */
        bool taken = res.status == 409 && strstr(msg, "held by another live agent") != NULL;
        if (taken || (!a->registered && (res.status == 409 || res.status == 401 ||
                                         res.status == 403)))
            return ps_error_set(err, PS_EPERM, "the scheduler refused to register node %s "
                                "(HTTP %ld): %s", a->cfg->node_id, res.status, msg);
        char what[400];
        snprintf(what, sizeof what, "HTTP %ld: %s", res.status, msg);
        heartbeat_failed(a, what);
        return 0;
    }
    json_t *doc = NULL;
    struct ps_node_reply reply;
    if (ps_http_result_json(&res, a->url, &doc, &e) != 0 ||
        ps_node_reply_parse(doc, &reply, &e) != 0) {
        json_decref(doc);
        char what[600];
        snprintf(what, sizeof what, "malformed reply ignored: %s", e.msg);
        heartbeat_failed(a, what);
        return 0;
    }
    json_decref(doc);
    /* A reply of an older leader than one already heard (a deposed leader that has not noticed
     * yet): its orders are ignored (ha.h). */
    if (reply.has_epoch && reply.epoch < a->epoch) {
        char what[160];
        snprintf(what, sizeof what, "a reply of leader epoch %lld, older than %lld, ignored",
                 (long long)reply.epoch, (long long)a->epoch);
        ps_node_reply_release(&reply);
        heartbeat_failed(a, what);
        return 0;
    }
    if (reply.has_epoch)
        a->epoch = reply.epoch;
    int64_t now = now_ms();
    /* Stale: the reply was made long ago (the agent was stopped, or the request hung), and the
     * node may have been declared offline since, so nothing in it may be acted upon.
     * Straddled: the deadline passed while this heartbeat was under way (a stop landed between
     * the check above and the request), so it may have reported jobs as running that were
     * given away, and the guard may have killed them; they are aborted now and the next
     * heartbeat reports that. */
    bool stale = a->offline_timeout_ms > 0 &&
                 now >= sent + a->offline_timeout_ms - offline_margin(a);
    bool straddled = !a->lost && ps_node_jobs_running_count(a->jobs) > 0 &&
                     now >= lost_deadline(a);
    if (stale || straddled) {
        char what[200];
        snprintf(what, sizeof what, "a reply that took %lld ms, %s, ignored",
                 (long long)(now - sent), stale ? "past the offline timeout"
                                                : "after the offline deadline passed");
        heartbeat_failed(a, what);
        ps_node_reply_release(&reply);
        check_lost(a, now);
        return 0;
    }
    if (!a->registered)
        alog(a, "registered with %s as instance %s", a->cfg->scheduler_url,
             a->cfg->instance_id ? a->cfg->instance_id : "-");
    else if (a->lost)
        alog(a, "heartbeats accepted again; the aborted jobs are reported");
    else if (a->failures > 0)
        alog(a, "heartbeats work again after %lld failures", (long long)a->failures);
    a->registered = true;
    a->failures = 0;
    a->lost = false;
    a->last_ok_sent_ms = sent;
    a->long_poll_ok = reply.long_poll;
    if (reply.has_reply_seq)
        a->last_reply_seq = reply.reply_seq;
    apply_reply(a, &reply, now);
    arm_guard(a, now);
    ps_node_reply_release(&reply);
    return 0;
}

static void shutdown_jobs(struct agent *a)
{
    size_t running = ps_node_jobs_running_count(a->jobs);
    if (running == 0 && ps_node_jobs_finished_count(a->jobs) == 0)
        return;
    alog(a, "stopping: aborting %zu running jobs", running);
    ps_node_jobs_abort_all(a->jobs, "node_shutdown");
    int64_t deadline = now_ms() + a->cfg->shutdown_grace_ms;
    while (ps_node_jobs_running_count(a->jobs) > 0 && now_ms() < deadline) {
        ps_node_jobs_tick(a->jobs, now_ms());
        if (ps_node_jobs_running_count(a->jobs) > 0)
            ps_daemon_wait(20);
    }
    if (ps_node_jobs_running_count(a->jobs) > 0)
        alog(a, "%zu jobs did not end within %lld ms", ps_node_jobs_running_count(a->jobs),
             (long long)a->cfg->shutdown_grace_ms);
    /* One last report, briefly, so the scheduler reschedules the jobs now rather than after
     * the node is declared offline. */
    if (a->registered) {
        a->request_timeout_ms = 2000;
        bool more;
        struct ps_error e;
        ps_error_init(&e);
        heartbeat(a, &more, &e);
    }
}

int ps_node_agent_run(const struct ps_node_agent_config *cfg, const struct ps_node_runner *runner,
                      struct ps_error *err)
{
    struct agent a;
    memset(&a, 0, sizeof a);
    a.cfg = cfg;
    a.runner = runner;
    a.period_ms = cfg->heartbeat_period_ms;
    a.request_timeout_ms = cfg->request_timeout_ms;
    a.signal_fd = -1;
    if (cfg->long_poll) {
        /* the signals are blocked (platform/daemon.h): the fd only tells they are pending, and
         * ps_daemon_wait still takes them */
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGCHLD);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGHUP);
        a.signal_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
        if (a.signal_fd < 0)
            alog(&a, "cannot create a signalfd: heartbeats are not held (no long-poll)");
    }
    a.id = (struct ps_node_identity){.node_id = cfg->node_id, .tags = cfg->tags,
                                     .tag_count = cfg->tag_count,
                                     .memory_bytes = cfg->memory_bytes,
                                     .user_slots = cfg->user_slots, .gpu = cfg->gpu_count,
                                     .instance_id = cfg->instance_id, .media = cfg->media};
    /* --scheduler A,B: the heartbeat URL of each */
    for (const char *p = cfg->scheduler_url; *p;) {
        size_t n = strcspn(p, ",");
        size_t base = n;
        while (base > 0 && p[base - 1] == '/')
            base--;
        if (a.url_count == PS_NODE_MAX_SCHEDULERS)
            return ps_error_set(err, PS_EINVAL, "--scheduler: at most %d schedulers",
                                PS_NODE_MAX_SCHEDULERS);
        if (base == 0 || base + sizeof PS_NODE_HEARTBEAT_PATH > sizeof a.url)
            return ps_error_set(err, PS_EINVAL, "--scheduler: an empty or too long URL in \"%s\"",
                                cfg->scheduler_url);
        snprintf(a.urls[a.url_count++], sizeof a.url, "%.*s%s", (int)base, p,
                 PS_NODE_HEARTBEAT_PATH);
        p += n;
        if (*p == ',')
            p++;
    }
    if (a.url_count == 0)
        return ps_error_set(err, PS_EINVAL, "--scheduler: no URL");
    snprintf(a.url, sizeof a.url, "%s", a.urls[0]);

    struct ps_node_jobs_config jcfg;
    ps_node_jobs_config_init(&jcfg);
    jcfg.node_memory_bytes = cfg->memory_bytes;
    jcfg.node_cpu = cfg->cpu;
    jcfg.user_slots = cfg->user_slots;
    jcfg.overdraft = cfg->overdraft;
    jcfg.report_stderr_budget_bytes = cfg->report_stderr_budget_bytes;
    jcfg.always_abort_on_memory_reserve_overdraft = cfg->always_abort_on_memory_reserve_overdraft;
    jcfg.gpu_count = cfg->gpu_count;
    jcfg.start_port = cfg->start_port;
    jcfg.port_count = cfg->port_count;
    jcfg.port_probe = ps_node_port_bindable;
    jcfg.log = jobs_log;
    jcfg.log_ctx = &a;
    jcfg.lost_reason = jobs_lost_reason;
    jcfg.lost_ctx = &a;
    int rc;
    if ((rc = ps_node_jobs_new(runner, &jcfg, &a.jobs, err)) != 0)
        return rc;
    set_cpu_to_vcpu_factor(&a, ps_node_dyncfg_cpu_to_vcpu_factor(NULL, cfg->cpu_to_vcpu_factor,
                                                                 cfg->cpu_model));
    if ((rc = ps_http_client_new(&a.http, err)) != 0)
        goto out;
    ps_http_client_set_timeouts(a.http, 2000, cfg->request_timeout_ms);
    if (cfg->token && (rc = ps_http_client_set_token(a.http, cfg->token, err)) != 0)
        goto out;

    alog(&a, "starting: scheduler %s, cpu %.2f, memory %lld bytes, %lld user slots, %zu tags; "
         "CPU limits %s, CPU guarantees %s, memory %s", cfg->scheduler_url, cfg->cpu,
         (long long)cfg->memory_bytes, (long long)cfg->user_slots, cfg->tag_count,
         runner->caps.cpu_limit ? "enforced" : "NOT enforced (jobs run unlimited)",
         runner->caps.cpu_weight ? "as cgroup weights" : "reported only",
         runner->caps.memory_cgroup ? "by cgroup" : "sampled from /proc");

    a.next_tick = a.next_full_tick = a.next_hb = now_ms();
    a.last_hb = a.last_tick = -1000000000;
    for (;;) {
        int64_t now = now_ms();
        int64_t wake = a.next_tick < a.next_hb ? a.next_tick : a.next_hb;
        enum ps_daemon_event ev = a.stop ? PS_DAEMON_STOP
                                         : ps_daemon_wait(wake > now ? wake - now : 0);
        if (ev == PS_DAEMON_STOP) {
            alog(&a, "stop signal received");
            a.stop = true;   /* the last report is not held */
            break;
        }
        now = now_ms();
        jobs_step(&a, ev, now);
        if (now >= a.next_hb) {
            a.last_hb = now;
            a.next_hb = now + a.period_ms;
            if ((rc = heartbeat(&a, &a.more, err)) != 0)
                goto out;
            /* long-poll: the next heartbeat goes at once, the scheduler holds it (also after
             * one given up for a job's exit: the hook has reaped the job) */
            if (a.long_poll_ok && a.failures == 0)
                a.next_hb = a.last_hb + cfg->min_heartbeat_gap_ms;
            if (a.more) {
                int64_t early = a.last_hb + cfg->min_heartbeat_gap_ms;
                if (early < a.next_hb)
                    a.next_hb = early;
            }
        }
    }
    shutdown_jobs(&a);
    rc = 0;
out:
    if (rc != 0)
        ps_node_jobs_abort_all(a.jobs, "node_shutdown");
    ps_node_jobs_free(a.jobs);
    ps_http_client_free(a.http);
    if (a.signal_fd >= 0)
        close(a.signal_fd);
    return rc;
}
