/* The supervisor's reach into the caller of one notification
 * (sup_caller.c): its identity and credentials, its memory (a copy, once),
 * its descriptors (pidfd_getfd), the paths it names (pinned with O_PATH),
 * the answer to its call, and the log line of a denial. Private to the
 * supervisor. */
#ifndef CF_SUP_CALLER_H
#define CF_SUP_CALLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sup_state.h"

/* Whether the notification is still pending (its thread id names the same
 * thread, still in the call). */
bool cf_sup_valid(const struct caller *c);
/* Answer notification ID: RESULT (>= 0 a value, < 0 -errno), or let the
 * kernel go on with the call (CONT). */
void cf_sup_respond(int lfd, uint64_t id, long result, bool cont);
/* The lines of a status file the kernel decides permissions by, into OUT,
 * and the thread group into *TGID (may be NULL). 0 or -errno. */
int cf_sup_read_creds(const char *status_path, pid_t *tgid, char *out, size_t cap);
/* C->tid's pidfd; -ENOENT when the notification is no longer pending. Its
 * thread group and credentials are read later, once, by what needs them. */
int cf_sup_caller_open(struct caller *c);
void cf_sup_caller_close(struct caller *c);
/* The caller's descriptor FD, as one of ours. */
int cf_sup_take_fd(const struct caller *c, int fd);
/* LEN bytes of the caller's memory at ADDR, all of them, or -EFAULT. */
int cf_sup_peek(const struct caller *c, uint64_t addr, void *buf, size_t len);
/* A NUL-terminated string; -EFAULT, or -TOOLONG when CAP bytes hold no NUL. */
int cf_sup_peek_str(const struct caller *c, uint64_t addr, char *buf, size_t cap, int toolong);
/* One JSON line to the log: {"event":EVENT,"pid":N,"program":P,
 * ("call":CALL,)KEY:WHAT(,"reason":REASON)}. */
void cf_sup_log_denial(struct caller *c, const char *event, const char *call, const char *key,
		       const char *what, const char *reason);
/* The caller's program (/proc/TGID/exe, else its thread's comm) into OUT;
 * reads its thread group first. */
void cf_sup_program_of(struct caller *c, char *out, size_t cap);
/* Whether the caller's credentials are the supervisor's own (false when
 * they can not be read). */
bool cf_sup_same_creds(struct caller *c);
/* An O_PATH descriptor of what PATH from the caller's DIRFD names. */
int cf_sup_pin(struct caller *c, int dirfd, const char *path, bool follow, bool empty_ok);

#endif
