/* store_test_dir.h — a scratch directory for a store in the server unit tests (test_store.c,
 * test_job_archive.c, test_auth.c). */
#ifndef PS_TEST_STORE_TEST_DIR_H
#define PS_TEST_STORE_TEST_DIR_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/store.h"

/* A new directory /tmp/ps_test_<name>_XXXXXX; the caller frees it with remove_store_dir. */
static inline char *make_store_dir(const char *name)
{
    char tmpl[256];
    snprintf(tmpl, sizeof tmpl, "/tmp/ps_test_%s_XXXXXX", name);
    char *d = mkdtemp(tmpl);
    assert_non_null(d);
    return strdup(d);
}

/* Removes the store's files, extra_file (a name in dir) unless NULL, and dir, then frees dir. */
static inline void remove_store_dir(char *dir, const char *extra_file)
{
    const char *const names[] = {PS_STORE_FILE_NAME, PS_STORE_FILE_NAME "-wal",
                                 PS_STORE_FILE_NAME "-shm", extra_file};
    char path[512];
    for (size_t i = 0; i < sizeof names / sizeof *names && names[i]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    assert_int_equal(rmdir(dir), 0);
    free(dir);
}

#endif
