/* Facts about a process from /proc, read with raw syscalls. */
#ifndef CF_PROC_H
#define CF_PROC_H

/* The start time of the calling process (field 22 of /proc/self/stat, clock
 * ticks since boot), or 0 when it can not be read. No allocation. */
unsigned long long cf_proc_self_starttime(void);

/* The harness marker CREDFENCE_HARNESS holds "PID:STARTTIME" of the one process
 * that is the harness. True when VALUE names the calling process. */
int cf_harness_marker_is_self(const char *value);

#endif
