/* fs_internal.h — state shared by the files of the fair share update (not a public API).
 *
 * fair_share.c      entry point, validation, cumulative attributes, outputs
 * fs_guarantees.c   inferred strong guarantees, guarantee validation and adjustment, weights
 * fs_integral.c     accumulated volumes, overflow redistribution, burst and relaxed shares
 * fs_functions.c    fair share functions and the top-down assignment
 */
#ifndef PS_CORE_FS_INTERNAL_H
#define PS_CORE_FS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "core/arena.h"
#include "core/fair_share.h"
#include "core/plf.h"

/* Upstream constants (resource_vector.h). */
#define FS_EPSILON 1e-9
#define FS_LARGE_EPSILON 1e-4
#define FS_COMPRESS_EPSILON 1e-15

#define FS_ALERT_BYTES 384
#define FS_MAX_ALERTS 64

/* A resource volume as upstream's TResourceVolume: cpu is fixed point (hundredths of a
 * core-second, rounded at every multiplication), the other resources are doubles. d[PS_RES_CPU]
 * is unused. */
struct fs_volume {
    double d[PS_RES_COUNT];
    int64_t cpu;
};

/* The state only pools and the root have: integral volumes, guarantees, summed resources and
 * pool-only functions. A side table: operations, 90% of the elements, all point at entry 0,
 * which stays zero (an operation has no guarantee, no volume and no integral share; its spec
 * strong_guarantee_resources only counts in its parent's inference, fs_guarantees.c). */
struct fs_integral {
    struct ps_fs_pool *pool;        /* the caller's entry; NULL in entry 0 */
    struct fs_volume volume;
    struct fs_volume overflow, acceptable, accepted_free, children_overflow;
    double last_share_ratio;
    bool can_accept_free_volume;
    bool distributes_free_volume;

    /* Guarantees (operations: zero). */
    struct ps_share sg_share, proposed;
    struct ps_resources inferred_sg;
    double burst_ratio;             /* adjusted (scaled when burst guarantees overcommit) */
    double specified_burst_ratio;
    double flow_ratio;
    double total_burst_ratio;
    double total_flow_ratio;
    /* Sums over the subtree (an operation reads its own from the input). */
    struct ps_resources demand, usage;

    /* Fair share functions that only pools and the root keep (fs_functions.c). */
    struct ps_plf mffbs;       /* max fit factor by suggestion (scalar) */
    /* Improved mode, normal pools: the children's functions as summed (scaled, extended) and the
     * critical points (suggestion, child index) in the order they became fit factors 0, 1, ...;
     * a child's share by fit factor is evaluated from them without being stored. */
    struct ps_plf *imp_views;
    double *imp_points;
    int imp_count;
    double fsbff_right;        /* right bound of the share-by-fit-factor function */
    double min_child_weight;   /* normal pools: smallest child weight above epsilon */
};

/* Per-element state, kept small: it exists for every element of the tree. Shares and limits
 * that are also outputs live in *out only (limits_share, demand_share, usage_share,
 * resource_limits); what only pools have lives in *ig. */
struct fs_elem {
    const struct ps_fs_element_input *in;
    struct ps_fs_element_output *out;
    enum ps_element_kind kind;
    int parent;
    int first_child;   /* into update->children */
    int child_count;
    bool is_pool;      /* a pool (not the root, not an operation) */
    bool is_fifo;
    bool prepared;
    bool has_guarantee;  /* operations: a strong_guarantee_resources value is specified */
    bool memo_kept;    /* operations: the memo entry of this index's last run holds its key
                          (struct fs_op_prev) */
    uint64_t memo_id;  /* the memo entry holding fsbs (fs_memo.c), 0: none */
    bool share_known;  /* top-down, normal mode: out->fair_share.total already holds
                          FSBS(suggestion) */
    enum ps_guarantee_type gtype;

    double weight;     /* effective */
    struct ps_plf fsbs;        /* fair share by suggestion (vector) */
    double suggestion;         /* top-down pass */
    struct fs_integral *ig;    /* pools and the root: their own entry; operations: entry 0 */
    /* The improved mode's suggested share (top-down) is kept in out->fair_share.total until the
     * element's own step replaces it with its fair share. */
};

