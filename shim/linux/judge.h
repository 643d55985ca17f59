/* What the shim asks when a call failed in a way that may be the fence's:
 * the judge (judge.c) decides and says it. libcredfence.so links it in;
 * libcredfence-fenced.so, which every fenced program loads, reaches it
 * through cf_judge() at the first such failure (judge_load.c), so that its
 * own load stays as cheap as an empty library's (issue 36). */
#ifndef CF_SHIM_JUDGE_H
#define CF_SHIM_JUDGE_H

#include <stdbool.h>

/* ACC_META: a metadata change (chmod, chown, utimes), which the supervisor
 * refuses and logs by itself outside the writable locations: explained only
 * where write protection refuses it. */
enum cf_judge_access { ACC_READ, ACC_WRITE, ACC_META };

struct cf_judge_ops {
	/* A call on PATH (relative to DIRFD) failed with ERR: explain it when
	 * the fence refused it. HARNESS: the caller is a harness's shim (it
	 * explains nothing). Called with the shim's wrappers passing through
	 * (denied.c's judging), errno as it may leave it. */
	void (*explain)(int dirfd, const char *path, int access, int err, bool harness);
	/* A connect to the Unix socket at PATH (NUL-terminated) refused. */
	void (*connect)(const char *path, bool harness);
};

/* The judge, or NULL when it can not be had (judge_load.c: the library is
 * not beside this one, or does not load): then nothing is explained. */
const struct cf_judge_ops *cf_judge(void);

#endif
