/* A mount namespace of the caller's own, in a user namespace of its own
 * unless it runs as root, where it keeps its ids; the mounts become slaves
 * (the host's later mounts still show, ours never travel back). Used by the
 * harness's guard (harness_guard.h) and by the mount namespace of the fenced
 * tree (tree_ns.h). Private to enforce/. */
#ifndef CF_USERNS_H
#define CF_USERNS_H

#include <stdbool.h>
#include <stddef.h>

/* Why no user namespace could be had (cf_userns_cause): each real case,
 * worded with the one thing that turns it on (cf_userns_words). */
enum cf_userns_cause {
	CF_USERNS_CAUSE_OTHER = 0,
	CF_USERNS_CAUSE_THREADS,  /* EINVAL: this process runs more than one thread */
	CF_USERNS_CAUSE_SYSCTL,   /* Debian's kernel.unprivileged_userns_clone=0 */
	CF_USERNS_CAUSE_MAXNS,    /* user.max_user_namespaces=0 (ENOSPC) */
	CF_USERNS_CAUSE_SECCOMP,  /* a seccomp filter (a container's default profile) */
	CF_USERNS_CAUSE_APPARMOR, /* Ubuntu 23.10+: made, but with no capabilities */
};

/* A test build's switch (meson -Dtest_userns_switch=true, issue 33):
 * CF_TEST_USERNS=sysctl|maxns|seccomp|apparmor makes every user namespace
 * this process and its children try fail the way that case fails on a
 * real machine (CF_TEST_NO_USERNS=1, the older name, is seccomp: refused
 * to root too). A build
 * without the option reads no variable: a fenced program can not turn a
 * namespace off. Read once as the program or the shim is loaded. */
enum cf_userns_fault {
	CF_USERNS_REAL = 0,
	CF_USERNS_FAULT_SYSCTL,   /* unshare(CLONE_NEWUSER): EPERM */
	CF_USERNS_FAULT_MAXNS,    /* unshare(CLONE_NEWUSER): ENOSPC */
	CF_USERNS_FAULT_SECCOMP,  /* unshare(any namespace), setns: EPERM */
	CF_USERNS_FAULT_APPARMOR, /* unshare works; the caller then holds no capability */
};

enum cf_userns_step {
	CF_USERNS_UNSHARE = 1,
	CF_USERNS_SETGROUPS,
	CF_USERNS_UID_MAP,
	CF_USERNS_GID_MAP,
	CF_USERNS_SLAVE,
};

/* ---- In the parent ---- */

/* Why RC at STEP: the machine's setting that refused it, read from
 * /proc/sys and /proc/self/status (the test switch stands in for them).
 * Normal context. */
int cf_userns_cause(int rc, int step);

/* What turns a namespace on again for CAUSE, one command or one change,
 * into OUT (N bytes); "" when there is nothing the user can do. */
void cf_userns_remedy(int cause, char *out, size_t n);

/* The failure RC of STEP in words, into WHY (N bytes); returns RC. Normal
 * context: it reads /proc/self/status to tell a many-threaded process from
 * a machine where user namespaces are off. */
int cf_userns_words(int rc, int step, char *why, size_t n);

/* The cause of RC at STEP and its remedy appended to WHY (N bytes) when
 * one of the machine's settings explains it (a mount refused in a user
 * namespace made under Ubuntu's rule, for tree_ns.c). Normal context. */
void cf_userns_cause_words(int rc, int step, char *why, size_t n);

/* ---- In the child too: raw system calls and the stack only ---- */

/* cf_userns_fault and cf_userns_setns are in mountns/harness_ns.c, which
 * a child entering the harness's namespace runs; the rest in userns.c. */

/* The switch's state (CF_USERNS_REAL in a build without it). Fork-safe. */
int cf_userns_fault(void);

/* The fault's name for messages ("" for CF_USERNS_REAL). */
const char *cf_userns_fault_word(void);

/* unshare(FLAGS) as a raw system call, through the test switch: every
 * place that makes a namespace calls this. 0 or -errno. Fork-safe. */
int cf_userns_unshare(unsigned long flags);

/* A seccomp filter on this process (/proc/self/status, Seccomp: 2): a
 * container's default profile, say. Raw system calls. */
bool cf_userns_under_seccomp(void);

/* setns(FD, TYPE) as a raw system call, through the test switch. Fork-safe. */
int cf_userns_setns(int fd, int type);

/* Raw system calls and stack only: callable between fork and exec. The
 * calling process must have one thread. 0, or -errno with *STEP naming the
 * step that failed. Where a namespace can be made and then holds no
 * capability (Ubuntu's AppArmor rule, kernel.apparmor_restrict_unprivileged_
 * userns=1), the steps are tried first in a child that is thrown away: a
 * process left in a user namespace whose id maps could not be written runs
 * as nobody and can create no file. */
int cf_userns_own(int *step);

/* TEXT written to PATH (a /proc file: one write): 0 or -errno. Raw system
 * calls and stack only. The id maps of another process go through it too
 * (shared_ns.c writes its helper's). */
int cf_userns_write(const char *path, const char *text);

/* The caller's mounts made slaves of the namespace it came from (the last
 * step of cf_userns_own): 0 or -errno. Raw system calls. */
int cf_userns_slave(void);

#endif
