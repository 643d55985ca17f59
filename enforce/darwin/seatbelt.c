#ifdef __APPLE__
#include "seatbelt.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "policy.h"

/* libsystem_sandbox, part of libSystem. PARAMS is KEY, VALUE, ..., NULL;
 * FLAGS 0 means PROFILE is profile text. */
typedef int (*sb_init_fn)(const char *profile, uint64_t flags, const char *const params[],
			  char **errorbuf);
typedef void (*sb_free_fn)(char *errorbuf);
typedef int (*sb_check_fn)(pid_t pid, const char *operation, int type, ...);

#define CF_SANDBOX_FILTER_NONE 0
#define CF_SANDBOX_FILTER_PATH 1

static struct {
	sb_init_fn init;
	sb_free_fn free_error;
	sb_check_fn check;
	const int *no_report; /* SANDBOX_CHECK_NO_REPORT, a flag exported as a constant */
} sb;

static void resolve(void)
{
	sb.init = (sb_init_fn)dlsym(RTLD_DEFAULT, "sandbox_init_with_parameters");
	sb.free_error = (sb_free_fn)dlsym(RTLD_DEFAULT, "sandbox_free_error");
	sb.check = (sb_check_fn)dlsym(RTLD_DEFAULT, "sandbox_check");
	sb.no_report = (const int *)dlsym(RTLD_DEFAULT, "SANDBOX_CHECK_NO_REPORT");
}

int cf_sb_probe(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, resolve);
	return sb.init ? 0 : -ENOSYS;
}

int cf_sb_active(void)
{
	if (cf_sb_probe() || !sb.check)
		return -ENOSYS;
	return sb.check(getpid(), NULL, CF_SANDBOX_FILTER_NONE) > 0;
}

int cf_sb_allows(const char *operation, const char *path)
{
	if (cf_sb_probe() || !sb.check)
		return -ENOSYS;
	int type = CF_SANDBOX_FILTER_PATH | (sb.no_report ? *sb.no_report : 0);
	int r = sb.check(getpid(), operation, type, path);
	return r < 0 ? -EINVAL : r == 0;
}

int cf_sb_apply(const struct cf_profile *pf, char *why, size_t whysz)
{
	char *err = NULL;
	if (cf_sb_probe()) {
		snprintf(why, whysz, "sandbox_init_with_parameters not found");
		return -ENOSYS;
	}
	errno = 0;
	if (sb.init(pf->text, 0, pf->params, &err) != 0) {
		int e = errno ? errno : EPERM;
		snprintf(why, whysz, "%s", err && *err ? err : strerror(e));
		if (err && sb.free_error)
			sb.free_error(err);
		return -e;
	}
	return 0;
}
#endif
