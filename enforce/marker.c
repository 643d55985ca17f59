/* The harness marker: CREDFENCE_HARNESS holds "PID:STARTTIME" of the one process
 * that is the harness. Portable; the start time comes from proc.h (in
 * linux/fence.c, or darwin/proc.c). The reader is called in the constructor;
 * the writer by credfence harness and, between fork and exec, by the shim
 * (child.c, with what follow.c learns in the constructor). */
#include <unistd.h>

#include "marker.h"
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

int cf_harness_marker_self(char *buf, unsigned long cap)
{
	static const char name[] = CF_HARNESS_MARKER_VAR "=";
	/* getpid() is a plain system call (async-signal-safe). */
	unsigned long long v[2] = {(unsigned long long)getpid(), cf_proc_self_starttime()};
	if (!v[1] || cap < sizeof name)
		return 0;
	unsigned long at = 0;
	for (; name[at]; at++)
		buf[at] = name[at];
	for (int k = 0; k < 2; k++) {
		char digits[24];
		unsigned long nd = 0;
		do
			digits[nd++] = (char)('0' + v[k] % 10);
		while ((v[k] /= 10) && nd < sizeof digits);
		if (at + nd + 2 > cap)
			return 0;
		while (nd)
			buf[at++] = digits[--nd];
		buf[at++] = k == 0 ? ':' : '\0';
	}
	return 1;
}