/* fs_memo.c: elements' functions by the exact bits of what they are a function of. */
struct fs_memo_entry {            /* in the table's data */
    uint64_t id;
    uint64_t used;                /* the last update that found or stored it */
    uint64_t hash;                /* of the key */
    size_t to;                    /* while compacting: its new offset plus 1, 0: dropped */
    size_t key_n;
    int fsbs_n, mffbs_n;          /* mffbs_n 0: none (operations) */
    double fsbff_right;
    uint64_t key[];               /* key_n words, then the FSBS points, then the MFFBS points */
};
struct fs_memo_slot {             /* 16 bytes: the table stays small enough to stay cached */
    uint64_t hash;
    size_t offset;                /* of the entry in data, plus 1; 0: empty slot */
};
struct fs_memo_table {
    struct fs_memo_slot *slots;   /* open addressing, cap a power of two, at most half full */
    size_t cap, count;
    char *data;                   /* the entries; grows or moves only between updates */
    size_t data_cap;
    size_t bytes;                 /* bytes of the entries in data */
    uint64_t update;              /* updates begun */
    size_t live_count, live_bytes;/* entries this update used, and their bytes */
    size_t wanted;                /* bytes this update stored or could not store for room */
};
struct fs_memo_value {
    uint64_t id;
    struct ps_plf fsbs, mffbs;    /* mffbs.a NULL: none */
    double fsbff_right;
};

/* fair_share.c, memo runs: per element index, the inputs an operation's limits and shares are
 * a function of as the last run at that index had them (with the total and the gang option:
 * the epoch), and what they gave. An operation whose inputs kept their bits copies them, and
 * when that run's element found or stored its memo entry (memo_ok, kept by fs_memo.c), the
 * entry at its index is its own without building or comparing the key. */
struct fs_op_prev {
    uint64_t epoch;               /* 0: none (a pool or the root was here) */
    struct ps_resources in[4];    /* resource_limits, filter_limits, demand, usage */
    uint64_t max_share_ratio;     /* bits */
    bool is_gang;
    bool memo_ok;
    int dominant;
    struct ps_resources resource_limits;
    struct ps_share usage_share, demand_share, limits_share;
};

/* fs_functions.c, memo runs: per element index, the element's FSBS at the argument the top-down
 * pass last evaluated it at, by its memo entry id (an id names one function's bits), and for a
 * pool the fit factor its own step found for its children at its last suggestion (a function of
 * the same id: its MFFBS, its children's functions and weights). */
struct fs_value_prev {
    uint64_t id;                  /* 0: none */
    uint64_t x;                   /* bits */
    double v[PS_PLF_MAX_DIM];
    uint64_t step_id, step_x;     /* pools: step_id 0: none */
    double step_f;
    bool step_known;              /* f fitted at once: the children's shares were recorded */
};

struct ps_fs_update {
    const struct ps_fs_options *options;
    const struct ps_fs_input *input;
    struct ps_resources total;
    int count;

    struct fs_elem *el;
    int el_cap;
    struct fs_integral *integ;    /* entry 0: the zero state of every operation */
    int integ_cap;
    int *children;        /* CSR children lists; FIFO pools' lists are sorted by FIFO order */
    int *order;           /* scratch: pre-order */
    int *burst;           /* burst and relaxed lists: pool_cap entries */
    int burst_count;
    int *relaxed;
    int relaxed_count;
    int *pool_elems;      /* the root and the pools in array order (pool_cap entries): the passes
                             over them alone skip the operations, nine in ten elements */
    int pool_elem_count;
    int *stack;
    int pool_cap;
    double *dscratch;     /* views_cap doubles (strong guarantee parts, volume keys, relaxed weights) */

    struct ps_arena persistent;   /* functions that live until the end of the run */
    struct ps_arena scratch;      /* temporaries of one element's preparation */
    struct ps_plf_ctx ctx;
    struct ps_plf_buf b[6];       /* builders, reused */
    struct ps_plf_buf comp[PS_RES_COUNT]; /* per-resource max fit factor functions */
    struct ps_plf *views;         /* scratch views of children's transformed functions; views_cap is
                                     the larger of the widest pool and the pool count */
    int views_cap;
    unsigned char *pool_seen;     /* pool_seen_cap flags: which entries of the pools array are named */
    int pool_seen_cap;
    bool oom;
    int root_lazy_runs;           /* times the root's values at 1 took the shortcut (tests) */

    bool memo_on;                 /* ps_fs_update_set_memo */
    struct fs_memo_table memo;    /* elements' functions of the last updates */
    size_t *memo_last;            /* per element index: the entry (offset + 1) the element at that
                                     index found or stored last, 0: none (or dropped) */
    size_t memo_last_cap;
    uint64_t memo_serial;         /* the last entry id given */
    uint64_t *memo_key;           /* the key being looked up */
    size_t memo_key_cap;
    uint64_t memo_hash;           /* its hash, for the store after a miss */
    bool memo_hash_valid;
    struct fs_op_prev *op_prev;   /* op_prev_cap entries, memo runs only */
    int op_prev_cap;
    uint64_t op_prev_epoch;       /* bumped when the total or the gang option changes */
    struct ps_resources op_prev_total;
    bool op_prev_gang_step;
    struct fs_value_prev *value_prev;  /* value_prev_cap entries, memo runs only */
    int value_prev_cap;

