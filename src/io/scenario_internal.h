/* scenario_internal.h — shared between the files of the scenario parser; not a public API. */
#ifndef PS_IO_SCENARIO_INTERNAL_H
#define PS_IO_SCENARIO_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "core/error.h"
#include "io/scenario.h"

/* Parses the "operations" list into sc->operations (sc's trees are parsed already). */
int ps_scenario_parse_operations(const json_t *list, struct ps_scenario *sc, struct ps_error *err);

/* Parses the "events" list into sc->events (node groups, trees and operations parsed). */
int ps_scenario_parse_events(const json_t *list, struct ps_scenario *sc, struct ps_error *err);
void ps_scenario_events_release(struct ps_scenario *sc);

void ps_scenario_operation_release(struct ps_scenario_operation *op);

/* Finds the first repeated name among n names in list order: returns true and sets *first
 * and *second (first < second, *second the smallest such index) when names[*first] equals
 * names[*second]. PS_ENOMEM is reported through err and returns true with *second = n. */
bool ps_scenario_find_duplicate(const char *const *names, size_t n, size_t *first, size_t *second,
                                struct ps_error *err);

/* strdup that reports PS_ENOMEM through err. */
char *ps_scenario_strdup(const char *s, struct ps_error *err);

/* A list of non-empty tag strings at `where` into a new array (*out, *count; the caller frees
 * it, also after an error: the entries made so far are set). */
int ps_scenario_tags(const json_t *tags, const char *where, char ***out, size_t *count,
                     struct ps_error *err);

/* Fails with `<path>.<key>: required key is missing` unless obj has key. */
int ps_scenario_require(const json_t *obj, const char *path, const char *key, struct ps_error *err);

/* A non-empty string member: *out borrows it (left alone when absent and !required). */
int ps_scenario_name(const json_t *obj, const char *path, const char *key, bool required,
                     const char **out, struct ps_error *err);

#endif
