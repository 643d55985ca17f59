/* Fault injection: Landlock made to fail with ENOSYS, EOPNOTSUPP and EPERM by a
 * seccomp filter, a process already 16 layers deep, seccomp refusing the
 * listener or the terminal filter, and a directory over --max-entries. Each
 * fault has its own verdict; required mode exits 125 and runs nothing,
 * best-effort runs CMD. The same words from every way in (issue 9): run,
 * status, self mode, and a harness (its child where the harness's own
 * process meets the fault, else the harness itself). */
#include <criterion/criterion.h>

#include "enforce_test.h"

#ifndef CF_SECCOMP_FAULT
#error "CF_SECCOMP_FAULT comes from meson"
#endif
#ifndef CF_STACK_LAYERS
#error "CF_STACK_LAYERS comes from meson"
#endif

CF_SUITE_STATE()

struct fault {
	const char *wrap[3]; /* the helper and its argument */
	const char *reason;
	bool needs_landlock;
};

#define NE "read isolation is not effective: landlock unavailable ("
static const struct fault faults[] = {
	{{CF_SECCOMP_FAULT, "ENOSYS"}, NE "not built into this kernel: ENOSYS)", false},
	{{CF_SECCOMP_FAULT, "EOPNOTSUPP"}, NE "disabled at boot: EOPNOTSUPP)", false},
	{{CF_SECCOMP_FAULT, "EPERM"}, NE "blocked by seccomp or a container policy: EPERM)", false},
	{{CF_STACK_LAYERS, "16"},
	 NE "the process already has the 16 stacked Landlock layers the kernel allows: E2BIG)", true},
	/* Issue 10: seccomp refuses a user-notification listener, Landlock stays. */
	{{CF_SECCOMP_FAULT, "NOTIFY"},
	 "read isolation is not effective: seccomp user notification unavailable (Invalid argument)",
	 true},
	{{CF_SECCOMP_FAULT, "FILTER"},
	 "read isolation is not effective: seccomp filter for terminal injection could not be "
	 "installed (refused by an outer seccomp or container policy: EPERM)",
	 true},
	/* The expansion's verdict: its directory and count are the machine's, so
	 * the line run prints is what every other way in must print. */
	{{"/usr/bin/env", "CREDFENCE_MAX_ENTRIES=1"},
	 "read isolation is not effective: too many entries under /",
	 true},
};

/* WRAP... credfence SUB --home H --workspace W EXTRA... */
static void run_faulted(const struct fault *f, const char *sub, char *const extra[])
{
	static struct argvb b;
	b.n = 0;
	argvb_add(&b, "%s", f->wrap[0]);
	argvb_add(&b, "%s", f->wrap[1]);
	argvb_add(&b, "%s", cf_fx_bin());
	argvb_add(&b, "%s", sub);
	argvb_add(&b, "--home");
	argvb_add(&b, "%s", fx.home);
	argvb_add(&b, "--workspace");
	argvb_add(&b, "%s", fx.ws);
	for (int i = 0; extra[i]; i++)
		argvb_add(&b, "%s", extra[i]);
	char **env = cf_fx_env(&fx, NULL);
	cf_fx_run(&o, fx.ws, env, NULL, b.v);
	cf_fx_env_free(env);
}

/* WRAP... sh -c 'echo cmd-ran' in self mode: the shim fences the shell. */
static void self_faulted(const struct fault *f)
{
	char shim[PATH_MAX + 32], home[PATH_MAX + 32], ws[PATH_MAX + 32];
	char dir[PATH_MAX];
	cf_fx_fmt(dir, sizeof dir, "%s", cf_fx_bin());
	*strrchr(dir, '/') = '\0';
	cf_fx_fmt(shim, sizeof shim, "LD_PRELOAD=%s/../lib/libcredfence.so", dir);
	cf_fx_fmt(home, sizeof home, "CREDFENCE_HOME=%s", fx.home);
	cf_fx_fmt(ws, sizeof ws, "CREDFENCE_WORKSPACE=%s", fx.ws);
	char **env = cf_fx_env(&fx, NULL);
	cf_fx_run(&o, fx.ws, env, NULL,
		  CF_ARGV((char *)f->wrap[0], (char *)f->wrap[1], "env", shim, home, ws, "sh", "-c",
			  "echo cmd-ran"));
	cf_fx_env_free(env);
}

/* credfence harness -- WRAP... sh -c '/bin/echo cmd-ran': the harness meets
 * the fault, and its child is refused with the fence's words. */
