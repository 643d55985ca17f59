/* The harness marker: CREDFENCE_HARNESS holds "PID:STARTTIME" of the one process
 * that is the harness. Portable; the start time comes from proc.c (Linux) or
 * proc_darwin.c. Called in the constructor, in normal context. */
#include <unistd.h>

#include "proc.h"

static int parse_ull(const char **s, unsigned long long *out)
{
	const char *p = *s;
	unsigned long long v = 0;
	if (*p < '0' || *p > '9')
		return -1;
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (unsigned long long)(*p++ - '0');
	*s = p;
	*out = v;
	return 0;
}

int cf_harness_marker_is_self(const char *value)
{
	unsigned long long pid, start;
	const char *p = value;
	if (!p || parse_ull(&p, &pid) || *p++ != ':' || parse_ull(&p, &start) || *p)
		return 0;
	if (pid != (unsigned long long)getpid())
		return 0;
	return start != 0 && start == cf_proc_self_starttime();
}
