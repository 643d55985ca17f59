/* Facts about a process from /proc, read with raw syscalls. */
#ifndef CF_PROC_H
#define CF_PROC_H

/* The start time of the calling process (field 22 of /proc/self/stat, clock
 * ticks since boot), or 0 when it can not be read. No allocation. */
unsigned long long cf_proc_self_starttime(void);
/* The same for process PID (0: the calling process), read from
 * /proc/PID/stat: 0 when there is no such process or it can not be read.
 * Raw syscalls and stack only: callable between fork and exec. */
unsigned long long cf_proc_starttime(int pid);
/* The same, and the process's state letter (field 3: 'Z' a zombie) in *STATE. */
unsigned long long cf_proc_starttime_state(int pid, char *state);

/* The fields of /proc/PID/stat (0: the calling process) this project reads.
 * 0 or -errno. Raw syscalls and stack only. */
struct cf_proc_stat {
	char state;               /* field 3 */
	int ppid;                 /* field 4 */
	unsigned long long start; /* field 22 */
	unsigned long env_start;  /* field 50: where the environment's strings lie */
	unsigned long env_end;    /* field 51 */
};
int cf_proc_stat(int pid, struct cf_proc_stat *st);

/* Where the calling process's first environment lies, [*LO, *HI): what
 * /proc/PID/environ shows (fields 50 and 51 of /proc/self/stat). 0, or -1
 * with both 0 when it is not known (macOS: no such file). */
int cf_proc_self_env_area(unsigned long *lo, unsigned long *hi);

/* The harness marker CREDFENCE_HARNESS holds "PID:STARTTIME" of the one process
 * that is the harness. True when VALUE names the calling process. */
int cf_harness_marker_is_self(const char *value);
/* "CREDFENCE_HARNESS=PID:STARTTIME" of the calling process into BUF (CAP
 * bytes), the one writer of what cf_harness_marker_is_self reads. Raw
 * syscalls and stack only: callable between fork and exec. False when the
 * start time can not be read or BUF is too small. */
#define CF_HARNESS_MARKER_VAR "CREDFENCE_HARNESS"
int cf_harness_marker_self(char *buf, unsigned long cap);

#endif
