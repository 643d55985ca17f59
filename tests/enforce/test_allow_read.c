/* --allow-read (issue 24): one file inside a secret location made readable,
 * from credfence run, a child of credfence harness and self mode. The rest
 * of the location stays denied, a key created there after the start
 * included; a path outside every secret location is refused with 125. */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "enforce_test.h"

CF_SUITE_STATE()
TestSuite(allow_read, .init = cf_suite_setup, .fini = cf_suite_teardown, .timeout = 60 * CF_TIMEOUT_SCALE);

#define KH_TEXT "known-hosts-line-CFKH"

static const char *shim(void)
{
	static char s[PATH_MAX];
	const char *b = getenv("CREDFENCE_BUILD");
	cr_assert(b && *b, "CREDFENCE_BUILD is not set; run with meson test");
	cf_fx_fmt(s, sizeof s, "%s/shim/libcredfence.so", b);
	return s;
}

/* H/.ssh/known_hosts, written with KH_TEXT (not a marker: it may be read). */
static const char *known_hosts(void)
{
	static char kh[PATH_MAX];
	cf_fx_fmt(kh, sizeof kh, "%s/known_hosts", cf_fx_secret(&fx, ".ssh")->path);
	cf_fx_write(kh, KH_TEXT "\n");
	return kh;
}

/* The probe's verdicts: known_hosts read, the key refused with EACCES and its
 * marker nowhere in the output. */
static void expect_kh_read_key_denied(const char *kh)
{
	const struct cf_fx_secret *ssh = cf_fx_secret(&fx, ".ssh");
	char want[PATH_MAX + 64];
	cf_fx_fmt(want, sizeof want, "read:%s read " KH_TEXT, kh);
	cr_expect(strstr(o.out, want), "known_hosts: " OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "read:%s EACCES", ssh->key), "the key: " OUT_FMT, OUT_ARGS(o));
	cf_fx_assert_no_marker(&fx, &o);
}

Test(allow_read, run_reads_known_hosts_and_not_the_key)
{
	cf_test_require_landlock();
	const char *kh = known_hosts();
	cf_fx_credfence(&o, &fx, "run", NULL,
			CF_ARGV("--allow-read", (char *)kh, "--", CF_GUARDPROBE, "--read", (char *)kh,
				(char *)cf_fx_secret(&fx, ".ssh")->key));
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	expect_kh_read_key_denied(kh);
}

/* The control: without the option known_hosts is denied like the key. */
Test(allow_read, without_the_option_known_hosts_is_denied)
{
	cf_test_require_landlock();
	const char *kh = known_hosts();
	cf_fx_credfence(&o, &fx, "run", NULL, CF_ARGV("--", CF_GUARDPROBE, "--read", (char *)kh));
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "read:%s EACCES", kh), OUT_FMT, OUT_ARGS(o));
}

/* Under the harness: its children read known_hosts (the guard covers the
 * other entries of ~/.ssh, not ~/.ssh), not the key, and not a key the
 * harness writes into ~/.ssh after it started. */
Test(allow_read, harness_children_read_known_hosts_and_no_key_made_later)
{
	cf_test_require_landlock();
	const char *kh = known_hosts();
	const struct cf_fx_secret *ssh = cf_fx_secret(&fx, ".ssh");
	char later[PATH_MAX], script[4 * PATH_MAX];
	cf_fx_fmt(later, sizeof later, "%s/id_later", ssh->path);
	cf_fx_fmt(script, sizeof script,
		  "%s --read '%s' '%s'; echo LATER-KEY-CFLK > '%s' && echo made; %s --read '%s'",
		  CF_GUARDPROBE, kh, ssh->key, later, CF_GUARDPROBE, later);
	cf_fx_credfence(&o, &fx, "harness", NULL,
			CF_ARGV("--allow-read", (char *)kh, "--", "/bin/sh", "-c", script));
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	expect_kh_read_key_denied(kh);
	cr_expect(has_line(o.out, "made"), "the harness could not write its key: " OUT_FMT,
		  OUT_ARGS(o));
	cr_expect(has_line(o.out, "read:%s EACCES", later), "the later key: " OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "CFLK") && !strstr(o.err, "CFLK"), OUT_FMT, OUT_ARGS(o));
}

