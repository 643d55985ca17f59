/* A mount namespace of the caller's own, in a user namespace of its own
 * unless it runs as root, where it keeps its ids; the mounts become slaves
 * (the host's later mounts still show, ours never travel back). Used by the
 * harness's guard (harness_guard.h) and by the mount namespace of the fenced
 * tree (fenced_ns.h). Private to enforce/. */
#ifndef CF_USERNS_H
#define CF_USERNS_H

#include <stddef.h>

enum cf_userns_step {
	CF_USERNS_UNSHARE = 1,
	CF_USERNS_SETGROUPS,
	CF_USERNS_UID_MAP,
	CF_USERNS_GID_MAP,
	CF_USERNS_SLAVE,
};

/* Raw system calls and stack only: callable between fork and exec. The
 * calling process must have one thread. 0, or -errno with *STEP naming the
 * step that failed. */
int cf_userns_own(int *step);

/* TEXT written to PATH (a /proc file: one write): 0 or -errno. Raw system
 * calls and stack only. The id maps of another process go through it too
 * (fenced_keep.c writes its helper's). */
int cf_userns_write(const char *path, const char *text);

/* The caller's mounts made slaves of the namespace it came from (the last
 * step of cf_userns_own): 0 or -errno. Raw system calls. */
int cf_userns_slave(void);

/* The failure RC of STEP in words, into WHY (N bytes); returns RC. Normal
 * context: it reads /proc/self/status to tell a many-threaded process from
 * a machine where user namespaces are off. */
int cf_userns_words(int rc, int step, char *why, size_t n);

#endif
