/* Private to enforce/ipc.c, enforce/supervisor.c and their tests: what the
 * child side and the supervisor agree on.
 *
 * The blob (cf_ipc_prepare): the magic "cfipc1" and its NUL, then records,
 * each one kind byte followed by a NUL-terminated string:
 *   'w' PATH   a writable location (absolute): metadata changes beneath it
 *   's' PATH   an allowed socket file (absolute)
 *   's' @NAME  an allowed abstract socket name (the bytes after '@')
 * Anything else, or a record without its NUL, makes the supervisor refuse the
 * fence (-EINVAL). A blob is at most CF_IPC_BLOB_MAX bytes (one SOCK_SEQPACKET
 * message, with the listener as SCM_RIGHTS).
 *
 * The answer: one int, 0 (the supervisor serves the listener) or -errno. */
#ifndef CF_SUPERVISOR_H
#define CF_SUPERVISOR_H

#include <stdint.h>

#define CF_IPC_MAGIC "cfipc1"
#define CF_IPC_BLOB_MAX 60000

/* The words for probe failures of pidfd_open/pidfd_getfd (cf_ipc_probe). */

/* Seconds the child side waits for the supervisor's answer. */
#define CF_IPC_ANSWER_TIMEOUT 10

/* The notification filter of cf_ipc_enter, for tests that run it on made-up
 * calls. NULL where there is none. */
struct sock_filter;
const struct sock_filter *cf_ipc_filter_program(unsigned short *len);

#endif
