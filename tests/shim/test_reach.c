/* No fenced child can reach the harness that started it (issue 8, finding 1):
 * not its memory, its descriptors, its environment or its threads, on any
 * launch path. cf-reach plays both parts: the harness holds the fake key open
 * and in memory; each child tries /proc/PPID/task/TID/{mem,environ,maps},
 * pidfd_getfd (process and thread pidfds), process_vm_readv/writev and ptrace.
 * Landlock's scoping holds for root as for any user, so this runs as the test
 * runs; this kernel has no Yama, so Yama plays no part in the result. */
#include <criterion/criterion.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shimtest.h"

static struct st t;

static void setup(void)
{
	st_setup(&t);
}

static void teardown(void)
{
	st_teardown(&t);
}

TestSuite(shim_reach, .init = setup, .fini = teardown, .timeout = 120 * CF_TIMEOUT_SCALE);

static const char *const paths[] = {"posix_spawn", "posix_spawnp", "system",
				    "popen",       "fork",         "vfork"};

#define NOBODY 65534

static int give_to_nobody(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return lchown(path, NOBODY, NOBODY);
}

/* The whole scenario under `credfence harness`, as the test's user or, when
 * that is root, as nobody too. */
static void attack(struct cf_fx_out *o, bool as_nobody)
{
	const char *reach = st_build("tests/shim/cf-reach");
	char **env = st_env(&t, NULL);
	if (!as_nobody) {
		st_harness(o, &t, env, (const char *[]){"--log", t.log, NULL},
			   CF_ARGV((char *)reach, "harness"));
	} else {
		cr_assert_eq(nftw(t.fx.home, give_to_nobody, 16, FTW_PHYS), 0);
		cr_assert_eq(nftw(t.fx.ws, give_to_nobody, 16, FTW_PHYS), 0);
		/* The fixture's environment points the toolchains at the real
		 * home, which nobody can not list: a plain one. */
		char home[PATH_MAX + 8], key[PATH_MAX + 16], own[PATH_MAX + 16];
		snprintf(home, sizeof home, "HOME=%s", t.fx.home);
		snprintf(key, sizeof key, "CF_T_KEY=%s", t.key);
		snprintf(own, sizeof own, "CF_T_OWN=%s",
			 cf_fx_secret(&t.fx, ".claude/.credentials.json")->key);
		char *const plain[] = {"PATH=/usr/bin:/bin", home, key, own, NULL};
		/* nobody runs a copy in the fixture root: the build tree may lie
		 * where nobody can not reach it (a checkout under a 0700
		 * directory), and an attack that never ran would read as a hole. */
		const char *copy = cf_fx_helper_for(&t.fx, reach, NOBODY, NOBODY);
		cf_fx_run(o, t.fx.ws, plain, NULL,
			  CF_ARGV("/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
				  (char *)cf_fx_bin(), "harness", "--home", t.fx.home, "--workspace", t.fx.ws, "--",
				  (char *)copy, "harness"));
	}
	cf_fx_env_free(env);
}

static void assert_refused(const struct cf_fx_out *o, bool proc_reads_refused)
{
	cf_fx_assert_no_marker(&t.fx, o);
	cr_expect_eq(o->status, 0, "the harness ended with %d", o->status);
	for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
		char line[128];
		/* Every attempt of every path made, and refused with the kernel's
		 * answer for a ptrace denial (EACCES from /proc, EPERM elsewhere). */
		snprintf(line, sizeof line, "ATTACK %s tried=", paths[i]);
		cr_expect(strstr(o->out, line), "no attack by %s", paths[i]);
		snprintf(line, sizeof line, "DENIED %s key EACCES", paths[i]);
		cr_expect(strstr(o->out, line), "the child by %s was not fenced", paths[i]);
		snprintf(line, sizeof line, "DENIED %s process_vm_readv EPERM", paths[i]);
		cr_expect(strstr(o->out, line), "process_vm_readv by %s: not EPERM", paths[i]);
		snprintf(line, sizeof line, "DENIED %s process_vm_writev EPERM", paths[i]);
		cr_expect(strstr(o->out, line), "process_vm_writev by %s: not EPERM", paths[i]);
		snprintf(line, sizeof line, "DENIED %s pidfd_getfd EPERM", paths[i]);
		cr_expect(strstr(o->out, line), "pidfd_getfd by %s: not EPERM", paths[i]);
		snprintf(line, sizeof line, "LEAK %s task/", paths[i]);
		size_t mem = 0;
		for (const char *p = o->out; (p = strstr(p, line)); p++)
			mem += strncmp(strchr(p + strlen(line), '/'), "/mem", 4) == 0;
		cr_expect_eq(mem, 0, "the child by %s read the harness's memory", paths[i]);
	}
	/* Two threads in the harness at least: each one's memory, from each path. */
	cr_expect_geq(st_count(o->out, "/mem EACCES"), 2 * 6, "too few mem attempts refused");
	cr_expect_geq(st_count(o->out, "pidfd_getfd-thread-"), 2 * 6, "too few thread pidfds tried");
	cr_expect_eq(st_count(o->out, "LEAK ") - st_count(o->out, "/environ: ") -
			     st_count(o->out, "/maps: "),
		     0, "a child took a descriptor, traced a thread or read memory");
	if (proc_reads_refused) {
		cr_expect_eq(st_count(o->out, "LEAK "), 0, "a child reached the harness");
		cr_expect_geq(st_count(o->out, "/environ EACCES"), 2 * 6);
		cr_expect_geq(st_count(o->out, "/maps EACCES"), 2 * 6);
	} else {
		/* Root: Landlock refuses every attach-mode access, but this kernel
		 * lets a CAP_SYS_PTRACE holder read environ and maps (SECURITY.md). */
		size_t leaks = st_count(o->out, "LEAK ");
		size_t allowed = st_count(o->out, "/environ: ") + st_count(o->out, "/maps: ");
		cr_expect_eq(leaks, allowed, "a child reached more than environ and maps as root");
	}
}

Test(shim_reach, no_child_reaches_the_harness)
{
	struct cf_fx_out o;
	attack(&o, false);
	st_dump("cf-reach under credfence harness", &o);
	assert_refused(&o, getuid() != 0);
	cf_fx_out_free(&o);

	/* Without the shim the same children read the harness: the test can fail. */
	char **env = st_env(&t, NULL);
	cf_fx_run(&o, t.fx.ws, env, NULL, CF_ARGV((char *)st_build("tests/shim/cf-reach"), "harness"));
	st_dump("cf-reach free", &o);
	cr_expect(strstr(o.out, t.fx.tag), "free children should read the harness's copy of the key");
	cr_expect_geq(st_count(o.out, "LEAK posix_spawn task/"), 1, "no leak without the shim");
	cf_fx_out_free(&o);
	cf_fx_env_free(env);
}

/* As an ordinary user (nobody, when the suite runs as root): not even the
 * harness's environment or memory map. */
Test(shim_reach, no_child_reaches_the_harness_as_a_user)
{
	struct cf_fx_out o;
	if (getuid() != 0) {
		/* A skipped test gets no .fini: its fixture goes here (left behind,
		 * it failed tests/lib/as-user.sh's run as nobody). */
		st_teardown(&t);
		cr_skip_test("runs as an ordinary user already (the test above)");
	}
	attack(&o, true);
	st_dump("cf-reach as nobody under credfence harness", &o);
	assert_refused(&o, true);
	cf_fx_out_free(&o);
}
