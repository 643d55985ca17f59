/* The sandbox_status event of the JSON-lines log, shared by both backends.
 * A line is HEAD + LISTS + "}\n", written with one writev so that lines of
 * concurrent processes do not interleave. */
#ifndef CF_EVENT_H
#define CF_EVENT_H

#include <stdbool.h>
#include <stddef.h>

#include "policy.h"

/* "denied":[...],"writable":[...] for P, malloc'd (normal context), or NULL. */
char *cf_event_lists(const struct cf_policy *p);

struct cf_event {
	long pid;
	const char *program;
	const char *backend; /* "landlock", "seatbelt" */
	int abi;             /* < 0: not shown */
	bool applied;
	const char *reason;
	enum cf_mode mode;
	size_t rules;
	/* Linux, the mount namespace of the fenced tree: which mechanism refuses
	 * metadata changes ("mounts" or "supervisor"; NULL: not shown), the
	 * protected paths held read-only, and, when write protection is off,
	 * why (NULL when it is on). */
	const char *metadata;
	size_t protected_held;
	const char *write_protect_off;
};

/* The line up to and including the comma before the lists, into BUF.
 * No allocation: safe between fork and exec. Returns its length. */
size_t cf_event_head(const struct cf_event *e, char *buf, size_t cap);

/* The whole line (HEAD, LISTS from cf_event_lists, "}\n") to FD with one
 * writev, formatted into BUF. FD < 0: nothing. No allocation, no errno on
 * Linux (a raw system call): safe between fork and exec. */
void cf_event_write(int fd, const struct cf_event *e, const char *lists, char *buf, size_t cap);

/* The env_withheld line for a launch of PROGRAM as PID with the environment
 * ENVP under R (secret_env.h): the names of the variables withheld, never a
 * value, in order; "names_cut":true when they do not all fit BUF. Written to
 * FD with one write when any is withheld; nothing otherwise, nor for FD < 0.
 * Returns how many were withheld. Safe between fork and exec, as above. */
struct cf_env_rules;
size_t cf_event_env_write(int fd, long pid, const char *program, char *const *envp,
			  const struct cf_env_rules *r, char *buf, size_t cap);
/* The same line for the entries WITHHELD (N of them) that a caller has
 * judged already (shim/env.c cf_env_scan): nothing is judged again. */
size_t cf_event_withheld_write(int fd, long pid, const char *program, char *const *withheld,
			       size_t n, char *buf, size_t cap);

#endif
