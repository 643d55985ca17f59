/* Relocations follow the child (issue 8, finding 7): a secret moved by the
 * environment a child actually gets (KUBECONFIG only in a subprocess's env)
 * or by the harness after it started (os.environ['GNUPGHOME'] = ...) is
 * denied to that child, on every launch path: posix_spawn and system (the
 * harness builds the child's fence), fork+exec (the child goes through
 * credfence run, which builds it from the child's environment). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shimtest.h"

static struct st t;
static char moved[PATH_MAX + 32]; /* ROOT/moved: outside every default location */

static void setup(void)
{
	st_setup(&t);
	snprintf(moved, sizeof moved, "%s/moved", t.fx.root);
	char text[256];
	snprintf(text, sizeof text, "%s-moved-kube\n", t.fx.tag);
	cf_fx_write(cf_fx_at(moved, "kube/config"), text);
	snprintf(text, sizeof text, "%s-moved-gnupg\n", t.fx.tag);
	cf_fx_write(cf_fx_at(moved, "gnupg/private-keys-v1.d/k.key"), text);
}

static void teardown(void)
{
	st_teardown(&t);
}

TestSuite(shim_env, .init = setup, .fini = teardown, .timeout = 120 * CF_TIMEOUT_SCALE);

/* Each line: R <how> <result>, result "EACCES" (cat refused), or what it read. */
static const char script[] =
	"import os, subprocess, sys\n"
	"moved = sys.argv[1]\n"
	"kube, gpg = moved + '/kube/config', moved + '/gnupg/private-keys-v1.d/k.key'\n"
	"def cat(path, env=None):\n"
	"    r = subprocess.run(['/bin/cat', path], env=env, capture_output=True, text=True)\n"
	"    return 'EACCES' if 'Permission denied' in r.stderr else 'read:' + r.stdout.strip() + ' err:' + r.stderr.strip()\n"
	"def spawn(path, env):\n"
	"    r, w = os.pipe()\n"
	"    pid = os.posix_spawn('/bin/sh', ['sh', '-c', 'cat \"$0\" 2>&1', path], env,\n"
	"                         file_actions=[(os.POSIX_SPAWN_DUP2, w, 1)])\n"
	"    os.close(w); f = os.fdopen(r); out = f.read(); f.close(); os.waitpid(pid, 0)\n"
	"    return 'EACCES' if 'Permission denied' in out else 'read:' + out.strip()\n"
	"child = dict(os.environ, KUBECONFIG=kube)\n"
	"print('R fork-child-env', cat(kube, child), flush=True)\n"
	"print('R spawn-child-env', spawn(kube, child), flush=True)\n"
	"os.environ['GNUPGHOME'] = moved + '/gnupg'\n"
	"print('R fork-harness-setenv', cat(gpg), flush=True)\n"
	"print('R spawn-harness-setenv', spawn(gpg, dict(os.environ)), flush=True)\n"
	"st = os.system('cat \"$GNUPGHOME/private-keys-v1.d/k.key\" 2>&1 | sed s/^/R-system-/')\n"
	"print('R harness-reads', 'ok' if open(kube).read() else 'no', flush=True)\n";

Test(shim_env, moved_secrets_are_denied_to_the_child)
{
	struct cf_fx_out o;
	char **env = st_env(&t, NULL);
	st_harness(&o, &t, env, (const char *[]){"--log", t.log, NULL},
		   CF_ARGV("/usr/bin/python3", "-c", (char *)script, moved));
	st_dump("python3 harness moving secrets", &o);
	cf_fx_assert_no_marker(&t.fx, &o);
	cr_expect_eq(o.status, 0, "the harness ended with %d", o.status);
	cr_expect(strstr(o.out, "R fork-child-env EACCES"), "KUBECONFIG of a fork child not denied");
	cr_expect(strstr(o.out, "R spawn-child-env EACCES"), "KUBECONFIG of a spawned child not denied");
	cr_expect(strstr(o.out, "R fork-harness-setenv EACCES"), "GNUPGHOME set later: fork child");
	cr_expect(strstr(o.out, "R spawn-harness-setenv EACCES"), "GNUPGHOME set later: spawned child");
	cr_expect(strstr(o.out, "R-system-") && st_has_denied(o.out),
		  "GNUPGHOME set later: system()");
	cr_expect(strstr(o.out, "R harness-reads ok"), "the harness itself lost its access");
	cf_fx_out_free(&o);

	/* Without the shim the same script reads both: the test can fail. */
	cf_fx_run(&o, t.fx.ws, env, NULL, CF_ARGV("/usr/bin/python3", "-c", (char *)script, moved));
	cr_expect(strstr(o.out, "-moved-kube") && strstr(o.out, "-moved-gnupg"),
		  "free, the moved secrets should be readable:\n%s", o.out);
	cf_fx_out_free(&o);
	cf_fx_env_free(env);
}

