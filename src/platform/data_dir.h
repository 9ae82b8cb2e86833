/* data_dir.h — where the scheduler keeps its state, resolved the same way by every command.
 *
 * The scheduler writes its database, admin_token and cluster_secret there; the CLI reads the
 * admin_token and `poolsched node` the cluster_secret from the same place. One rule for all of
 * them, so that a scheduler started without --data-dir is found by a CLI started without it:
 *
 *   --data-dir DIR, else $POOLSCHED_DATA_DIR, else $XDG_STATE_HOME/poolsched (when
 *   XDG_STATE_HOME is an absolute path, as the XDG spec requires), else ./poolsched-data.
 *
 * Empty values count as unset. */
#ifndef PS_PLATFORM_DATA_DIR_H
#define PS_PLATFORM_DATA_DIR_H

#include <stddef.h>

#define PS_DATA_DIR_FALLBACK "./poolsched-data"
#define PS_DATA_DIR_HELP                                                                        \
    "--data-dir, else $POOLSCHED_DATA_DIR, else $XDG_STATE_HOME/poolsched, else " PS_DATA_DIR_FALLBACK

/* The rule above on given values (NULL or "" for unset), into out[size]. Returns 0, or -1 when
 * the result does not fit (out then holds an empty string). Pure, for tests. */
int ps_data_dir_resolve(const char *option, const char *env_data_dir, const char *env_xdg_state_home,
                        char *out, size_t size);

/* The rule with this process's environment. */
int ps_data_dir_default(const char *option, char *out, size_t size);

#endif