/* Self mode: the shim loaded with CREDFENCE_ALLOW_READ fences the shell. */
Test(allow_read, self_mode_reads_known_hosts_and_not_the_key)
{
	cf_test_require_landlock();
	const char *kh = known_hosts();
	char pre[PATH_MAX + 16], home[PATH_MAX + 32], ws[PATH_MAX + 32], ar[PATH_MAX + 32];
	char script[3 * PATH_MAX];
	cf_fx_fmt(pre, sizeof pre, "LD_PRELOAD=%s", shim());
	cf_fx_fmt(home, sizeof home, "CREDFENCE_HOME=%s", fx.home);
	cf_fx_fmt(ws, sizeof ws, "CREDFENCE_WORKSPACE=%s", fx.ws);
	cf_fx_fmt(ar, sizeof ar, "CREDFENCE_ALLOW_READ=%s", kh);
	cf_fx_fmt(script, sizeof script, "%s --read '%s' '%s'", CF_GUARDPROBE, kh,
		  cf_fx_secret(&fx, ".ssh")->key);
	char **env = cf_fx_env(&fx, (const char *[]){pre, home, ws, ar, NULL});
	cf_fx_run(&o, fx.ws, env, NULL, CF_ARGV("/bin/sh", "-c", script));
	cf_fx_env_free(env);
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	expect_kh_read_key_denied(kh);
}

/* A path in no secret location is readable already: refused before
 * anything runs, by run, harness and self mode alike. */
Test(allow_read, a_path_outside_every_secret_is_refused_with_125)
{
	const char *notes = cf_fx_at(fx.home, "notes.txt");
	const char *subs[] = {"run", "harness"};
	for (size_t i = 0; i < 2; i++) {
		cf_fx_out_free(&o);
		cf_fx_credfence(&o, &fx, subs[i], NULL,
				CF_ARGV("--allow-read", (char *)notes, "--", "/bin/echo", "RAN"));
		cr_expect_eq(o.status, 125, "%s: " OUT_FMT, subs[i], OUT_ARGS(o));
		cr_expect(strstr(o.err, "credfence: ") && strstr(o.err, "--allow-read") &&
				  strstr(o.err, "lies in no secret location"),
			  "%s: " OUT_FMT, subs[i], OUT_ARGS(o));
		cr_expect(!strstr(o.out, "RAN"), "%s ran the command", subs[i]);
	}
	char pre[PATH_MAX + 16], home[PATH_MAX + 32], ar[PATH_MAX + 32];
	cf_fx_fmt(pre, sizeof pre, "LD_PRELOAD=%s", shim());
	cf_fx_fmt(home, sizeof home, "CREDFENCE_HOME=%s", fx.home);
	cf_fx_fmt(ar, sizeof ar, "CREDFENCE_ALLOW_READ=%s", notes);
	char **env = cf_fx_env(&fx, (const char *[]){pre, home, ar, NULL});
	cf_fx_out_free(&o);
	cf_fx_run(&o, fx.ws, env, NULL, CF_ARGV("/bin/sh", "-c", "echo RAN"));
	cf_fx_env_free(env);
	cr_expect_eq(o.status, 125, "self mode: " OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "lies in no secret location"), OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "RAN"), "self mode ran the command");
}

/* A whole location is lifted, with a warning that says so. */
Test(allow_read, a_whole_location_is_lifted_with_a_warning)
{
	cf_test_require_landlock();
	const struct cf_fx_secret *aws = cf_fx_secret(&fx, ".aws");
	cf_fx_credfence(&o, &fx, "run", NULL,
			CF_ARGV("--allow-read", (char *)aws->path, "--", CF_GUARDPROBE, "--read",
				(char *)aws->key));
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	char want[2 * PATH_MAX];
	cf_fx_fmt(want, sizeof want, "read:%s read %s", aws->key, aws->marker);
	cr_expect(strstr(o.out, want), OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "credfence: warning: run: --allow-read") &&
			  strstr(o.err, "lifts the whole secret location"),
		  OUT_FMT, OUT_ARGS(o));
}

