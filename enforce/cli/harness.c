#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "machinery.h"
#include "proc.h"

#ifdef __APPLE__
#include <mach-o/dyld.h>
#include <stdint.h>
#endif

#ifndef CF_SHIM_INSTALLED
#define CF_SHIM_INSTALLED "/usr/local/lib/libcredfence.so"
#endif

/* This program's own path, symlinks resolved, into EXE (N bytes, NUL not
 * counted in the result); -1 when it is not known. */
static ssize_t self_exe(char *exe, size_t n)
{
#ifdef __APPLE__
	char raw[PATH_MAX];
	uint32_t size = sizeof raw;
	if (n < PATH_MAX || _NSGetExecutablePath(raw, &size) != 0 || !realpath(raw, exe))
		return -1;
	return (ssize_t)strlen(exe);
#else
	return readlink("/proc/self/exe", exe, n - 1);
#endif
}

/* Where the shim is: next to this program (installed or build tree), or installed. */
const char *cf_cli_find_shim(void)
{
	static char found[PATH_MAX];
	char exe[PATH_MAX];
	ssize_t n = self_exe(exe, sizeof exe);
	if (n > 0) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			static const char *const rel[] = {"/" CF_SHIM_FILE, "/../shim/" CF_SHIM_FILE,
							   "/../lib/" CF_SHIM_FILE};
			for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) {
				char cand[PATH_MAX * 2];
				snprintf(cand, sizeof cand, "%s%s", exe, rel[i]);
				if (access(cand, R_OK) == 0 && realpath(cand, found))
					return found;
			}
		}
	}
	if (access(CF_SHIM_INSTALLED, R_OK) == 0 && realpath(CF_SHIM_INSTALLED, found))
		return found;
	return NULL;
}

static int set_list(const char *name, const struct cf_strv *v)
{
	size_t len = 1;
	for (size_t i = 0; i < v->n; i++)
		len += strlen(v->v[i]) + 1;
	char *s = calloc(1, len);
	if (!s)
		return -1;
	for (size_t i = 0; i < v->n; i++) {
		if (i)
			strcat(s, ":");
		strcat(s, v->v[i]);
	}
	int rc = setenv(name, s, 1);
	free(s);
	return rc;
}

/* The shim reads only the environment: turn the options into their twins. */
static int export_options(const struct cf_cli *c)
{
	const struct cf_options *o = &c->opts;
	char num[32];
	if (o->home && setenv("CREDFENCE_HOME", o->home, 1))
		return -1;
	/* The workspace is fixed at start: the harness may change directory
	 * later, and its plan is rebuilt with the environment. */
	char here[PATH_MAX], canon[PATH_MAX];
	const char *ws = o->workspace ? o->workspace : getcwd(here, sizeof here);
	if (ws && realpath(ws, canon))
		ws = canon;
	if (ws && setenv("CREDFENCE_WORKSPACE", ws, 1))
		return -1;
	if (o->log && setenv("CREDFENCE_LOG", o->log, 1))
		return -1;
	if (o->writable_from_cli && set_list("CREDFENCE_WRITABLE", &o->writable))
		return -1;
	if (o->deny_from_cli && set_list("CREDFENCE_DENY", &o->deny))
		return -1;
	if (o->mode >= 0 &&
	    setenv("CREDFENCE_MODE", o->mode == CF_MODE_BEST_EFFORT ? "best-effort" : "required", 1))
		return -1;
	if (o->max_entries > 0) {
		snprintf(num, sizeof num, "%ld", o->max_entries);
		if (setenv("CREDFENCE_MAX_ENTRIES", num, 1))
			return -1;
	}
	return 0;
}

static int preload(const char *shim)
{
	const char *old = getenv(CF_PRELOAD_VAR);
	if (!old || !*old)
		return setenv(CF_PRELOAD_VAR, shim, 1);
	if (strstr(old, shim))
		return 0;
	size_t n = strlen(shim) + strlen(old) + 2;
	char *v = malloc(n);
	if (!v)
		return -1;
	snprintf(v, n, "%s:%s", shim, old);
	int rc = setenv(CF_PRELOAD_VAR, v, 1);
	free(v);
	return rc;
}

int cf_cmd_harness(int argc, char **argv)
{
	struct cf_cli c;
	struct cf_fence f;
	int rc = cf_cli_parse(&c, "harness", argc, argv, true, false);
	if (rc || (rc = cf_cli_finish(&c)))
		return rc;
	if (cf_fence_prepare(&f, &c.opts, environ, NULL)) {
		cf_err("out of memory while building the policy");
		return CF_EXIT_FAIL;
	}
	if (!f.ready) {
		int logfd = cf_fence_log_open(&f);
		cf_cli_log(&f, logfd, c.cmd[0], false);
		if (f.pol.mode == CF_MODE_REQUIRED) {
			cf_err("%s; %s. Nothing was run.", f.pol.reason, cf_cli_hint(f.pol.verdict));
			return CF_EXIT_FAIL;
		}
		cf_err("%s; the harness runs and its children run without isolation "
		       "(best-effort mode)", f.pol.reason);
	}
	const char *shim = cf_cli_find_shim();
	if ((rc = cf_cli_check_machinery(&f.pol, shim))) {
		cf_fence_free(&f);
		return rc;
	}
	cf_fence_free(&f);
	if (!shim) {
		cf_err("can not find " CF_SHIM_FILE " next to this program or at %s; "
		       "install credfence (meson install) so that both are in place",
		       CF_SHIM_INSTALLED);
		return CF_EXIT_FAIL;
	}
	char marker[64];
	snprintf(marker, sizeof marker, "%ld:%llu", (long)getpid(), cf_proc_self_starttime());
	/* The shim sends a child whose environment moves a secret through this
	 * program (credfence run), which builds that child's fence. */
	char self[PATH_MAX];
	ssize_t sn = self_exe(self, sizeof self);
	if (sn > 0)
		self[sn] = '\0';
	if (export_options(&c) || preload(shim) || setenv("CREDFENCE_HARNESS", marker, 1) ||
	    (sn > 0 && setenv("CREDFENCE_LAUNCHER", self, 1))) {
		cf_err("can not set the environment: %s", strerror(errno));
		return CF_EXIT_FAIL;
	}
	cf_cli_exec(c.cmd);
}