static void harness_faulted(const struct fault *f)
{
	char **env = cf_fx_env(&fx, NULL);
	/* The harness's guard is one Landlock layer already (harness_guard.h). */
	const char *arg = strcmp(f->wrap[0], CF_STACK_LAYERS) == 0 ? "15" : f->wrap[1];
	cf_fx_run(&o, fx.ws, env, NULL,
		  CF_ARGV((char *)cf_fx_bin(), "harness", "--home", fx.home, "--workspace", fx.ws,
			  "--", (char *)f->wrap[0], (char *)arg, "sh", "-c", "/bin/echo cmd-ran"));
	cf_fx_env_free(env);
}

static void check_fault(size_t i)
{
	const struct fault *f = &faults[i];
	if (f->needs_landlock)
		cf_test_require_landlock();

	run_faulted(f, "run", CF_ARGV("--", "sh", "-c", "echo cmd-ran"));
	cr_expect_eq(o.status, 125, "%s: required mode\n" OUT_FMT, f->reason, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "cmd-ran"), "%s: the command ran in required mode", f->reason);
	cr_expect(all_lines_credfence(o.err), "%s", o.err);
	/* The whole status line run printed (up to its hint): every check below
	 * wants it, not only the table's start of it. */
	const char *at = strstr(o.err, f->reason);
	cr_assert(at, "want: %s\n" OUT_FMT, f->reason, OUT_ARGS(o));
	char line[1024];
	size_t n = strcspn(at, ";\n");
	cr_assert_lt(n, sizeof line);
	memcpy(line, at, n);
	line[n] = '\0';
	const struct fault whole = {{f->wrap[0], f->wrap[1]}, line, f->needs_landlock};
	f = &whole;

	cf_fx_out_free(&o);
	run_faulted(f, "run", CF_ARGV("--best-effort", "--", "sh", "-c", "echo cmd-ran"));
	cr_expect_eq(o.status, 0, "%s: best-effort\n" OUT_FMT, f->reason, OUT_ARGS(o));
	cr_expect(has_line(o.out, "cmd-ran"), "%s: best-effort runs the command", f->reason);
	cr_expect(strstr(o.err, f->reason), "best-effort still says why\n" OUT_FMT, OUT_ARGS(o));

	cf_fx_out_free(&o);
	run_faulted(f, "status", CF_ARGV("--json"));
	cr_expect_neq(o.status, 0, "status fails when isolation is not effective");
	char want[512];
	cf_fx_fmt(want, sizeof want, "\"status\":\"%s\"", f->reason);
	cr_expect(strstr(o.out, want), "want %s\n" OUT_FMT, want, OUT_ARGS(o));

	cf_fx_out_free(&o);
	run_faulted(f, "status", CF_ARGV("--best-effort"));
	cr_expect(has_line(o.out, "%s", f->reason), "status text\n" OUT_FMT, OUT_ARGS(o));

	cf_fx_out_free(&o);
	self_faulted(f);
	cr_expect_eq(o.status, 125, "%s: self mode\n" OUT_FMT, f->reason, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "cmd-ran"), "%s: self mode ran the command", f->reason);
	cr_expect(strstr(o.err, f->reason), "self mode, want: %s\n" OUT_FMT, f->reason, OUT_ARGS(o));

	cf_fx_out_free(&o);
	harness_faulted(f);
	cr_expect(!strstr(o.out, "cmd-ran"), "%s: the harness's child ran", f->reason);
	cr_expect(strstr(o.err, f->reason), "harness child, want: %s\n" OUT_FMT, f->reason,
		  OUT_ARGS(o));
}

TestSuite(faults, .init = cf_suite_setup, .fini = cf_suite_teardown);

/* One test per fault, so that each reports on its own. */
Test(faults, enosys)
{
	check_fault(0);
}

Test(faults, eopnotsupp)
{
	check_fault(1);
}

Test(faults, eperm)
{
	check_fault(2);
}

Test(faults, sixteen_layers_e2big)
{
	check_fault(3);
}

Test(faults, no_user_notification)
{
	check_fault(4);
}

Test(faults, no_terminal_filter)
{
	check_fault(5);
}

Test(faults, too_many_entries)
{
	check_fault(6);
}

Test(faults, helpers_really_inject)
{
	/* Control: without the helpers the same run is applied, so a pass above is
	 * the fault's doing. */
	cf_test_require_landlock();
	fenced(&o, &fx, NULL, NULL, CF_ARGV("sh", "-c", "echo cmd-ran"));
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "cmd-ran"));
}