/* A fifo and a directory beside the allowed file are covered one by one
 * like the key: the harness starts (its check opens nothing that blocks)
 * and its children open neither. */
Test(allow_read, harness_covers_a_fifo_and_a_directory_beside_it, .timeout = 60 * CF_TIMEOUT_SCALE)
{
	cf_test_require_landlock();
	const char *kh = known_hosts();
	const struct cf_fx_secret *ssh = cf_fx_secret(&fx, ".ssh");
	char fifo[PATH_MAX], sub[PATH_MAX], script[4 * PATH_MAX];
	cf_fx_fmt(fifo, sizeof fifo, "%s/cm-socket-like", ssh->path);
	cf_fx_fmt(sub, sizeof sub, "%s/keys.d/id_sub", ssh->path);
	cr_assert(mkfifo(fifo, 0600) == 0);
	cf_fx_write(sub, "SUBKEY-CFSK\n");
	cf_fx_fmt(script, sizeof script, "%s --read '%s' '%s'", CF_GUARDPROBE, kh, sub);
	cf_fx_credfence(&o, &fx, "harness", NULL,
			CF_ARGV("--allow-read", (char *)kh, "--", "/bin/sh", "-c", script));
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	char want[PATH_MAX + 64];
	cf_fx_fmt(want, sizeof want, "read:%s read " KH_TEXT, kh);
	cr_expect(strstr(o.out, want), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "read:%s EACCES", sub), OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "CFSK") && !strstr(o.err, "CFSK"), OUT_FMT, OUT_ARGS(o));
}

/* A nested run judges whether the enclosing fence denies all it would
 * (fence.c, uncovered): a missing secret is covered when its nearest
 * existing parent can not be listed. Here the enclosing run lifted
 * ~/.docker/config.json, which does not exist: ~/.docker opens in it, ~
 * does not. A nested run without the lift must see that and refuse, also
 * when started with descriptor 0 closed, where the parent's open lands on
 * 0 (taken for a refusal, it would walk on to ~, which refuses, and call
 * the secret covered). */
Test(allow_read, a_nested_run_with_stdin_closed_sees_the_lifted_missing_secret)
{
	cf_test_require_landlock();
	const struct cf_fx_secret *docker = cf_fx_secret(&fx, ".docker/config.json");
	cr_assert_eq(unlink(docker->key), 0, "%s: %s", docker->key, strerror(errno));
	char script[4 * PATH_MAX];
	cf_fx_fmt(script, sizeof script,
		  "env -u CREDFENCE_ALLOW_READ '%s' run -- /bin/echo inner-ran-open; "
		  "echo rc-open=$?; "
		  "env -u CREDFENCE_ALLOW_READ '%s' run -- /bin/echo inner-ran-closed 0<&-; "
		  "echo rc-closed=$?",
		  cf_fx_bin(), cf_fx_bin());
	cf_fx_credfence(&o, &fx, "run", NULL,
			CF_ARGV("--allow-read", (char *)docker->key, "--", "/bin/sh", "-c", script));
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	static const char *const stdin_is[] = {"open", "closed"};
	for (size_t i = 0; i < 2; i++) {
		cr_expect(!has_line(o.out, "inner-ran-%s", stdin_is[i]),
			  "with stdin %s the nested run ran its command: " OUT_FMT, stdin_is[i],
			  OUT_ARGS(o));
		cr_expect(has_line(o.out, "rc-%s=125", stdin_is[i]), "with stdin %s: " OUT_FMT,
			  stdin_is[i], OUT_ARGS(o));
	}
	char want[2 * PATH_MAX];
	cf_fx_fmt(want, sizeof want,
		  "credfence: read isolation is not effective: this process is fenced already by a "
		  "policy that does not deny %s;",
		  docker->key);
	const char *first = strstr(o.err, want);
	cr_expect(first && strstr(first + 1, want), "two refusals naming %s: " OUT_FMT, docker->key,
		  OUT_ARGS(o));
}
