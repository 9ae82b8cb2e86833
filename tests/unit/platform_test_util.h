/* platform_test_util.h — helpers shared by the tests of src/platform (header-only, static).
 *
 * Tests that need something this machine may lack (root, usable cgroups, tmpfs) print
 *     SKIPPED-BY-ENVIRONMENT: <reason>
 * and call cmocka's skip(), only around the check that needs it; the logic around it runs
 * everywhere.
 */
#ifndef PS_TESTS_PLATFORM_TEST_UTIL_H
#define PS_TESTS_PLATFORM_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "platform/sandbox.h"

#define SKIP_BY_ENVIRONMENT(...)                                                            \
    do {                                                                                    \
        printf("SKIPPED-BY-ENVIRONMENT: " __VA_ARGS__);                                     \
        printf("\n");                                                                       \
        fflush(stdout);                                                                     \
        skip();                                                                             \
    } while (0)

static inline int64_t test_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void test_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A fresh directory under /tmp that an unprivileged job user can enter (mkdtemp makes 0700). */
static inline char *test_make_dir(const char *tag)
{
    char tmpl[256];
    snprintf(tmpl, sizeof tmpl, "/tmp/ps-%s-XXXXXX", tag);
    char *d = mkdtemp(tmpl);
    if (!d || chmod(d, 0755) != 0)
        return NULL;
    return strdup(d);
}

static inline void test_remove_dir(char *dir)
{
    if (dir)
        (void)ps_sandbox_remove(dir, NULL);
    free(dir);
}

static inline bool test_file_contains(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strstr(buf, needle) != NULL;
}

#endif
