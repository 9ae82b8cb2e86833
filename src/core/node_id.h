/* node_id.h — the one rule for node and job ids, shared by the node agent (which names
 * sandbox directories and cgroups after them) and the scheduler (which takes node ids from
 * heartbeats and logs, stores and echoes them): 1..max characters of [A-Za-z0-9._-], not "."
 * or "..". So neither side can be given "../../etc", a slash, a space or a control character. */
#ifndef PS_CORE_NODE_ID_H
#define PS_CORE_NODE_ID_H

#include <stdbool.h>
#include <stddef.h>

#define PS_NODE_ID_MAX 64
#define PS_NODE_JOB_ID_MAX 128

/* True when s is a usable job or node id under the rule above. */
bool ps_node_id_valid(const char *s, size_t max);

#endif
