/* event_record_test_util.h — comparing event records (io/event_record.h) in unit tests. */
#ifndef PS_TEST_EVENT_RECORD_TEST_UTIL_H
#define PS_TEST_EVENT_RECORD_TEST_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "io/event_record.h"

static inline const char *record_name(const struct ps_event_names *n, uint32_t i)
{
    return i == PS_EVENT_NONE ? "(none)" : n->names[i];
}

static inline void assert_same_job(const struct ps_event_record *a, const struct ps_event_job *x,
                            const struct ps_event_record *b, const struct ps_event_job *y)
{
    assert_int_equal(x->row, y->row);
    assert_int_equal(x->timestamp, y->timestamp);
    assert_int_equal(x->start_time, y->start_time);
    assert_int_equal(x->finish_time, y->finish_time);
    assert_int_equal(x->kind, y->kind);
    assert_int_equal(x->flaw, y->flaw);
    assert_string_equal(record_name(&a->job_ids, x->job), record_name(&b->job_ids, y->job));
    assert_string_equal(record_name(&a->operation_ids, x->operation),
                        record_name(&b->operation_ids, y->operation));
    assert_string_equal(record_name(&a->task_names, x->task),
                        record_name(&b->task_names, y->task));
    assert_string_equal(record_name(&a->tree_ids, x->tree), record_name(&b->tree_ids, y->tree));
    assert_memory_equal(x->resources, y->resources, sizeof x->resources);
}

static inline void assert_same_names(const struct ps_event_names *a, const struct ps_event_names *b)
{
    assert_int_equal(a->count, b->count);
    for (size_t i = 0; i < a->count; i++)
        assert_string_equal(a->names[i], b->names[i]);
}

/* Everything, interned indexes included. */
static inline void assert_same_record(const struct ps_event_record *a,
                                      const struct ps_event_record *b)
{
    assert_int_equal(a->row_count, b->row_count);
    assert_int_equal(a->newest_ms, b->newest_ms);
    assert_int_equal(a->oldest_ms, b->oldest_ms);
    assert_same_names(&a->job_ids, &b->job_ids);
    assert_same_names(&a->operation_ids, &b->operation_ids);
    assert_same_names(&a->task_names, &b->task_names);
    assert_same_names(&a->tree_ids, &b->tree_ids);
    assert_int_equal(a->job_count, b->job_count);
    for (size_t i = 0; i < a->job_count; i++) {
        assert_same_job(a, &a->jobs[i], b, &b->jobs[i]);
        assert_int_equal(a->jobs[i].job, b->jobs[i].job);   /* the same interned indexes */
        assert_int_equal(a->jobs[i].operation, b->jobs[i].operation);
        assert_int_equal(a->jobs[i].task, b->jobs[i].task);
        assert_int_equal(a->jobs[i].tree, b->jobs[i].tree);
    }
    assert_int_equal(a->other_count, b->other_count);
    for (size_t i = 0; i < a->other_count; i++) {
        assert_int_equal(a->others[i].row, b->others[i].row);
        assert_true(json_equal(a->others[i].json, b->others[i].json));
    }
}

#endif
