/* persist_tree.c — the tree/<name> document (persist.c describes it) as text, built from
 * cached pool fragments.
 *
 * Why: the document holds every explicit pool, and it is written under the service lock after
 * every pool change and after every fair share update that moved a volume or a timer. Turning
 * 1,000 pool configs into JSON each time cost 10-30 ms of lock time per write (issue 17). A
 * pool's config JSON only changes when its config is replaced, which gives the pool a new
 * process-unique config_version (src/core/pool_tree.c), so each pool's config text is kept
 * keyed by that version and reused; only the name, parent and dynamic state (volume, timer)
 * are written afresh. The document and the store layout are exactly what they were: the cache
 * only saves work, a restart or an old data directory sees no difference.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/json_value.h"
#include "io/textbuf.h"
#include "server/journal.h"
#include "server/persist.h"
#include "server/service_state.h"

struct slot {
    uint64_t version;   /* 0: empty */
    char *text;         /* the config's keys, "k":v,... without braces ("" for none) */
};

struct ps_persist_cache {
    struct slot *slots;
    size_t cap;         /* a power of two */
};

void ps_persist_cache_free(struct ps_persist_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->cap; i++)
        free(c->slots[i].text);
    free(c->slots);
    free(c);
}

static struct slot *find_slot(struct ps_persist_cache *c, uint64_t version)
{
    if (!c || !c->cap)
        return NULL;
    size_t i = (size_t)((version * 0x9E3779B97F4A7C15ULL) >> 17) & (c->cap - 1);
    while (c->slots[i].version && c->slots[i].version != version)
        i = (i + 1) & (c->cap - 1);
    return &c->slots[i];
}

/* The pool's config keys as text; NULL when out of memory or the config cannot be shown. Only
 * what was set on the pool: a preset's values are derived again from the tree config. */
static char *config_text(const struct ps_pool *p)
{
    struct ps_value pv = ps_value_null();
    if (ps_pool_config_to_value(ps_pool_explicit_config(p), &pv) != 0)
        return NULL;
    json_t *pj = ps_value_to_json(&pv);
    ps_value_release(&pv);
    if (!pj)
        return NULL;
    /* null means "default" and is what to_value gives for unset keys: drop it to keep the
     * documents short; the keys written per document below are not config keys */
    const char *k;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(pj, tmp, k, v) if (json_is_null(v)) json_object_del(pj, k);
    json_object_del(pj, "name");
    json_object_del(pj, "parent");
    json_object_del(pj, "accumulated_resource_volume");
    char *s = json_dumps(pj, JSON_COMPACT);
    json_decref(pj);
    if (!s)
        return NULL;
    size_t n = strlen(s);   /* "{...}" */
    memmove(s, s + 1, n - 2);
    s[n - 2] = '\0';
    return s;
}

static void add_json(struct ps_textbuf *b, json_t *v)
{
    if (!v || json_dump_callback(v, ps_textbuf_dump_cb, b, JSON_COMPACT | JSON_ENCODE_ANY) != 0)
        b->failed = true;
    json_decref(v);
}

/* A double the way jansson writes a real (so the document reads back as it did). */
static void add_real(struct ps_textbuf *b, double d)
{
    char num[40];
    snprintf(num, sizeof num, "%.17g", d);
    ps_textbuf_adds(b, num);
    if (!strpbrk(num, ".eE"))
        ps_textbuf_adds(b, ".0");
}

static void add_pool(struct ps_textbuf *b, const struct ps_pool *p, const char *config)
{
    ps_textbuf_addc(b, '{');
    if (*config) {
        ps_textbuf_adds(b, config);
        ps_textbuf_addc(b, ',');
    }
    ps_textbuf_adds(b, "\"name\":");
    add_json(b, json_string(p->name));
    ps_textbuf_adds(b, ",\"parent\":");
    add_json(b, json_string(p->parent ? p->parent->name : "<Root>"));
    ps_textbuf_adds(b, ",\"accumulated_resource_volume\":{");
    bool first = true;
    for (int i = 0; i < PS_RES_COUNT; i++) {
        if (!isfinite(p->accumulated_volume.v[i]))
            continue;   /* jansson has no real for it either */
        ps_textbuf_addf(b, "%s\"%s\":", first ? "" : ",", ps_resource_name(i));
        add_real(b, p->accumulated_volume.v[i]);
        first = false;
    }
    ps_textbuf_adds(b, "}}");
}