    char (*alerts)[FS_ALERT_BYTES];  /* kept across runs: alerting in steady state is free */
    int alert_count;
    int alert_cap;
};

/* Into the schedulable weight range (fair_share.h). */
static inline double fs_clamp_weight(double w)
{
    const double lo = PS_WEIGHT_MIN, hi = PS_WEIGHT_MAX;
    return w < lo ? lo : (w > hi ? hi : w);
}

/* fair_share.c */
void fs_add_alert(struct ps_fs_update *u, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Copies a function into the arena; returns an empty view on failure (sets u->oom). */
struct ps_plf fs_commit(struct ps_fs_update *u, struct ps_arena *arena, struct ps_plf f);
/* The input of a pool or the root (not of an operation). */
static inline const struct ps_fs_pool_input *fs_pool_in(const struct fs_elem *e)
{
    return &e->ig->pool->in;
}
static inline struct ps_share fs_guarantee_share(const struct fs_elem *e)
{
    return ps_share_add(e->ig->sg_share, e->ig->proposed);
}

/* fs_guarantees.c */
void fs_determine_inferred_strong_guarantees(struct ps_fs_update *u);
void fs_validate_and_adjust_guarantees(struct ps_fs_update *u);
void fs_compute_weights(struct ps_fs_update *u);

/* fs_integral.c */
void fs_volume_from_input(struct fs_volume *v, const struct ps_volume *in);
void fs_volume_to_output(const struct fs_volume *v, struct ps_volume *out);
double fs_volume_min_ratio(const struct fs_volume *v, const struct ps_resources *total);
void fs_volume_capacity(const struct ps_fs_update *u, double flow_ratio, struct fs_volume *out);
void fs_consume_and_refill(struct ps_fs_update *u);
void fs_update_burst_shares(struct ps_fs_update *u);
void fs_update_relaxed_shares(struct ps_fs_update *u);
struct ps_share fs_hierarchical_available_limits(const struct ps_fs_update *u, int i);
void fs_increase_hierarchical_integral_share(struct ps_fs_update *u, int i, struct ps_share delta);
struct ps_share fs_adjust_proposed_integral_share(struct ps_share limits, struct ps_share sg,
                                                  struct ps_share proposed);

/* fs_memo.c */
void fs_memo_begin(struct ps_fs_update *u);   /* at the start of an update */
/* What fs_element_fsbs(u, e, true, ...) computed for these inputs before (views valid until the
 * next update begins or the memo is released); false when not known or not remembered. */
bool fs_memo_find(struct ps_fs_update *u, const struct fs_elem *e, struct fs_memo_value *v);
/* After a failed find of the same element: stores v under its key, gives v->id; the id, or 0
 * when it is not remembered. */
uint64_t fs_memo_store(struct ps_fs_update *u, const struct fs_elem *e, struct fs_memo_value *v);
/* Fetches the entry element i found or stored last (ahead of its lookup). */
void fs_memo_prefetch(const struct ps_fs_update *u, int i);
void fs_memo_release(struct ps_fs_update *u);
int64_t fs_memo_bytes(const struct ps_fs_update *u);

/* fs_functions.c */
void fs_prepare_subtree(struct ps_fs_update *u, int root);
/* FSBS of one element, left in u's builders (valid until the next call); fast = false keeps
 * operations on the generic chain and the root on the full chain (for the tests that compare
 * both; with fast, the root's MFFBS and FSBS may be two-point stand-ins exact at 1.0 only).
 * False on failure. */
bool fs_element_fsbs(struct ps_fs_update *u, struct fs_elem *e, bool fast, struct ps_plf *out);
void fs_compute_fair_shares(struct ps_fs_update *u);
/* The last value of a max fit factor component when it ends flat from before 1.0 at its
 * largest value (see fs_functions.c); false when that is not shown. */
bool fs_root_component_end(const struct ps_plf *fsbff, int r, double limit, double guarantee, double *v);

/* fs_operation.c: component r of an operation's max fit factor by suggestion built without the
 * generic narrowing, into dst; false (dst unspecified) when the shape needs the generic chain. */
bool fs_operation_component(struct ps_plf_buf *dst, const struct ps_plf *fsbff, int r, double limit,
                            double guarantee);

#endif
