/* Every interposed call before the shim's constructor has run (issue 19
 * item 1). Claude Code 2.1.332 calls syscall() from its own malloc while the
 * shim's constructor is still resolving the real functions, and the shim
 * jumped to address 0 (exit 139). libcf-early.so (early_lib.c) calls, from
 * its constructor, syscall() with several numbers (also from a signal
 * handler and a thread), each exec form (one from a vfork child),
 * posix_spawn, posix_spawnp, system and popen; cf-early's IFUNC resolver,
 * which runs before every constructor, calls syscall() and starts a shell
 * with syscall(SYS_clone) and syscall(SYS_execve). Whatever the order:
 * no crash, each syscall() gives the real result, and each launch is either
 * refused (EPERM, one line on stderr: the process is not fenced yet and its
 * role is not decided) or fenced (a fenced process's child inherits the
 * fence): no marker anywhere.
 *
 * ld.so runs the constructors of the libraries a program needs, and of a
 * library preloaded after the shim, before the shim's; a library preloaded
 * before the shim has its constructor run after it. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
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

TestSuite(shim_early, .init = setup, .fini = teardown, .timeout = 120 * CF_TIMEOUT_SCALE);

#define N_SYSCALLS 20 /* 6 each from the constructor, a signal handler, a thread; 2 in the resolver */
#define N_LAUNCHES 16 /* the constructor's: 12 exec forms, posix_spawn(p), system, popen */

enum order { LIB_NEEDED, LIB_AFTER_SHIM, LIB_BEFORE_SHIM };

static const char *shim(void)
{
	return cf_fx_at(t.fx.root, "lib/libcredfence.so"); /* the one credfence harness loads */
}

static const char *preload(enum order order)
{
	static char v[2 * PATH_MAX + 32];
	const char *lib = st_build("tests/shim/libcf-early.so");
	switch (order) {
	case LIB_NEEDED:
		cf_fx_fmt(v, sizeof v, "LD_PRELOAD=%s", shim());
		break;
	case LIB_AFTER_SHIM:
		cf_fx_fmt(v, sizeof v, "LD_PRELOAD=%s:%s", shim(), lib);
		break;
	case LIB_BEFORE_SHIM:
		cf_fx_fmt(v, sizeof v, "LD_PRELOAD=%s:%s", lib, shim());
		break;
	}
	return v;
}

static void self_mode(struct cf_fx_out *o, enum order order)
{
	char home[PATH_MAX + 32], ws[PATH_MAX + 32];
	cf_fx_fmt(home, sizeof home, "CREDFENCE_HOME=%s", t.fx.home);
	cf_fx_fmt(ws, sizeof ws, "CREDFENCE_WORKSPACE=%s", t.fx.ws);
	char **env = st_env(&t, (const char *[]){preload(order), home, ws, NULL});
	cf_fx_run(o, t.fx.ws, env, NULL, CF_ARGV((char *)st_build("tests/shim/cf-early")));
	cf_fx_env_free(env);
}

/* The harness is `env LD_PRELOAD=... cf-early`: env execs in place, so
 * cf-early is the harness, with the order of preloads the test chose. */
static void harness(struct cf_fx_out *o, enum order order)
{
	st_harness(o, &t, NULL, NULL,
		   CF_ARGV("/usr/bin/env", (char *)preload(order),
			   (char *)st_build("tests/shim/cf-early")));
}

/* Under credfence run: fenced before anything of the program ran. */
static void fenced(struct cf_fx_out *o, enum order order)
{
	char *const av[] = {(char *)cf_fx_bin(), "run", "--home", t.fx.home, "--workspace", t.fx.ws,
			    "--", "/usr/bin/env", (char *)preload(order),
			    (char *)st_build("tests/shim/cf-early"), NULL};
	char **env = st_env(&t, NULL);
	cf_fx_run(o, t.fx.ws, env, NULL, av);
	cf_fx_env_free(env);
}

static void assert_syscalls(const struct cf_fx_out *o)
{
	cf_fx_assert_no_marker(&t.fx, o);
	cr_expect_eq(o->status, 0, "cf-early exited %d (139: a jump through a null pointer)",
		     o->status);
	cr_expect_eq(st_count(o->out, "\nSYSCALL ") + (strncmp(o->out, "SYSCALL ", 8) == 0),
		     N_SYSCALLS, "%zu SYSCALL lines, expected %d",
		     st_count(o->out, "\nSYSCALL ") + (strncmp(o->out, "SYSCALL ", 8) == 0),
		     N_SYSCALLS);
	cr_expect_eq(st_count(o->out, " bad"), 0, "a syscall() gave another result than the real one");
	cr_expect(strstr(o->out, "CTOR done\n"), "the library's constructor did not finish");
	cr_expect(strstr(o->out, "MAIN done\n"), "main did not run");
}