char *ps_persist_tree_text(struct ps_pool_tree *tree, struct ps_persist_cache **cache)
{
    struct ps_textbuf b;
    ps_textbuf_init(&b);
    int n = ps_pool_tree_pool_count(tree);
    struct ps_persist_cache *next = calloc(1, sizeof *next);
    size_t cap = 16;
    while (cap < 2 * (size_t)n)
        cap *= 2;
    if (next && !(next->slots = calloc(cap, sizeof *next->slots))) {
        free(next);
        next = NULL;
    }
    if (next)
        next->cap = cap;
    struct ps_persist_cache *old = cache ? *cache : NULL;

    ps_textbuf_adds(&b, "{\"config\":");
    /* the keys set on the tree: templates (tree_template.h) go under them again on load */
    struct ps_value cv = ps_value_null();
    if (ps_value_copy(&cv, ps_pool_tree_explicit_config(tree)) == 0)
        add_json(&b, ps_value_to_json(&cv));
    else
        b.failed = true;
    ps_value_release(&cv);
    const struct ps_value *custom = ps_pool_tree_custom_attributes(tree);
    if (custom->count > 0) {   /* the tree object's custom attributes, when it has some */
        ps_textbuf_adds(&b, ",\"attributes\":");
        add_json(&b, ps_value_to_json(custom));
    }
    ps_textbuf_adds(&b, ",\"pools\":[");
    bool first = true;
    for (int i = 0; i < n; i++) {
        struct ps_pool *p = ps_pool_tree_pool_at(tree, i);
        if (p->ephemeral)
            continue;
        struct slot *was = find_slot(old, p->config_version);
        char *text = NULL;
        if (was && was->version) {
            text = was->text;   /* taken: the old cache keeps only what is no longer used */
            was->text = NULL;
        } else {
            text = config_text(p);
        }
        if (!text) {
            b.failed = true;
            break;
        }
        if (!first)
            ps_textbuf_addc(&b, ',');
        first = false;
        add_pool(&b, p, text);
        struct slot *s = find_slot(next, p->config_version);
        if (s && !s->version) {
            s->version = p->config_version;
            s->text = text;
        } else {
            free(text);
        }
    }
    ps_textbuf_adds(&b, "],\"below_fair_share_since\":{");
    first = true;
    for (int i = 0; i < n; i++) {
        struct ps_pool *p = ps_pool_tree_pool_at(tree, i);
        if (p->ephemeral || p->dynamic.below_fair_share_since_ms == PS_STARVATION_NEVER)
            continue;
        if (!first)
            ps_textbuf_addc(&b, ',');
        first = false;
        add_json(&b, json_string(p->name));
        ps_textbuf_addf(&b, ":%lld", (long long)p->dynamic.below_fair_share_since_ms);
    }
    ps_textbuf_adds(&b, "}}");
    ps_persist_cache_free(old);
    if (cache)
        *cache = next;
    else
        ps_persist_cache_free(next);
    return ps_textbuf_detach(&b);
}

json_t *ps_persist_tree_doc(struct ps_service *svc, struct ps_pool_tree *tree)
{
    struct ps_svc_tree_state *ts = svc ? ps_svc_tree(svc, ps_pool_tree_name(tree)) : NULL;
    char *text = ps_persist_tree_text(tree, ts ? &ts->pool_docs : NULL);
    json_t *doc = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    return doc;
}

void ps_persist_tree(struct ps_service *svc, const char *name)
{
    struct ps_pool_tree *tree = ps_strategy_find_tree(svc->strategy, name);
    if (!tree || !svc->journal)
        return;
    struct ps_svc_tree_state *ts = ps_svc_tree(svc, name);
    /* NULL text (out of memory) poisons the batch: the change is refused, not kept unwritten */
    ps_journal_put_text(svc->journal, "tree", name, ps_persist_tree_text(tree, ts ? &ts->pool_docs : NULL));
    if (ts) {
        ts->persisted_dynamic = ps_persist_tree_dynamic_hash(tree);
        ts->dynamic_persisted = true;
    }
}
