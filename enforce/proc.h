/* Facts about a process: from /proc with raw syscalls on Linux (in
 * linux/fence.c, whose launch path reads them), from sysctl on macOS
 * (darwin/proc.c, the start time and the environment area only). */
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

#endif