/* REFUSED launches refused with EPERM, each said once on stderr, and RAN
 * launches made fenced: their cat of the key failed with EACCES. */
static void assert_launches(const struct cf_fx_out *o, size_t refused, size_t ran)
{
	assert_syscalls(o);
	cr_expect_eq(st_count(o->out, "EXEC "), refused, "%zu refused, expected %zu",
		     st_count(o->out, "EXEC "), refused);
	cr_expect_eq(st_count(o->out, " refused errno=1\n"), refused, "not each one EPERM");
	cr_expect_eq(st_count(o->err, "before credfence's shim had set up this process"), refused,
		     "%zu refusal lines, expected %zu", st_count(o->err, "before credfence's shim"),
		     refused);
	cr_expect_eq(st_count(o->err, "Nothing was run.\n"), refused);
	cr_expect_eq(st_count(o->out, "RAN "), ran, "%zu ran, expected %zu", st_count(o->out, "RAN "),
		     ran);
	cr_expect_eq(st_count_denied(o->out), ran,
		     "%zu reads of the key refused with EACCES, expected %zu",
		     st_count_denied(o->out), ran);
}

/* The constructor's launches and the resolver's, all before the shim's
 * constructor in a process not fenced yet: all refused, nothing ran. */
static void assert_refused(const struct cf_fx_out *o)
{
	assert_launches(o, N_LAUNCHES + 1, 0);
}

/* The constructor ran after the shim's: its launches fenced; the resolver's
 * shell still came first, refused. */
static void assert_ctor_ran_fenced(const struct cf_fx_out *o)
{
	assert_launches(o, 1, N_LAUNCHES);
	cr_expect(strstr(o->out, "EXEC ifunc-execve refused errno=1\n"), "%s", o->out);
}

Test(shim_early, self_mode_needed_library_runs_first)
{
	struct cf_fx_out o;
	self_mode(&o, LIB_NEEDED);
	st_dump("self mode, cf-early's own library", &o);
	assert_refused(&o);
	cf_fx_out_free(&o);
}

Test(shim_early, self_mode_library_preloaded_after_the_shim)
{
	struct cf_fx_out o;
	self_mode(&o, LIB_AFTER_SHIM);
	st_dump("self mode, LD_PRELOAD=shim:lib", &o);
	assert_refused(&o);
	cf_fx_out_free(&o);
}

/* Its constructor runs after the shim's, which fenced the process; the
 * resolver's shell came before and is refused. */
Test(shim_early, self_mode_library_preloaded_before_the_shim)
{
	struct cf_fx_out o;
	self_mode(&o, LIB_BEFORE_SHIM);
	st_dump("self mode, LD_PRELOAD=lib:shim", &o);
	assert_ctor_ran_fenced(&o);
	cf_fx_out_free(&o);
}

Test(shim_early, harness_needed_library_runs_first)
{
	struct cf_fx_out o;
	harness(&o, LIB_NEEDED);
	st_dump("harness, cf-early's own library", &o);
	assert_refused(&o);
	cf_fx_out_free(&o);
}

Test(shim_early, harness_library_preloaded_after_the_shim)
{
	struct cf_fx_out o;
	harness(&o, LIB_AFTER_SHIM);
	st_dump("harness, LD_PRELOAD=shim:lib", &o);
	assert_refused(&o);
	cf_fx_out_free(&o);
}

/* Its constructor runs after the shim's: each of its launches is the
 * harness's, fenced; the resolver's shell came before and is refused. */
Test(shim_early, harness_library_preloaded_before_the_shim)
{
	struct cf_fx_out o;
	harness(&o, LIB_BEFORE_SHIM);
	st_dump("harness, LD_PRELOAD=lib:shim", &o);
	assert_ctor_ran_fenced(&o);
	cf_fx_out_free(&o);
}

/* Fenced already when the shim loads: an early launch inherits the fence, so
 * it is made (as the real call) rather than refused, the resolver's too. */
Test(shim_early, fenced_process_launches_early)
{
	struct cf_fx_out o;
	fenced(&o, LIB_AFTER_SHIM);
	st_dump("credfence run, LD_PRELOAD=shim:lib", &o);
	assert_launches(&o, 0, N_LAUNCHES + 1);
	cr_expect(strstr(o.out, "RAN ifunc-execve\n"), "the resolver's shell did not run");
	cf_fx_out_free(&o);
}
