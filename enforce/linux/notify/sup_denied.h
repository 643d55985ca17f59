/* The supervisor's side of a denial's report (enforce/linux/notify/denial_wire.h): the
 * secrets it judges by, and the judgement. */
#ifndef CF_SUP_DENIED_H
#define CF_SUP_DENIED_H

#include <stdbool.h>
#include <stddef.h>

#include "denial_wire.h"

/* The blob record that carries one secret to the supervisor:
 * 'd' "HOLDS\tPATH" (the row's words, a tab, the canonical path). */
#define CF_IPC_REC_DENIED 'd'

/* Append a 'd' record for each of the N secrets D to the blob at *BLOB
 * (*LEN bytes, malloc'd), as many as fit CF_IPC_BLOB_MAX less 4 KiB for the
 * other records: a secret left out is still denied, only not logged.
 * 0 or -ENOMEM. */
struct cf_denied;
int cf_sup_denied_blob(char **blob, size_t *len, const struct cf_denied *d, size_t n);

/* The records that carry the write protection's scope (protected_match.h),
 * so that the supervisor judges a refused write inside a writable location
 * by the table itself: 'h' the home, 'a' the account's home, 'c' the
 * working directory the fence was made in (each canonical, at most once),
 * 'l' a lifted location (--allow-write-protected, canonical). */
#define CF_IPC_REC_HOME 'h'
#define CF_IPC_REC_ACCOUNT_HOME 'a'
#define CF_IPC_REC_CWD 'c'
#define CF_IPC_REC_LIFT 'l'

/* Append POL's home and account home, CWD (canonical, may be NULL) and the
 * canonical LIFTS (may be NULL) to the blob at *BLOB, as far as they fit
 * CF_IPC_BLOB_MAX less 4 KiB: a record left out leaves a refused write
 * unlogged (a lift left out: logged although lifted), never allowed.
 * 0 or -ENOMEM. */
struct cf_policy;
struct cf_strv;
int cf_sup_protect_blob(char **blob, size_t *len, const struct cf_policy *pol, const char *cwd,
			const struct cf_strv *lifts);

/* Whether the trapped call DATA is a denial's report: ioctl(-1,
 * CF_DENIAL_IOCTL, ...), native. */
struct seccomp_data;
bool cf_sup_is_denial(const struct seccomp_data *data);

/* The new paths one process may have logged in a run (issue 31): a fenced
 * process can forge reports, and its flood must not silence another's. */
#define CF_DENIAL_BUDGET 128

/* In the supervisor, for one report REPORT (copied from the caller, pid PID
 * running PROGRAM): judge it against DENIED (the 'd' records, N_DENIED)
 * and SCOPE (the writable locations and the write protection's scope), and
 * write one line to LOG_FD (when >= 0) the first time a path is judged
 * denied in this supervisor's life: "denied" for a secret or a write outside
 * every writable location, "write_protected" for a write inside one that a
 * row of the protected table covers (common/protected_match.h). The answer
 * the caller gets: 0 the first time (its shim then says it on stderr),
 * -EALREADY when this run has said it already (said once a run, not once a
 * process), -EDQUOT when PID has used its CF_DENIAL_BUDGET paths (its first
 * such report writes one "denials_dropped" line), -EPERM when the fence did
 * not deny it. */
struct cf_protect_scope;
int cf_sup_denied(int log_fd, long pid, const char *program, const struct cf_denial_report *report,
		   char *const *denied, size_t n_denied, const struct cf_protect_scope *scope);

#endif
