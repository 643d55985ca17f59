#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "machinery.h"
#ifdef __linux__
#endif

/* Refuse (required) or warn and go on (best effort). Returns 0 to go on. */
static int not_effective(const struct cf_fence *f, int logfd, const char *program)
{
	cf_cli_log(f, logfd, program, false);
	if (f->pol.mode == CF_MODE_REQUIRED) {
		cf_err("%s; %s. Nothing was run.", cf_cli_reason(f), cf_cli_hint(f->pol.verdict));
		return CF_EXIT_FAIL;
	}
	cf_err("%s; running without isolation (best-effort mode)", cf_cli_reason(f));
	return 0;
}

int cf_cmd_run(int argc, char **argv)
{
	struct cf_cli c;
	struct cf_fence f;
	int rc = cf_cli_parse(&c, "run", argc, argv, true, false);
	if (rc || (rc = cf_cli_finish(&c)))
		return rc;
	if (cf_fence_prepare(&f, &c.opts, environ, NULL)) {
		cf_err("out of memory while building the policy");
		return CF_EXIT_FAIL;
	}
	if ((rc = cf_cli_check_machinery(&f.pol, NULL)))
		return rc;
	if ((rc = cf_cli_check_log(&f)))
		return rc;
	cf_cli_judge_workspace(&c, &f);
	int logfd = cf_fence_log_open(&f);
	if (f.pol.log && logfd < 0) {
		cf_err("can not open the log %s; choose a file you can write", f.pol.log);
		return CF_EXIT_FAIL;
	}
	/* The secrets leave this process before a supervisor or a waiter is
	 * forked from it, once CMD is going to run. */
	if (!f.ready) {
		if ((rc = not_effective(&f, logfd, c.cmd[0])))
			return rc;
		cf_cli_withhold_env(&c.opts, logfd, c.cmd[0]);
	} else {
		cf_cli_withhold_env(&c.opts, logfd, c.cmd[0]);
#ifdef __linux__
		/* In best-effort mode a failed restrict must leave nothing behind
		 * (no_new_privs would stay), so ask a probe child first. */
		if (f.pol.mode == CF_MODE_BEST_EFFORT && !f.inherited && cf_fence_probe(&f)) {
			/* the verdict says why */
		} else if (cf_fence_needs_supervisor(&f) &&
			   cf_fence_start_supervisor(&f, getpid(), logfd, true)) {
			/* the verdict says why */
		} else if (cf_fence_apply(&f) == 0) {
			cf_cli_log(&f, logfd, c.cmd[0], true);
		}
#else
		/* A sandbox the kernel refuses leaves nothing behind: no probe. */
		if (cf_fence_apply(&f) == 0)
			cf_cli_log(&f, logfd, c.cmd[0], true);
#endif
		if (!f.ready && (rc = not_effective(&f, logfd, c.cmd[0])))
			return rc;
	}
	if (logfd >= 0)
		close(logfd);
	cf_cli_warn_root("run");
	cf_cli_exec(c.cmd);
}
