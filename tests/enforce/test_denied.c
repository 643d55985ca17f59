/* credfence run --home FAKE denies every default location and every denied form
 * of the issue; each is checked by its errno and by the marker's absence. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "enforce_test.h"

CF_SUITE_STATE()
static struct argvb b;

static void setup(void)
{
	cf_suite_setup();
	b.n = 0;
}

TestSuite(denied, .init = setup, .fini = cf_suite_teardown, .timeout = 60 * CF_TIMEOUT_SCALE);

static const char *ssh_key(void)
{
	return cf_fx_secret(&fx, ".ssh")->key;
}

static void run_probe(void)
{
	fenced(&o, &fx, NULL, NULL, b.v);
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cf_fx_assert_no_marker(&fx, &o);
}

Test(denied, every_default_location)
{
	cf_test_require_landlock();
	argvb_add(&b, "%s", CF_PROBE);
	argvb_add(&b, "read:%s/notes.txt", fx.home); /* the control: a sibling is readable */
	for (size_t i = 0; i < fx.n; i++) {
		argvb_add(&b, "read:%s", fx.s[i].key);
		argvb_add(&b, "write:%s", fx.s[i].key);
		if (fx.s[i].is_dir)
			argvb_add(&b, "list:%s", fx.s[i].path);
	}
	run_probe();
	cr_expect(has_line(o.out, "read %s/notes.txt: OK", fx.home), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "plain notes"), "the control file was read");
	for (size_t i = 0; i < fx.n; i++) {
		cr_expect(has_line(o.out, "read %s: EACCES", fx.s[i].key), "%s readable?\n%s",
			  fx.s[i].rel, o.out);
		/* EROFS: the mount namespace of the fenced tree (tree_ns.h) refuses
		 * a write outside the writable locations before Landlock does. */
		cr_expect(has_line(o.out, "write %s: EACCES", fx.s[i].key) ||
				  has_line(o.out, "write %s: EROFS", fx.s[i].key), "%s writable?",
			  fx.s[i].rel);
		if (fx.s[i].is_dir)
			cr_expect(has_line(o.out, "list %s: EACCES", fx.s[i].path), "%s listable?",
				  fx.s[i].rel);
	}
}

Test(denied, dotdot_paths)
{
	cf_test_require_landlock();
	argvb_add(&b, "%s", CF_PROBE);
	argvb_add(&b, "read:%s/../home/.ssh/id_ed25519", fx.ws);
	argvb_add(&b, "read:%s/.config/../.aws/credentials", fx.home);
	argvb_add(&b, "read:%s/.ssh/../.ssh/./id_ed25519", fx.home);
	run_probe();
	cr_expect(has_line(o.out, "read %s/../home/.ssh/id_ed25519: EACCES", fx.ws), "%s", o.out);
	cr_expect(has_line(o.out, "read %s/.config/../.aws/credentials: EACCES", fx.home));
	cr_expect(has_line(o.out, "read %s/.ssh/../.ssh/./id_ed25519: EACCES", fx.home));
}

Test(denied, proc_self_root)
{
	cf_test_require_landlock();
	argvb_add(&b, "%s", CF_PROBE);
	argvb_add(&b, "read:/proc/self/root%s", ssh_key());
	argvb_add(&b, "read:/proc/self/root%s", cf_fx_secret(&fx, ".netrc")->key);
	run_probe();
	cr_expect(has_line(o.out, "read /proc/self/root%s: EACCES", ssh_key()), "%s", o.out);
	cr_expect(has_line(o.out, "read /proc/self/root%s: EACCES",
			   cf_fx_secret(&fx, ".netrc")->key));
}

Test(denied, symlink_made_inside_the_workspace)
{
	cf_test_require_landlock();
	char script[PATH_MAX * 3];
	cf_fx_fmt(script, sizeof script, "ln -s %s %s/link && exec %s read:%s/link", ssh_key(), fx.ws,
		  CF_PROBE, fx.ws);
	fenced(&o, &fx, NULL, NULL, CF_ARGV("sh", "-c", script));
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "read %s/link: EACCES", fx.ws), OUT_FMT, OUT_ARGS(o));
	cf_fx_assert_no_marker(&fx, &o);
}

Test(denied, hard_link_attempt)
{
	cf_test_require_landlock();
	char script[PATH_MAX * 4];
	cf_fx_fmt(script, sizeof script, "%s link:%s:%s/hl; ln %s %s/hl2; echo ln=$?", CF_PROBE,
		  ssh_key(), fx.ws, ssh_key(), fx.ws);
	fenced(&o, &fx, NULL, NULL, CF_ARGV("sh", "-c", script));
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	/* Landlock refuses a link that would widen access with EXDEV (or EACCES). */
	cr_expect(has_line(o.out, "link %s: EXDEV", ssh_key()) ||
			  has_line(o.out, "link %s: EACCES", ssh_key()),
		  OUT_FMT, OUT_ARGS(o));
	cr_expect(!has_line(o.out, "ln=0"), "ln made a hard link to a secret");
	struct stat st;
	cr_expect(lstat(cf_fx_at(fx.ws, "hl"), &st) != 0 && errno == ENOENT);
	cr_expect(lstat(cf_fx_at(fx.ws, "hl2"), &st) != 0 && errno == ENOENT);
	cf_fx_assert_no_marker(&fx, &o);
}