/* The harness's options are read once, at its start: one that later unsets
 * CREDFENCE_WORKSPACE and changes directory does not make that directory
 * writable at its next rebuild (here forced by a new GNUPGHOME). */
Test(shim_env, harness_options_are_fixed_at_start)
{
	struct cf_fx_out o;
	char **env = st_env(&t, NULL);
	st_harness(&o, &t, env, NULL,
		   CF_ARGV("/usr/bin/python3", "-c",
			   "import os, sys\n"
			   "os.chdir(sys.argv[1])\n"
			   "del os.environ['CREDFENCE_WORKSPACE']\n"
			   "os.environ['GNUPGHOME'] = sys.argv[1] + '/gnupg'\n"
			   "st = os.system('echo planted > planted.txt')\n"
			   "print('R system', st != 0, flush=True)\n",
			   moved));
	st_dump("python3 harness dropping its workspace", &o);
	cr_expect_eq(o.status, 0, "the harness ended with %d", o.status);
	cr_expect(strstr(o.out, "R system True"), "the write did not fail");
	cr_expect(st_has_denied(o.err), "no EACCES or EROFS: %s", o.err);
	cr_expect_neq(access(cf_fx_at(moved, "planted.txt"), F_OK), 0,
		      "the harness's new directory became writable");
	cf_fx_out_free(&o);
	cf_fx_env_free(env);
}

/* HOME is a relocation too (shim/linux/fence_cache.c, the environment snapshot): a harness started without
 * --home whose HOME changes after start (os.environ['HOME'] = ...) gets a
 * fence that denies the secrets under the new home to every child. */
static const char home_script[] =
	"import os, subprocess, sys\n"
	"os.environ['HOME'] = sys.argv[1]\n"
	"key = sys.argv[1] + '/.ssh/id_ed25519'\n"
	"r = subprocess.run(['/bin/cat', key], capture_output=True, text=True)\n"
	"print('R fork', 'EACCES' if 'Permission denied' in r.stderr else 'read:' + r.stdout.strip(), flush=True)\n"
	"r, w = os.pipe()\n"
	"pid = os.posix_spawn('/bin/sh', ['sh', '-c', 'cat \"$HOME/.ssh/id_ed25519\" 2>&1'], dict(os.environ),\n"
	"                     file_actions=[(os.POSIX_SPAWN_DUP2, w, 1)])\n"
	"os.close(w); f = os.fdopen(r); out = f.read(); f.close(); os.waitpid(pid, 0)\n"
	"print('R spawn', 'EACCES' if 'Permission denied' in out else 'read:' + out.strip(), flush=True)\n"
	"st = os.system('cat \"$HOME/.ssh/id_ed25519\" 2>&1 | sed s/^/R-system-/')\n";

Test(shim_env, a_home_changed_after_start_is_denied_to_the_child)
{
	struct cf_fx_out o;
	char home2[PATH_MAX + 32], text[256];
	snprintf(home2, sizeof home2, "%s/home2", t.fx.root);
	snprintf(text, sizeof text, "%s-home2-ssh\n", t.fx.tag);
	cf_fx_write(cf_fx_at(home2, ".ssh/id_ed25519"), text);
	char **env = st_env(&t, NULL);
	/* No --home: the harness's HOME is its home, as for a user's own agent. */
	cf_fx_run(&o, t.fx.ws, env, NULL,
		  CF_ARGV((char *)cf_fx_bin(), "harness", "--workspace", t.fx.ws, "--",
			  "/usr/bin/python3", "-c", (char *)home_script, home2));
	st_dump("python3 harness changing HOME", &o);
	cf_fx_assert_no_marker(&t.fx, &o);
	cr_expect_eq(o.status, 0, "the harness ended with %d", o.status);
	cr_expect(strstr(o.out, "R fork EACCES"), "HOME set later: fork child");
	cr_expect(strstr(o.out, "R spawn EACCES"), "HOME set later: spawned child");
	cr_expect(strstr(o.out, "R-system-") && st_has_denied(o.out),
		  "HOME set later: system()");
	cf_fx_out_free(&o);

	/* Without the shim the same script reads the key: the test can fail. */
	cf_fx_run(&o, t.fx.ws, env, NULL,
		  CF_ARGV("/usr/bin/python3", "-c", (char *)home_script, home2));
	cr_expect(strstr(o.out, "R fork read:") && strstr(o.out, "-home2-ssh"),
		  "free, the key under the new home should be readable:\n%s", o.out);
	cf_fx_out_free(&o);
	cf_fx_env_free(env);
}