Test(denied, cp)
{
	cf_test_require_landlock();
	const char *dst = cf_fx_at(fx.ws, "copy");
	fenced(&o, &fx, NULL, NULL, CF_ARGV("cp", (char *)ssh_key(), (char *)dst));
	cr_expect_neq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "Permission denied"), "cp: EACCES expected\n%s", o.err);
	cf_fx_assert_no_marker(&fx, &o);
	char *copy = cf_fx_slurp(dst);
	cr_expect(!copy || !strstr(copy, fx.tag), "the copy holds the key");
	free(copy);
}

Test(denied, name_assembled_by_python_at_run_time)
{
	cf_test_require_landlock();
	cf_test_require_tool("python3");
	const char *py = "import os, errno\n"
			 "p = os.path.join(os.environ['HOME'], '.' + 'ss' + 'h', 'id_' + 'ed' + '25519')\n"
			 "try:\n"
			 "    print(open(p).read())\n"
			 "except OSError as e:\n"
			 "    print('python:', errno.errorcode[e.errno])\n";
	fenced(&o, &fx, NULL, NULL, CF_ARGV("python3", "-c", (char *)py));
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "python: EACCES"), OUT_FMT, OUT_ARGS(o));
	cf_fx_assert_no_marker(&fx, &o);
}

Test(denied, bash_env_pointing_at_a_secret)
{
	cf_test_require_landlock();
	cf_test_require_tool("bash");
	/* The fake key is one line, the marker: sourced, it would print it as an
	 * unknown command. */
	char env[PATH_MAX + 16];
	cf_fx_fmt(env, sizeof env, "BASH_ENV=%s", ssh_key());
	const char *extra[] = {env, NULL};
	fenced(&o, &fx, extra, NULL, CF_ARGV("bash", "-c", "echo bash-ran"));
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "bash-ran"), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.err, "bash: %s: Permission denied", ssh_key()), OUT_FMT, OUT_ARGS(o));
	cf_fx_assert_no_marker(&fx, &o);
}

Test(denied, o_path_reopened_through_proc_self_fd)
{
	cf_test_require_landlock();
	argvb_add(&b, "%s", CF_PROBE);
	argvb_add(&b, "opath:%s", ssh_key());
	argvb_add(&b, "opath:%s", cf_fx_secret(&fx, ".aws/credentials")->key);
	run_probe();
	cr_expect(has_line(o.out, "opath %s: EACCES", ssh_key()), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "opath %s: EACCES", cf_fx_secret(&fx, ".aws/credentials")->key));
}

Test(denied, writing_bashrc)
{
	cf_test_require_landlock();
	argvb_add(&b, "%s", CF_PROBE);
	argvb_add(&b, "write:%s/.bashrc", fx.home);
	argvb_add(&b, "read:%s/.bashrc", fx.home);
	run_probe();
	cr_expect(has_line(o.out, "write %s/.bashrc: EACCES", fx.home) ||
			  has_line(o.out, "write %s/.bashrc: EROFS", fx.home), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "read %s/.bashrc: OK", fx.home), "a sibling stays readable");
	char *rc = cf_fx_slurp(cf_fx_at(fx.home, ".bashrc"));
	cr_expect_str_eq(rc, "# fake bashrc\n");
	free(rc);
	/* and through the shell */
	char script[PATH_MAX + 64];
	cf_fx_fmt(script, sizeof script, "echo evil >> %s/.bashrc", fx.home);
	cf_fx_out_free(&o);
	fenced(&o, &fx, NULL, NULL, CF_ARGV("sh", "-c", script));
	cr_expect_neq(o.status, 0);
	cr_expect(strstr(o.err, "Permission denied") || strstr(o.err, "Read-only file system"), "%s",
		  o.err);
}

Test(denied, creating_a_new_file_in_home)
{
	cf_test_require_landlock();
	argvb_add(&b, "%s", CF_PROBE);
	argvb_add(&b, "create:%s/new-file", fx.home);
	argvb_add(&b, "create:%s/.ssh/new-key", fx.home);
	argvb_add(&b, "list:%s", fx.home);
	run_probe();
	cr_expect(has_line(o.out, "create %s/new-file: EACCES", fx.home) ||
			  has_line(o.out, "create %s/new-file: EROFS", fx.home), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "create %s/.ssh/new-key: EACCES", fx.home) ||
		  has_line(o.out, "create %s/.ssh/new-key: EROFS", fx.home));
	cr_expect(has_line(o.out, "list %s: EACCES", fx.home), "an ancestor can not be listed");
	struct stat st;
	cr_expect(lstat(cf_fx_at(fx.home, "new-file"), &st) != 0);
	cr_expect(lstat(cf_fx_at(fx.home, ".ssh/new-key"), &st) != 0);
}
