/* The mount namespace of the fenced tree (issues 22 and 23), driven as a
 * user would: credfence run --home FAKE --workspace WS, the workspace a git
 * repository. The protected files of common/protected.h are attacked every
 * way a fenced command could; each attack must fail and leave the file as it
 * was (content and stat), and the user's own git, run afterwards outside the
 * fence, must not run anything planted (no marker). The legit flows still
 * work; metadata outside the writable locations fails with EROFS; with user
 * namespaces off (the test switch CF_TEST_NO_USERNS=1) the supervisor
 * still refuses metadata and write protection is off with a warning. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "enforce_test.h"
#include "mountns/shared_ns.h"
#include "protected.h"

CF_SUITE_STATE()
/* Self mode (LD_PRELOAD, no harness) instead of credfence run. */
static bool self_mode;
/* A child of credfence harness instead: "bash" (a bash harness forks and
 * execs it), "python" (subprocess.run), "python-preexec" (subprocess.run
 * with a preexec_fn that closes every descriptor above 2 one by one),
 * "static" (static_harness.c, built with musl-gcc -static: it closes every
 * descriptor above 2, then forks and execs), "static-core" (the same, the
 * shell given only HOME, PATH, LD_PRELOAD, CREDFENCE_WORKSPACE), or a way
 * of cf-nsharness
 * (fork, vfork, spawn, system, popen, closefds, closerange, clobber, moved,
 * dlnext, reexec). */
static const char *harness_way;
/* One more option of credfence harness (NULL: none). */
static const char *more_opt;

static void setup(void)
{
	cf_suite_setup();
	self_mode = false;
	harness_way = NULL;
	more_opt = NULL;
}

TestSuite(fenced_ns, .init = setup, .fini = cf_suite_teardown, .timeout = 120 * CF_TIMEOUT_SCALE);

/* Run SCRIPT with sh -c in the workspace as a child of credfence harness
 * (OPTS: its options, may be NULL), started the way harness_way says. */
/* The static harness (static_harness.c), built here with musl-gcc into
 * OUT: a static program is what Codex's native harness is. */
static void build_static_harness(char *out, size_t n)
{
	const char *musl = cf_test_require_tool("musl-gcc");
	struct cf_fx_out p = {0};
	cf_fx_fmt(out, n, "%s/static-harness", fx.root);
	cf_fx_run(&p, NULL, NULL, NULL,
		  CF_ARGV((char *)musl, "-static", "-O2", "-o", out, CF_STATIC_HARNESS_SRC));
	cr_assert_eq(p.status, 0, "musl-gcc failed: " OUT_FMT, OUT_ARGS(p));
	cf_fx_out_free(&p);
}

static void harness_child(const char *const *env, const char *opt, const char *script)
{
	static struct argvb b;
	static char stat_prog[PATH_MAX];
	b.n = 0;
	if (!strncmp(harness_way, "static", 6)) {
		build_static_harness(stat_prog, sizeof stat_prog);
		argvb_add(&b, "--static-harness");
	}
	if (opt)
		argvb_add(&b, "%s", opt);
	if (more_opt)
		argvb_add(&b, "%s", more_opt);
	argvb_add(&b, "--");
	if (!strcmp(harness_way, "static") || !strcmp(harness_way, "static-core")) {
		argvb_add(&b, "%s", stat_prog);
		if (!strcmp(harness_way, "static-core"))
			argvb_add(&b, "--core");
	} else if (!strcmp(harness_way, "python-preexec")) {
		/* A Python harness whose preexec_fn closes every descriptor
		 * above 2 one by one (close_fds off: the preexec_fn does it). */
		argvb_add(&b, "/usr/bin/python3");
		argvb_add(&b, "-c");
		argvb_add(&b, "import os, subprocess, sys\n"
			      "def closeall():\n"
			      "    for fd in range(3, 1024):\n"
			      "        try:\n"
			      "            os.close(fd)\n"
			      "        except OSError:\n"
			      "            pass\n"
			      "sys.exit(subprocess.run(['/bin/sh', '-c', sys.argv[1]], close_fds=False, "
			      "preexec_fn=closeall).returncode)");
	} else if (!strcmp(harness_way, "python")) {
		/* A Python harness: subprocess closes every descriptor above 2 in
		 * its child (close_fds=True, by close_range). */
		argvb_add(&b, "/usr/bin/python3");
		argvb_add(&b, "-c");
		argvb_add(&b, "import subprocess, sys\n"
			      "sys.exit(subprocess.run(['/bin/sh', '-c', sys.argv[1]]).returncode)");
	} else if (!strcmp(harness_way, "bash")) {
		/* Not the last command: bash would exec it in place, as the harness. */
		argvb_add(&b, "bash");
		argvb_add(&b, "-c");
		argvb_add(&b, "/bin/sh -c \"$1\"; exit $?");
		argvb_add(&b, "bash");
	} else {
		argvb_add(&b, "%s", CF_NSHARNESS);
		argvb_add(&b, "%s", harness_way);
	}
	argvb_add(&b, "%s", script);
	cf_fx_credfence(&o, &fx, "harness", env, b.v);
}

/* Run SCRIPT with sh -c in the workspace: fenced (credfence run, or self
 * mode) or plain. */
static void sh_fenced(const char *const *env, const char *script)
{
	cf_fx_out_free(&o);
	if (harness_way) {
		harness_child(env, NULL, script);
		return;
	}
	if (!self_mode) {
		fenced(&o, &fx, env, NULL, CF_ARGV("/bin/sh", "-c", (char *)script));
		return;
	}
	char pre[PATH_MAX + 16], home[PATH_MAX + 16], ws[PATH_MAX + 32];
	const char *b = getenv("CREDFENCE_BUILD");
	cr_assert(b && *b, "CREDFENCE_BUILD is not set; run with meson test");
	cf_fx_fmt(pre, sizeof pre, "LD_PRELOAD=%s/shim/libcredfence.so", b);
	cf_fx_fmt(home, sizeof home, "CREDFENCE_HOME=%s", fx.home);
	cf_fx_fmt(ws, sizeof ws, "CREDFENCE_WORKSPACE=%s", fx.ws);
	const char *extra[8] = {pre, home, ws};
	for (size_t i = 0; env && env[i] && i < 4; i++)
		extra[3 + i] = env[i];
	char **e = cf_fx_env(&fx, extra);
	cf_fx_run(&o, fx.ws, e, NULL, CF_ARGV("/bin/sh", "-c", (char *)script));
	cf_fx_env_free(e);
}

static void sh_plain(struct cf_fx_out *out, const char *script)
{
	char **env = cf_fx_env(&fx, (const char *[]){"GIT_CONFIG_NOSYSTEM=1", NULL});
	cf_fx_run(out, fx.ws, env, NULL, CF_ARGV("/bin/sh", "-c", (char *)script));
	cf_fx_env_free(env);
}

/* sh_plain in a child, whose exit status is the script's: the user's own
 * commands outside, run while a fenced command runs. */
static pid_t sh_plain_child(const char *script)
{
	pid_t w = fork();
	cr_assert(w >= 0);
	if (w == 0) {
		struct cf_fx_out p = {0};
		sh_plain(&p, script);
		_exit(p.status);
	}
	return w;
}

/* The workspace as a repository with one commit, a sample hook, .vscode
 * with a settings file, and ~/.npm/_npx with an entry point. */
static void repo(void)
{
	struct cf_fx_out p = {0};
	cf_test_require_tool("git");
	sh_plain(&p, "set -e; git init -q -b main . && git config user.name u && "
		     "git config user.email u@example.invalid && echo one > a.txt && "
		     "mkdir -p .vscode && echo '{}' > .vscode/settings.json && "
		     "echo '#!/bin/sh' > .git/hooks/existing && "
		     "git add a.txt && git commit -qm one && "
		     "mkdir -p \"$HOME/.npm/_npx/abc\" && echo 'exit 0' > \"$HOME/.npm/_npx/abc/entry\"");
	cr_assert_eq(p.status, 0, OUT_FMT, OUT_ARGS(p));
	cf_fx_out_free(&p);
}

/* Content and stat of every protected object, as text. */
static char *snapshot(void)
{
	struct cf_fx_out p = {0};
	sh_plain(&p, "for t in .git/hooks .git/config .vscode \"$HOME/.npm/_npx\"; do "
		     "find \"$t\" -printf '%p %y %m %s %i %T@ %C@\\n' | sort; "
		     "find \"$t\" -type f -exec sha256sum {} + | sort; done");
	cr_assert_eq(p.status, 0, OUT_FMT, OUT_ARGS(p));
	char *s = p.out;
	p.out = NULL;
	cf_fx_out_free(&p);
	return s;
}

/* Each line: an attack; one that succeeds prints "ESCAPED <name>". $K: the
 * fake key; a planted payload would print it. */
static const char attacks[] =
	"K=\"$1\"; P=\"#!/bin/sh\ncat '$K'\"\n"
	"try() { n=$1; shift; if ( \"$@\" ) >/dev/null 2>&1; then echo \"ESCAPED $n\"; fi; }\n"
	"new() { printf '%s\\n' \"$P\" > \"$1\"; }\n"
	"for d in .git/hooks .vscode; do\n"
	"  e=$(find \"$d\" -type f | head -n1)\n"
	"  try \"create $d\" new \"$d/pre-commit\"\n"
	"  try \"write $e\" new \"$e\"\n"
	"  try \"append $e\" sh -c 'printf x >> \"$1\"' - \"$e\"\n"
	"  try \"truncate $e\" truncate -s0 \"$e\"\n"
	"  try \"rename over $e\" sh -c 'echo x > ./tmp.$$ && mv -f ./tmp.$$ \"$1\"' - \"$e\"\n"
	"  try \"rename away $d\" mv \"$d\" \"$d.old\"\n"
	"  try \"unlink $e\" rm -f \"$e\"\n"
	"  try \"rm -r $d\" rm -rf \"$d\"\n"
	"  try \"chmod $e\" chmod 777 \"$e\"\n"
	"  try \"chmod $d\" chmod 777 \"$d\"\n"
	"  try \"symlink in $d\" ln -s /bin/true \"$d/post-checkout\"\n"
	"  try \"hard link of $e\" sh -c 'ln \"$1\" ./hl.$$ && echo x >> ./hl.$$' - \"$e\"\n"
	"  try \"mkdir in $d\" mkdir \"$d/sub\"\n"
	"done\n"
	"c=.git/config\n"
	"try \"write $c\" sh -c 'echo x > .git/config'\n"
	"try \"append $c\" sh -c 'printf \"[core]\\n\\tfsmonitor = cat $1\\n\" >> .git/config' - \"$K\"\n"
	"try \"truncate $c\" truncate -s0 .git/config\n"
	"try \"rename over $c\" sh -c 'cp .git/config ./c.$$ && mv -f ./c.$$ .git/config'\n"
	"try \"rename away $c\" mv .git/config .git/config.old\n"
	"try \"unlink $c\" rm -f .git/config\n"
	"try \"chmod $c\" chmod 666 .git/config\n"
	"try \"symlink then write $c\" sh -c 'ln -sf .git/config ./l.$$ && echo x >> ./l.$$'\n"
	"try \"hard link of $c\" sh -c 'ln .git/config ./h.$$ && echo x >> ./h.$$'\n"
	"try \"rename away .git\" mv .git .git.old\n"
	"try \"rename away .git, then plant\" sh -c 'mv .git .g && mkdir -p .git/hooks'\n"
	"try \"git config core.fsmonitor\" git config core.fsmonitor \"cat $K\"\n"
	"try \"git config core.hooksPath\" git config core.hooksPath /tmp\n"
	"try \"git hook pre-commit\" sh -c 'printf \"%s\\n\" \"$1\" > .git/hooks/pre-commit && "
	"chmod +x .git/hooks/pre-commit' - \"$P\"\n"
	"# ~/.npm/_npx is the fence's own copy (tests/enforce/test_write_holds.c):\n"
	"# writes there go through inside and the snapshot shows none outside.\n"
	"e=$(find \"$HOME/.npm/_npx\" -type f | head -n1)\n"
	"new \"$e\" && new \"$HOME/.npm/_npx/pre-commit\" && rm -rf \"$HOME/.npm/_npx/abc\"\n"
	"echo attacks done\n";

static void attack_and_check(const char *const *env, const char *how)
{
	char script[sizeof attacks + PATH_MAX + 64];
	repo();
	char *before = snapshot();
	cf_fx_fmt(script, sizeof script, "set -- '%s'\n%s", cf_fx_secret(&fx, ".ssh")->key, attacks);
	sh_fenced(env, script);
	cr_assert_eq(o.status, 0, "%s: " OUT_FMT, how, OUT_ARGS(o));
	cr_expect(has_line(o.out, "attacks done"), "%s: " OUT_FMT, how, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "ESCAPED"), "%s: an attack succeeded:\n%s", how, o.out);
	cf_fx_assert_no_marker(&fx, &o);
	char *after = snapshot();
	cr_expect_str_eq(after, before, "%s: a protected object changed", how);
	free(before);
	free(after);
	/* The user's own git, outside the fence, runs nothing planted. */
	struct cf_fx_out p = {0};
	sh_plain(&p, "git status && echo two >> a.txt && git commit -qam two && git log --oneline");
	cr_expect_eq(p.status, 0, OUT_FMT, OUT_ARGS(p));
	cf_fx_assert_no_marker(&fx, &p);
	cf_fx_out_free(&p);
}

Test(fenced_ns, every_attack_on_the_protected_files_fails_from_run)
{
	cf_test_require_landlock();
	attack_and_check(NULL, "credfence run");
}

Test(fenced_ns, every_attack_on_the_protected_files_fails_in_self_mode)
{
	cf_test_require_landlock();
	self_mode = true;
	attack_and_check(NULL, "self mode");
}

Test(fenced_ns, legit_git_flows_work_in_self_mode)
{
	cf_test_require_landlock();
	self_mode = true;
	repo();
	sh_fenced(NULL, "set -e; echo b > b.txt && git add b.txt && git commit -qm b && "
			"git checkout -qb topic && echo c >> a.txt && git stash -q && "
			"git stash pop -q && echo flows ok; chmod 600 \"$HOME/notes.txt\" || true");
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "flows ok"), OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "Read-only file system"), "chmod outside: " OUT_FMT, OUT_ARGS(o));
}

/* The mechanism said so in the log and on stderr: no warning. */
Test(fenced_ns, the_log_says_metadata_by_mounts)
{
	char log[PATH_MAX], opt[PATH_MAX + 8];
	cf_test_require_landlock();
	repo();
	cf_fx_fmt(log, sizeof log, "%s/log.jsonl", fx.root);
	cf_fx_fmt(opt, sizeof opt, "--log=%s", log);
	fenced(&o, &fx, NULL, CF_ARGV(opt), CF_ARGV("/bin/true"));
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.err, "write protection"), OUT_FMT, OUT_ARGS(o));
	char *text = cf_fx_slurp(log);
	cr_assert(text);
	cr_expect(strstr(text, "\"metadata\":\"mounts\""), "%s", text);
	cr_expect(strstr(text, "\"write_protect\":\"on\""), "%s", text);
	cr_expect(!strstr(text, "\"protected\":0,"), "nothing held: %s", text);
	free(text);
}

static void legit_flows(void);

/* What a fenced command legitimately does in a repository still works. */
Test(fenced_ns, legit_git_flows_builds_and_venv_work_inside)
{
	cf_test_require_landlock();
	legit_flows();
}

Test(fenced_ns, legit_git_flows_builds_and_venv_work_in_a_harness_child)
{
	cf_test_require_landlock();
	harness_way = "spawn";
	legit_flows();
}

static void legit_flows(void)
{
	repo();
	const char *py = cf_test_require_tool("/usr/bin/python3");
	cf_test_require_tool("make");
	cf_test_require_tool("cc");
	struct cf_fx_out p = {0};
	sh_plain(&p, "set -e; git init -q --bare ../remote.git && git push -q ../remote.git main && "
		     "git remote add origin ../remote.git");
	cr_assert_eq(p.status, 0, OUT_FMT, OUT_ARGS(p));
	cf_fx_out_free(&p);
	char script[4096];
	cf_fx_fmt(script, sizeof script,
		  "set -e\n"
		  "echo b > b.txt && git add b.txt && git commit -qm b && echo commit ok\n"
		  "git checkout -qb topic && echo checkout ok\n"
		  "echo c >> a.txt && git stash -q && git stash pop -q && echo stash ok\n"
		  "git fetch -q origin && echo fetch ok\n"
		  "mkdir -p proj && cd proj && printf 'int main(void){return 0;}\\n' > m.c && "
		  "printf 'm: m.c\\n\\tcc -o m m.c\\n' > Makefile && make -s && ./m && echo make ok\n"
		  "cd .. && %s -m venv --without-pip venv && ./venv/bin/python -c 'print(1)' && "
		  "echo venv ok\n",
		  py);
	sh_fenced(NULL, script);
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	for (const char *w = "commit\0checkout\0stash\0fetch\0make\0venv\0"; *w; w += strlen(w) + 1)
		cr_expect(has_line(o.out, "%s ok", w), OUT_FMT, OUT_ARGS(o));
}

/* Outside the writable locations every metadata change fails with EROFS
 * and changes nothing; inside, tar -xp and cp -a keep modes and times like
 * a plain run. */
Test(fenced_ns, metadata_outside_is_erofs_inside_it_is_kept)
{
	cf_test_require_landlock();
	const char *py = cf_test_require_tool("/usr/bin/python3");
	cf_test_require_tool("tar");
	char notes[PATH_MAX], script[4 * PATH_MAX];
	cf_fx_fmt(notes, sizeof notes, "%s/notes.txt", fx.home);
	struct stat before, after;
	cr_assert_eq(stat(notes, &before), 0);
	cf_fx_fmt(script, sizeof script,
		  "%s - '%s' <<'EOF'\n"
		  "import errno, os, sys\n"
		  "p = sys.argv[1]\n"
		  "calls = [('chmod', lambda: os.chmod(p, 0o600)),\n"
		  "         ('chown', lambda: os.chown(p, os.getuid(), os.getgid())),\n"
		  "         ('utime', lambda: os.utime(p, (1, 1))),\n"
		  "         ('setxattr', lambda: os.setxattr(p, 'user.cf', b'x')),\n"
		  "         ('removexattr', lambda: os.removexattr(p, 'user.cf'))]\n"
		  "for name, f in calls:\n"
		  "    try:\n"
		  "        f(); print(name, 'OK')\n"
		  "    except OSError as e:\n"
		  "        print(name, errno.errorcode[e.errno])\n"
		  "EOF\n"
		  "mkdir -p src/d && echo x > src/d/f && chmod 0741 src/d/f && chmod 0705 src/d && "
		  "touch -d 2001-02-03T04:05:06 src/d/f src/d && tar -cf t.tar -C src d && "
		  "mkdir x && tar -xpf t.tar -C x && cp -a src c && "
		  "stat -c '%%n %%a %%Y' x/d x/d/f c/d c/d/f\n",
		  py, notes);
	sh_fenced(NULL, script);
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	for (const char *c = "chmod\0chown\0utime\0setxattr\0removexattr\0"; *c; c += strlen(c) + 1)
		cr_expect(has_line(o.out, "%s EROFS", c), "%s: " OUT_FMT, c, OUT_ARGS(o));
	cr_assert_eq(stat(notes, &after), 0);
	cr_expect(before.st_mode == after.st_mode && before.st_mtim.tv_sec == after.st_mtim.tv_sec &&
		  before.st_ctim.tv_nsec == after.st_ctim.tv_nsec, "notes.txt changed");
	/* 2001-02-03T04:05:06 in the local zone, as touch -d took it. */
	struct cf_fx_out p = {0};
	sh_plain(&p, "date -d 2001-02-03T04:05:06 +%s");
	cr_assert_eq(p.status, 0);
	long t = atol(p.out);
	cf_fx_out_free(&p);
	cr_expect(has_line(o.out, "x/d 705 %ld", t), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "x/d/f 741 %ld", t), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "c/d 705 %ld", t), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "c/d/f 741 %ld", t), OUT_FMT, OUT_ARGS(o));
}

/* Devices, FIFOs and ptys on a read-only mount still open for writing (the
 * kernel takes a mount's write access only for regular files and
 * directories): a FIFO inside a read-only bind, /dev/null, a new pty. */
Test(fenced_ns, devices_fifos_and_ptys_on_read_only_mounts_still_work)
{
	cf_test_require_landlock();
	const char *py = cf_test_require_tool("/usr/bin/python3");
	repo();
	cr_assert_eq(mkfifo(cf_fx_at(fx.ws, ".vscode/fifo"), 0600), 0);
	char script[2 * PATH_MAX];
	cf_fx_fmt(script, sizeof script,
		  "echo x > /dev/null && echo null ok\n"
		  "(cat .vscode/fifo > /dev/null &) ; echo y > .vscode/fifo && echo fifo ok\n"
		  "%s -c 'import os,pty; m,s=pty.openpty(); os.write(s,b\"z\"); "
		  "print(\"pty\", os.read(m,1).decode())'\n",
		  py);
	sh_fenced(NULL, script);
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "null ok"), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "fifo ok"), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "pty z"), OUT_FMT, OUT_ARGS(o));
}

/* No process inside the fence can make a mount writable again: not with
 * mount_setattr (which Landlock does not refuse), umount, a remount or
 * move_mount, and not from a new user namespace of its own (its mounts are
 * copied locked). As root too: root keeps its capabilities over exec, so
 * the namespace took CAP_SYS_ADMIN from it. */
static void no_mount_made_writable(void);

Test(fenced_ns, no_process_inside_can_make_a_mount_writable)
{
	cf_test_require_landlock();
	no_mount_made_writable();
}

/* A harness child is in a user namespace the guard's helper made, whose
 * owner is the harness's user: it gave up the capabilities setns gave it. */
Test(fenced_ns, no_harness_child_can_make_a_mount_writable)
{
	cf_test_require_landlock();
	harness_way = "fork";
	no_mount_made_writable();
}

static void no_mount_made_writable(void)
{
	const char *py = cf_test_require_tool("/usr/bin/python3");
	repo();
	char script[4 * PATH_MAX];
	cf_fx_fmt(script, sizeof script,
		  "%s - <<'EOF'\n"
		  "import ctypes, os\n"
		  "libc = ctypes.CDLL(None, use_errno=True)\n"
		  "class Attr(ctypes.Structure):\n"
		  "    _fields_ = [('set', ctypes.c_uint64), ('clr', ctypes.c_uint64),\n"
		  "                ('prop', ctypes.c_uint64), ('userns', ctypes.c_uint64)]\n"
		  "def res(r):\n"
		  "    return 'OK' if r == 0 else os.strerror(ctypes.get_errno())\n"
		  "def tries(tag):\n"
		  "    for p in (b'/', b'.git/hooks', b'.git/config'):\n"
		  "        a = Attr(0, 1, 0, 0)\n"
		  "        r = libc.syscall(442, -100, p, 0x8000, ctypes.byref(a), 32)\n"
		  "        print(tag, 'mount_setattr', p.decode(), res(r))\n"
		  "        print(tag, 'umount', p.decode(), res(libc.umount2(p, 2)))\n"
		  "        print(tag, 'remount', p.decode(),\n"
		  "              res(libc.mount(None, p, None, 32 | 4096, None)))\n"
		  "    t = libc.syscall(428, -100, b'.git/hooks', 1 | 0x80000)\n"
		  "    r = libc.syscall(429, t, b'', -100, b'/tmp', 4) if t >= 0 else -1\n"
		  "    print(tag, 'move_mount', res(r))\n"
		  "tries('fence')\n"
		  "try:\n"
		  "    open('.git/config', 'a').write('x'); print('write OK')\n"
		  "except OSError as e:\n"
		  "    print('write', e.strerror)\n"
		  "if libc.unshare(0x10000000 | 0x20000) == 0:\n"
		  "    tries('userns')\n"
		  "EOF\n",
		  py);
	sh_fenced(NULL, script);
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "write Read-only file system"), OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, " OK"), "a mount was changed:\n%s", o.out);
	cr_expect(strstr(o.out, "fence mount_setattr / "), OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.out, "userns mount_setattr / "), OUT_FMT, OUT_ARGS(o));
}

/* With user namespaces off: metadata is still refused, by the supervisor;
 * write protection is off, and a warning says so. */
Test(fenced_ns, without_user_namespaces_the_supervisor_refuses_metadata)
{
	cf_test_require_landlock();
	repo();
	char script[2 * PATH_MAX];
	cf_fx_fmt(script, sizeof script,
		  "chmod 600 '%s/notes.txt' || echo chmod refused\n"
		  "chmod 600 a.txt && echo chmod inside ok\n"
		  "echo x > .git/hooks/pre-commit && echo hook written\n",
		  fx.home);
	cf_test_require_userns_switch();
	sh_fenced((const char *[]){"CF_TEST_NO_USERNS=1", NULL}, script);
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "chmod refused"), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "chmod inside ok"), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "hook written"), "the documented fallback: " OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "credfence: write protection is off: unshare("),
		  OUT_FMT, OUT_ARGS(o));
	struct stat st;
	cr_assert_eq(stat(cf_fx_at(fx.home, "notes.txt"), &st), 0);
	cr_expect_neq(st.st_mode & 0777, 0600);
}

/* --write-protect=require refuses (125) when the namespace can not be made;
 * the words tell it from an unknown flag's 125. */
Test(fenced_ns, write_protect_require_refuses_without_user_namespaces)
{
	cf_test_require_landlock();
	repo();
	cf_test_require_userns_switch();
	fenced(&o, &fx, (const char *[]){"CF_TEST_NO_USERNS=1", NULL},
	       CF_ARGV("--write-protect=require"), CF_ARGV("/bin/sh", "-c", "echo ran"));
	cr_expect_eq(o.status, 125, OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "credfence: write protection can not be made"), OUT_FMT,
		  OUT_ARGS(o));
	cr_expect(!strstr(o.out, "ran"), OUT_FMT, OUT_ARGS(o));
}

/* A mount step of the namespace fails (seccomp-fault refuses that one
 * system call with EPERM, as a kernel or a container policy may). Up to the
 * read-only step nothing the command could see has changed: it runs, with
 * the warning and the step's words. After it (a writable location not put
 * back, /proc first) the process is left in a half-made namespace, read-only
 * where it should not be: run refuses, and nothing runs there. */
static void faulted(const char *sub, const char *fault, const char *script)
{
	char **env = cf_fx_env(&fx, NULL);
	cf_fx_out_free(&o);
	cf_fx_run(&o, fx.ws, env, NULL,
		  CF_ARGV(CF_SECCOMP_FAULT, (char *)fault, (char *)cf_fx_bin(), (char *)sub, "--home",
			  fx.home, "--workspace", fx.ws, "--", "/bin/bash", "-c", (char *)script));
	cf_fx_env_free(env);
}

/* credfence run of SCRIPT in a repository, with system call NR refused. */
static void run_with_fault(int nr, const char *script)
{
	char fault[64];
	cf_test_require_landlock();
	repo();
	cf_fx_fmt(fault, sizeof fault, "SYS=%d,%d", nr, EPERM);
	faulted("run", fault, script);
}

/* The command ran, with write protection off for WHY. */
static void expect_ran_unprotected(const char *why)
{
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, why), OUT_FMT, OUT_ARGS(o));
}

Test(fenced_ns, a_failed_read_only_step_runs_with_the_warning)
{
	run_with_fault(SYS_mount_setattr, "echo cmd-ran; echo x > .git/hooks/planted && echo wrote");
	expect_ran_unprotected("credfence: write protection is off: can not make the mounts "
			       "read-only: Operation not permitted;");
	cr_expect(has_line(o.out, "cmd-ran") && has_line(o.out, "wrote"),
		  "the documented fallback: " OUT_FMT, OUT_ARGS(o));
}

/* The first mount step, making every mount of the new namespace a slave of
 * the outside (mount(2) with MS_SLAVE|MS_REC), is refused: nothing has
 * changed yet, so the command runs, and the warning names that step. */
Test(fenced_ns, a_refused_mount_says_the_mounts_can_not_be_made_private)
{
	run_with_fault(SYS_mount, "echo cmd-ran");
	expect_ran_unprotected("credfence: write protection is off: can not make the mounts "
			       "private: Operation not permitted");
	cr_expect(has_line(o.out, "cmd-ran"), OUT_FMT, OUT_ARGS(o));
}

Test(fenced_ns, a_writable_location_not_put_back_runs_nothing)
{
	run_with_fault(SYS_move_mount, "echo cmd-ran; echo x > ran.txt");
	cr_expect_eq(o.status, 125, OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "cmd-ran"), OUT_FMT, OUT_ARGS(o));
	struct stat st;
	cr_expect_neq(stat(cf_fx_at(fx.ws, "ran.txt"), &st), 0, "the command ran");
	cr_expect(strstr(o.err, "credfence: the mount namespace of the fenced tree failed "
				"half-way: can not put the writable location /proc back: Operation "
				"not permitted. Nothing was run."),
		  OUT_FMT, OUT_ARGS(o));
	cr_expect(all_lines_credfence(o.err), OUT_FMT, OUT_ARGS(o));
}

/* The helper that makes a harness's namespace is refused its user namespace:
 * the harness runs with the warning, and the words say which refusal it
 * was. EINVAL is the kernel's answer to a process of more than one thread
 * (a sanitizer's runtime in credfence); anything else is user namespaces
 * being off. Only unshare with CLONE_NEWUSER is refused: as root the
 * guard's own unshare, of a mount namespace alone, goes through. Any other
 * user's guard needs a user namespace too and fails first (its own words,
 * tested elsewhere), so this runs as root only: the root run of CI. */
static void harness_without_its_user_namespace(int err, const char *says)
{
	char fault[64];
	if (geteuid() != 0)
		cf_test_skip("only root's guard makes no user namespace of its own, so only "
			     "root's keep helper can be refused one alone");
	cf_test_require_landlock();
	repo();
	cf_fx_fmt(fault, sizeof fault, "SYS=%d,%d,%#x", SYS_unshare, err, CLONE_NEWUSER);
	faulted("harness", fault, "/bin/echo ran; exit 0");
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "ran"), OUT_FMT, OUT_ARGS(o));
	char want[1024];
	cf_fx_fmt(want, sizeof want,
		  "credfence: warning: harness: write protection is off for the harness's children: "
		  "unshare(CLONE_NEWUSER|CLONE_NEWNS) failed: %s%s",
		  strerror(err), says);
	cr_expect(strstr(o.err, want), "want: %s\n" OUT_FMT, want, OUT_ARGS(o));
}

Test(fenced_ns, a_harness_refused_user_namespaces_says_they_are_off)
{
	/* The refusal comes from a seccomp filter (seccomp-fault), and the words
	 * name that cause (issue 33: each cause its own words). */
	harness_without_its_user_namespace(EPERM, ": a seccomp filter refuses unshare (");
}

Test(fenced_ns, a_harness_refused_for_its_threads_says_so)
{
	harness_without_its_user_namespace(EINVAL, ": the kernel gives a user namespace only to a "
						   "process of one thread");
}

/* A harness whose descriptor table is full when its shim adopts the
 * namespace's two descriptors (cf_shared_ns_adopt moves each to a high
 * number: half the limit and up, so 0 and up under a limit of 1). FULL: no
 * slot free, so the first move fails with EMFILE and frees its slot, and
 * the second succeeds into it (under a limit of 1 the user namespace's
 * descriptor is given at 0, the only slot, and the mount namespace's
 * lands there). Else one slot is free (under a limit of 1, descriptor 0)
 * and the two descriptors lie above the limit LIMIT (it was lowered after
 * they were opened), so a move frees no slot below it: the first move
 * takes the free one and the second fails. Either way the harness goes on
 * without the namespace (its children fall back, with the reason) and
 * keeps no descriptor of it: not the one it moved, not the two it was
 * given. Run in a child: the limit stays there. */
static void adopt_with_a_full_table(int report, bool full, rlim_t limit)
{
	char msg[600] = "ok";
	struct stat us, ms, st;
	int ufd = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
	int mfd = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	if (ufd < 0 || mfd < 0 || fstat(ufd, &us) || fstat(mfd, &ms))
		_exit(2);
	if (!full || limit == 1) {
		int to = full ? 0 : 100;
		if (dup3(ufd, to, O_CLOEXEC) != to || dup3(mfd, 101, O_CLOEXEC) != 101)
			_exit(2);
		close(ufd);
		close(mfd);
		ufd = to;
		mfd = 101;
	}
	char value[256], buf[256];
	snprintf(value, sizeof value, "%d,%d,%llu,%llu,%llu,0,0,-1,0", ufd, mfd,
		 (unsigned long long)us.st_ino, (unsigned long long)ms.st_ino,
		 (unsigned long long)us.st_dev);
	struct rlimit lim = {limit, limit};
	if (setrlimit(RLIMIT_NOFILE, &lim))
		_exit(3);
	int fill[64], n = 0, fd;
	while (n < 64 && (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
		fill[n++] = fd;
	if (errno != EMFILE)
		_exit(4);
	if (!full && n)
		close(fill[--n]);
	else if (!full)
		close(0); /* a limit of 1: stdin's slot */
	struct cf_shared_ns k;
	const char *v = cf_shared_ns_adopt(&k, value, CF_WRITE_PROTECT_WARN, buf, sizeof buf);
	while (n)
		close(fill[--n]);
	if (v || k.user_fd >= 0 || k.mnt_fd >= 0)
		snprintf(msg, sizeof msg, "adopted with a full table: %s (fds %d %d)", v ? v : "",
			 k.user_fd, k.mnt_fd);
	else if (!strstr(k.off_why, "can not move its descriptors"))
		snprintf(msg, sizeof msg, "another reason: %s", k.off_why);
	for (fd = 0; fd < 128 && !strcmp(msg, "ok"); fd++)
		if (fd != report && !fstat(fd, &st) && st.st_dev == us.st_dev &&
		    (st.st_ino == us.st_ino || st.st_ino == ms.st_ino))
			snprintf(msg, sizeof msg, "descriptor %d still holds the %s namespace", fd,
				 st.st_ino == us.st_ino ? "user" : "mount");
	(void)!write(report, msg, strlen(msg));
	_exit(0);
}

static void adopt_out_of_descriptors(bool full, rlim_t limit)
{
	int p[2];
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		adopt_with_a_full_table(p[1], full, limit);
	}
	close(p[1]);
	char got[640] = "";
	ssize_t n = read(p[0], got, sizeof got - 1);
	got[n > 0 ? n : 0] = '\0';
	close(p[0]);
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child's step %d failed",
		  WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st));
	cr_expect_str_eq(got, "ok");
}

Test(fenced_ns, a_harness_out_of_descriptors_keeps_none_of_the_namespace)
{
	adopt_out_of_descriptors(true, 64);
}

Test(fenced_ns, a_harness_with_room_for_one_move_keeps_none_of_the_namespace)
{
	adopt_out_of_descriptors(false, 64);
}

Test(fenced_ns, a_harness_with_one_descriptor_keeps_none_of_the_namespace)
{
	adopt_out_of_descriptors(false, 1);
	adopt_out_of_descriptors(true, 1);
}

/* The user's own `git config` outside replaces .git/config by rename, and
 * the kernel detaches every mount on the old dentry, in every namespace
 * (SECURITY.md: a long-lived fenced process can write the new file). A run
 * started afterwards holds the new file again: the namespace is made at
 * each launch. */
Test(fenced_ns, a_run_after_the_user_renamed_config_over_holds_it_again)
{
	cf_test_require_landlock();
	repo();
	struct cf_fx_out p = {0};
	sh_plain(&p, "git config user.name renamed-over && git config user.name");
	cr_assert_eq(p.status, 0, OUT_FMT, OUT_ARGS(p));
	cf_fx_out_free(&p);
	char *before = snapshot();
	sh_fenced(NULL, "printf '[core]\\n\\tfsmonitor = x\\n' >> .git/config && echo WROTE; "
			"git config core.hooksPath /tmp && echo SET; echo done");
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "done") && !strstr(o.out, "WROTE") && !strstr(o.out, "SET"),
		  OUT_FMT, OUT_ARGS(o));
	char *after = snapshot();
	cr_expect_str_eq(after, before);
	free(before);
	free(after);
}

/* Every attack from a child of credfence harness started the way WAY says,
 * with ENV. */
static void attack_from(const char *way, const char *const *env, const char *how)
{
	cf_test_require_landlock();
	harness_way = way;
	attack_and_check(env, how);
}

/* A test named NAME of every attack from a harness child started by WAY
 * (the name stays whole for the skip lists of scripts/). */
#define ATTACK_TEST(name, way, how)            \
	Test(fenced_ns, name)                  \
	{                                      \
		attack_from(way, NULL, how);   \
	}

/* From a child of credfence harness, on each launch path the shim
 * intercepts: the namespace the harness's guard made holds every row. */
ATTACK_TEST(every_attack_fails_from_a_bash_harness_child, "bash", "a bash harness's child")

ATTACK_TEST(every_attack_fails_from_a_fork_execve_harness_child, "fork", "fork+execve")

ATTACK_TEST(every_attack_fails_from_a_vfork_harness_child, "vfork", "vfork+execve")

ATTACK_TEST(every_attack_fails_from_a_posix_spawn_harness_child, "spawn", "posix_spawn")

ATTACK_TEST(every_attack_fails_from_a_system_harness_child, "system", "system()")

/* A harness that closes every descriptor in its child with close_range
 * (CPython's close_fds) keeps the namespace for it: the shim closes around
 * the namespace's descriptors. Before, such a child fell back to the read
 * fence alone, and the hook and config attacks got through. */
ATTACK_TEST(every_attack_fails_from_a_close_range_harness_child,
	    "closerange", "fork+close_range+execve")

ATTACK_TEST(every_attack_fails_from_a_python_subprocess_harness_child,
	    "python", "python subprocess.run")

/* A harness that closed every descriptor above 2 in itself (a daemon's
 * start) holds other files at the numbers of the shim's own (the fence's
 * ruleset, its watch) once it opens more: the shim, replacing its fence,
 * must not close them under it (it closed popen's pipe: EBADF). */
Test(fenced_ns, a_harness_that_closed_every_descriptor_keeps_its_own_new_ones)
{
	cf_test_require_landlock();
	repo();
	harness_way = "popen";
	harness_child((const char *[]){"CF_T_CLOSE_FIRST=1", NULL}, NULL, "echo ran by popen");
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "ran by popen"), OUT_FMT, OUT_ARGS(o));
}

/* Issue 31: every fenced child gets the namespace, whatever its harness did
 * with the descriptors: a child that lost them gets them from the
 * supervisor, over the connection whose peer it checks. Before, each of
 * these ran with write protection off (the default warned, in the model's
 * tool output only), and the hook, config and tasks.json attacks got
 * through. */
Test(fenced_ns, every_attack_fails_from_a_harness_child_whose_descriptors_were_closed)
{
	attack_from("closefds", NULL, "fork+close each+execve");
	cr_expect(!strstr(o.err, "write protection"), OUT_FMT, OUT_ARGS(o));
}

ATTACK_TEST(every_attack_fails_from_a_harness_child_whose_descriptors_were_replaced,
	    "clobber", "fork+dup2 over them+execve")

Test(fenced_ns, every_attack_fails_from_a_python_preexec_fn_that_closes_every_descriptor)
{
	cf_test_require_tool("/usr/bin/python3");
	attack_from("python-preexec", NULL, "python subprocess.run, preexec_fn closing 3..1023");
}

/* A launch the shim does not see: /bin/sh fences itself (self mode) and
 * enters the harness's namespace, from the supervisor. */
ATTACK_TEST(every_attack_fails_from_a_dlsym_rtld_next_execve_harness_child,
	    "dlnext", "fork+dlsym(RTLD_NEXT, execve)")

/* A static harness (Codex's native program is one) that keeps only 0-2. */
Test(fenced_ns, every_attack_fails_from_a_static_harness_that_keeps_only_0_to_2)
{
	attack_from("static", NULL, "a static harness, fds above 2 closed");
	cr_expect(!strstr(o.err, "write protection is off"), OUT_FMT, OUT_ARGS(o));
}

/* The same harness passing its shell only a few variables (Codex's
 * inherit = "core" with credfence's set line): the shell finds the
 * harness's supervisor among its ancestors. */
Test(fenced_ns, every_attack_fails_from_a_static_harness_that_passes_few_variables)
{
	attack_from("static-core", NULL, "a static harness, fds above 2 closed, core variables only");
	cr_expect(!strstr(o.err, "write protection is off"), OUT_FMT, OUT_ARGS(o));
}

/* The harness relaunching itself after it closed every descriptor: its new
 * image takes them back from the supervisor. */
ATTACK_TEST(every_attack_fails_from_a_harness_relaunched_without_its_descriptors,
	    "reexec", "the harness relaunched without them, then fork")

/* The supervisor gives the descriptors only to a process outside the
 * namespace (a child that lost them asks from the harness's own mount
 * namespace): a process inside it, which could use the user namespace's
 * capabilities, is refused. A fenced child does not even reach it where
 * Landlock scopes abstract sockets (ABI 6: EACCES); the harness itself
 * gets them, and once it has entered the namespace by them, no more. */
Test(fenced_ns, the_supervisor_gives_the_namespace_to_no_process_inside_it)
{
	cf_test_require_landlock();
	repo();
	harness_way = "fork";
	harness_child(NULL, NULL, CF_NSASK);
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "REFUSED EALREADY") || has_line(o.out, "REFUSED EACCES"),
		  OUT_FMT, OUT_ARGS(o));
	cf_fx_out_free(&o);
	cf_fx_credfence(&o, &fx, "harness", NULL, CF_ARGV("--", CF_NSASK, "enter"));
	cr_expect_eq(o.status, 1, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "GOT 3"), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "REFUSED EALREADY"), OUT_FMT, OUT_ARGS(o));
}

/* Only the harness's keeper (the process the supervisor forked, which
 * becomes the harness) gives the supervisor a namespace, and only once: the
 * harness itself finds it given already by its guard (EEXIST), and a
 * program the harness starts as itself (--harness-program: unfenced, a
 * descendant of the supervisor, so it reaches it) is refused as not the
 * keeper (EPERM), so no process but the guard could swap in a namespace
 * of its own making. Each answer is the supervisor's (seed 41's
 * sup_handover.c:193, the refusal made 0, and ipc.c:1013, the answer not
 * read: both say "GIVEN"). */
Test(fenced_ns, only_the_keeper_gives_the_supervisor_a_namespace)
{
	cf_test_require_landlock();
	repo();
	cf_fx_credfence(&o, &fx, "harness", NULL, CF_ARGV("--", CF_NSASK, "give"));
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "GIVE REFUSED EEXIST"), OUT_FMT, OUT_ARGS(o));
	cf_fx_out_free(&o);
	/* A --harness-program must lie outside every writable location: the
	 * build tree may be under /tmp (CI clones there), so a copy in the
	 * fixture's root. */
	const char *ask = cf_fx_helper_for(&fx, CF_NSASK, getuid(), getgid());
	char line[PATH_MAX + 64];
	snprintf(line, sizeof line, "'%s' give; echo status=$?", ask);
	cf_fx_credfence(&o, &fx, "harness", NULL,
			CF_ARGV("--harness-program", (char *)ask, "--", "/bin/sh", "-c", line));
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "GIVE REFUSED EPERM") && has_line(o.out, "status=0"), OUT_FMT,
		  OUT_ARGS(o));
}

/* Without a keeper (its socket pair refused: seccomp-fault), the guard
 * gives the supervisor the namespace's two descriptors alone. A harness
 * relaunched without its descriptors takes them back from the supervisor,
 * and with them no keeper: not descriptor 0. Its own exec that then fails
 * (a file without #!) passes its kept descriptors back to close-on-exec,
 * and must leave its standard input alone: a child it starts afterwards
 * still has one (seed 41's shared_ns.c:520, `-1` made `-0`: the keeper
 * taken for descriptor 0, made close-on-exec, and every later child
 * started without a standard input). */
Test(fenced_ns, a_harness_that_recovers_no_keeper_keeps_its_standard_input)
{
	char noshebang[PATH_MAX], nsv[PATH_MAX + 32], fault[64];
	cf_test_require_landlock();
	repo();
	cf_fx_fmt(noshebang, sizeof noshebang, "%s/no-shebang", fx.root);
	cf_fx_write(noshebang, "echo ran\n");
	cr_assert_eq(chmod(noshebang, 0755), 0);
	cf_fx_fmt(nsv, sizeof nsv, "CF_T_NOSHEBANG=%s", noshebang);
	cf_fx_fmt(fault, sizeof fault, "SYS=%d,%d", SYS_socketpair, EPERM);
	char **env = cf_fx_env(&fx, (const char *[]){nsv, NULL});
	cf_fx_out_free(&o);
	cf_fx_run(&o, fx.ws, env, NULL,
		  CF_ARGV(CF_SECCOMP_FAULT, fault, (char *)cf_fx_bin(), "harness", "--home", fx.home,
			  "--workspace", fx.ws, "--", CF_NSHARNESS, "reexec-failexec",
			  "if [ -e /proc/$$/fd/0 ]; then echo STDIN-OPEN; else echo STDIN-CLOSED; fi; "
			  "echo \"NS=$CREDFENCE_FENCED_NS\""));
	cf_fx_env_free(env);
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	/* The control: the relaunch took the namespace back, with no keeper
	 * (its number -1 in the variable the harness's shim rewrote). */
	cr_expect(strstr(o.out, "\nNS=00") && strstr(o.out, ",-0001,0\n"), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "FAILEXEC ENOEXEC"), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "STDIN-OPEN"), OUT_FMT, OUT_ARGS(o));
}

/* A harness that closed them in itself before each way in: every launch
 * path gets the namespace from the supervisor. */
static void closed_first(const char *way, const char *how)
{
	attack_from(way, (const char *[]){"CF_T_CLOSE_FIRST=1", NULL}, how);
}

#define CLOSED_FIRST_TEST(name, way, how) \
	Test(fenced_ns, name)             \
	{                                 \
		closed_first(way, how);   \
	}

CLOSED_FIRST_TEST(every_attack_fails_from_a_fork_child_of_a_harness_that_closed_them,
	    "fork", "closed first, fork+execve")

CLOSED_FIRST_TEST(every_attack_fails_from_a_vfork_child_of_a_harness_that_closed_them,
	    "vfork", "closed first, vfork+execve")

CLOSED_FIRST_TEST(every_attack_fails_from_a_posix_spawn_child_of_a_harness_that_closed_them,
	    "spawn", "closed first, posix_spawn")

CLOSED_FIRST_TEST(every_attack_fails_from_a_system_child_of_a_harness_that_closed_them,
	    "system", "closed first, system()")

CLOSED_FIRST_TEST(every_attack_fails_from_a_popen_child_of_a_harness_that_closed_them,
	    "popen", "closed first, popen()")

/* A child whose environment moves a secret (KUBECONFIG) is relaunched by
 * the shim through credfence run, which runs inside the harness's guard and
 * can make no mount: it enters the namespace the guard made. MOVED: the
 * variable for cf-nsharness's "moved" way, the file it names holding a
 * marker that only the relaunched fence denies (proof of the relaunch). */
static const char *moved_env(char *moved, size_t n)
{
	cf_fx_fmt(moved, n, "CF_T_MOVED=%s/moved-kube", fx.root);
	FILE *k = fopen(moved + strlen("CF_T_MOVED="), "w");
	cr_assert(k);
	fputs("MOVED-KUBE-MARKER\n", k);
	fclose(k);
	return moved;
}

Test(fenced_ns, every_attack_fails_from_a_relaunched_harness_child)
{
	char moved[PATH_MAX + 32];
	cf_test_require_landlock();
	harness_way = "moved";
	attack_and_check((const char *[]){moved_env(moved, sizeof moved), NULL},
			 "a relaunched harness child");
	cr_expect(!strstr(o.err, "write protection is off"), OUT_FMT, OUT_ARGS(o));
}

static const char relaunch_script[] =
	"cat \"$KUBECONFIG\" || echo kube denied\n"
	"echo x >> .git/config && echo config written\n"
	"echo x > .git/hooks/pre-commit && echo hook written\n"
	"true\n";

static void relaunched(const char *no_userns, bool held)
{
	char log[PATH_MAX], opt[PATH_MAX + 8], moved[PATH_MAX + 32];
	repo();
	char *before = snapshot();
	harness_way = "moved";
	cf_fx_fmt(log, sizeof log, "%s/log.jsonl", fx.root);
	cf_fx_fmt(opt, sizeof opt, "--log=%s", log);
	harness_child((const char *[]){moved_env(moved, sizeof moved), no_userns, NULL}, opt,
		      relaunch_script);
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	/* Relaunched: the fence built from the child's environment denies it. */
	cr_expect(has_line(o.out, "kube denied"), OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "MOVED-KUBE-MARKER"), OUT_FMT, OUT_ARGS(o));
	char *after = snapshot();
	char *text = cf_fx_slurp(log);
	cr_assert(text);
	if (held) {
		cr_expect(!strstr(o.out, "config written"), OUT_FMT, OUT_ARGS(o));
		cr_expect(!strstr(o.out, "hook written"), OUT_FMT, OUT_ARGS(o));
		cr_expect_str_eq(after, before, "a protected object changed");
		cr_expect(!strstr(o.err, "write protection is off"), OUT_FMT, OUT_ARGS(o));
		cr_expect(strstr(text, "\"metadata\":\"mounts\""), "%s", text);
		cr_expect(!strstr(text, "\"metadata\":\"supervisor\""), "%s", text);
		cr_expect(strstr(text, "\"write_protect\":\"on\""), "%s", text);
	} else {
		/* The documented fallback: warned, and the files stay writable. */
		cr_expect(has_line(o.out, "config written"), OUT_FMT, OUT_ARGS(o));
		cr_expect(has_line(o.out, "hook written"), OUT_FMT, OUT_ARGS(o));
		cr_expect(strstr(o.err, "credfence: write protection is off: unshare("),
			  OUT_FMT, OUT_ARGS(o));
		cr_expect(strstr(text, "\"metadata\":\"supervisor\""), "%s", text);
	}
	free(text);
	free(before);
	free(after);
	cf_fx_assert_no_marker(&fx, &o);
}

Test(fenced_ns, a_relaunched_harness_child_enters_the_harness_namespace)
{
	cf_test_require_landlock();
	relaunched(NULL, true);
}

Test(fenced_ns, a_relaunched_harness_child_without_user_namespaces_warns)
{
	cf_test_require_landlock();
	cf_test_require_userns_switch();
	relaunched("CF_TEST_NO_USERNS=1", false);
}

/* --allow-write-protected of a file inside a protected directory: that
 * file stays writable in place (a writable bind of it on top of the row's
 * read-only bind), the rest of the row does not, new files included; and
 * credfence check says the same. WAY: NULL (credfence run) or a harness
 * way. Each write prints "NAME written" or "NAME erofs". */
static const char lift_script[] =
	"try() { n=$1; shift; if r=$( (\"$@\") 2>&1 ); then echo \"$n written\"; else\n"
	"  case $r in *'Read-only file system'*) echo \"$n erofs\";; *) echo \"$n: $r\";; esac; fi; }\n"
	"try settings sh -c 'echo x >> .vscode/settings.json'\n"
	"try tasks sh -c 'echo x > .vscode/tasks.json'\n"
	"try other sh -c 'echo x >> .vscode/other.json'\n"
	"try sed-i sed -i s/x/y/ .vscode/settings.json\n";

static void lift_inside(const char *way, bool lift)
{
	const char *opt = lift ? "--allow-write-protected=.vscode/settings.json" : NULL;
	repo();
	cf_fx_write(cf_fx_at(fx.ws, ".vscode/other.json"), "{\"o\":1}\n");
	char *before = snapshot();
	harness_way = way;
	cf_fx_out_free(&o);
	if (way)
		harness_child(NULL, opt, lift_script);
	else
		fenced(&o, &fx, NULL, (char *[]){(char *)opt, NULL},
		       CF_ARGV("/bin/sh", "-c", (char *)lift_script));
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.err, "write protection is off"), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, lift ? "settings written" : "settings erofs"), OUT_FMT,
		  OUT_ARGS(o));
	cr_expect(has_line(o.out, "tasks erofs"), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "other erofs"), OUT_FMT, OUT_ARGS(o));
	/* A save by rename (a temporary file in the row): refused. */
	cr_expect(has_line(o.out, "sed-i erofs"), OUT_FMT, OUT_ARGS(o));
	char *settings = cf_fx_slurp(cf_fx_at(fx.ws, ".vscode/settings.json"));
	char *other = cf_fx_slurp(cf_fx_at(fx.ws, ".vscode/other.json"));
	cr_assert(settings && other);
	cr_expect_str_eq(settings, lift ? "{}\nx\n" : "{}\n");
	cr_expect_str_eq(other, "{\"o\":1}\n");
	struct stat st;
	cr_expect(lstat(cf_fx_at(fx.ws, ".vscode/tasks.json"), &st) != 0);
	if (!lift) {
		char *after = snapshot();
		cr_expect_str_eq(after, before, "a protected object changed");
		free(after);
	}
	free(settings);
	free(other);
	free(before);
	cf_fx_assert_no_marker(&fx, &o);

	/* credfence check agrees with the mounts. */
	struct cf_fx_out c = {0};
	cf_fx_credfence(&c, &fx, "check", NULL,
			lift ? CF_ARGV("--allow-write-protected", ".vscode/settings.json",
				       ".vscode/settings.json", ".vscode/other.json",
				       ".vscode/tasks.json")
			     : CF_ARGV(".vscode/settings.json", ".vscode/other.json",
				       ".vscode/tasks.json"));
	cr_assert_eq(c.status, 0, OUT_FMT, OUT_ARGS(c));
	cr_expect(has_line(c.out, lift ? ".vscode/settings.json: file; read: allowed; write: "
					 "allowed (--allow-write-protected)"
				       : ".vscode/settings.json: file; read: allowed; write: denied "
					 "(runs unfenced later: VS Code tasks and settings)"),
		  OUT_FMT, OUT_ARGS(c));
	cr_expect(has_line(c.out, ".vscode/other.json: file; read: allowed; write: denied (runs "
				  "unfenced later: VS Code tasks and settings)"),
		  OUT_FMT, OUT_ARGS(c));
	cr_expect(has_line(c.out, ".vscode/tasks.json: does not exist (ENOENT); create: denied "
				  "(runs unfenced later: VS Code tasks and settings)"),
		  OUT_FMT, OUT_ARGS(c));
	cf_fx_out_free(&c);
}

Test(fenced_ns, a_lift_inside_a_row_is_writable_from_run)
{
	cf_test_require_landlock();
	lift_inside(NULL, true);
}

Test(fenced_ns, without_the_lift_the_file_in_the_row_is_not_writable_from_run)
{
	cf_test_require_landlock();
	lift_inside(NULL, false);
}

Test(fenced_ns, a_lift_inside_a_row_is_writable_from_a_harness_child)
{
	cf_test_require_landlock();
	lift_inside("fork", true);
}

Test(fenced_ns, without_the_lift_the_file_in_the_row_is_not_writable_from_a_harness_child)
{
	cf_test_require_landlock();
	lift_inside("fork", false);
}

/* A lift of a file that is not there: it can not be created inside the
 * read-only row; the warning at start and check say so, and the mounts
 * do as they say. */
Test(fenced_ns, a_lift_of_an_absent_file_inside_a_row_is_said_and_refused)
{
	const char *lift = ".vscode/launch.json";
	cf_test_require_landlock();
	repo();
	fenced(&o, &fx, NULL, CF_ARGV("--allow-write-protected", (char *)lift),
	       CF_ARGV("/bin/sh", "-c", "echo x > .vscode/launch.json && echo created; true"));
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "created"), OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "Read-only file system"), OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "/.vscode/launch.json: it does not exist, and inside the "
				"write-protected "),
		  OUT_FMT, OUT_ARGS(o));
	struct stat st;
	cr_expect(lstat(cf_fx_at(fx.ws, lift), &st) != 0);
	cf_fx_out_free(&o);
	cf_fx_credfence(&o, &fx, "check", NULL,
			CF_ARGV("--allow-write-protected", (char *)lift, (char *)lift));
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, ".vscode/launch.json: does not exist (ENOENT); create: denied "
				  "(runs unfenced later: VS Code tasks and settings; "
				  "--allow-write-protected keeps it writable only once it exists: "
				  "create it yourself first)"),
		  OUT_FMT, OUT_ARGS(o));
}

/* The harness's log: LOG under fx.root (outside every writable location). */
static void harness_log(char *log, size_t n, char *opt, size_t on)
{
	cf_fx_fmt(log, n, "%s/log.jsonl", fx.root);
	cf_fx_fmt(opt, on, "--log=%s", log);
}

static const char meta_script[] =
	"chmod 600 \"$HOME/notes.txt\" 2>&1 | grep -q 'Read-only file system' && echo chmod erofs\n"
	"chmod 600 a.txt && echo chmod inside ok\n"
	"echo x > .git/hooks/pre-commit && echo hook written\n"
	"true\n";

/* Metadata from a harness child: refused by the read-only mounts (EROFS,
 * which the supervisor never answers: no round trip), allowed inside; the
 * log says mounts. */
Test(fenced_ns, a_harness_child_has_metadata_by_mounts)
{
	char log[PATH_MAX], opt[PATH_MAX + 8];
	cf_test_require_landlock();
	repo();
	harness_way = "fork";
	harness_log(log, sizeof log, opt, sizeof opt);
	struct stat before, after;
	cr_assert_eq(stat(cf_fx_at(fx.home, "notes.txt"), &before), 0);
	harness_child(NULL, opt, meta_script);
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "chmod erofs"), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "chmod inside ok"), OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "hook written"), OUT_FMT, OUT_ARGS(o));
	cr_assert_eq(stat(cf_fx_at(fx.home, "notes.txt"), &after), 0);
	cr_expect_eq(before.st_mode, after.st_mode);
	cr_expect_eq(before.st_ctim.tv_nsec, after.st_ctim.tv_nsec);
	char *text = cf_fx_slurp(log);
	cr_assert(text);
	cr_expect(strstr(text, "\"metadata\":\"mounts\""), "%s", text);
	cr_expect(!strstr(text, "\"metadata\":\"supervisor\""), "%s", text);
	/* The supervisor logs each metadata call it refuses: none came to it. */
	cr_expect(!strstr(text, "metadata_denied"), "%s", text);
	cr_expect(strstr(text, "\"write_protect\":\"on\""), "%s", text);
	free(text);
	cf_fx_assert_no_marker(&fx, &o);
}

/* The fallbacks: user namespaces off (the test switch), and a harness that
 * closed the descriptors before its child's exec. Metadata is still
 * refused, by the supervisor; write protection is off, and said so. */
static void falls_back(const char *const *env, const char *way, const char *says)
{
	char log[PATH_MAX], opt[PATH_MAX + 8];
	repo();
	harness_way = way;
	harness_log(log, sizeof log, opt, sizeof opt);
	char script[sizeof meta_script + PATH_MAX];
	cf_fx_fmt(script, sizeof script, "chmod 600 '%s/notes.txt' || echo chmod refused\n%s",
		  fx.home, meta_script);
	harness_child(env, opt, script);
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "chmod refused"), OUT_FMT, OUT_ARGS(o));
	cr_expect(!has_line(o.out, "chmod erofs"), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "chmod inside ok"), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "hook written"), "the documented fallback: " OUT_FMT, OUT_ARGS(o));
	struct stat st;
	cr_assert_eq(stat(cf_fx_at(fx.home, "notes.txt"), &st), 0);
	cr_expect_neq(st.st_mode & 0777, 0600);
	char *text = cf_fx_slurp(log);
	cr_assert(text);
	cr_expect(strstr(text, "\"metadata\":\"supervisor\""), "%s", text);
	cr_expect(strstr(text, "metadata_denied"), "%s", text);
	cr_expect(strstr(text, says), "%s", text);
	free(text);
	cf_fx_assert_no_marker(&fx, &o);
}

Test(fenced_ns, a_harness_without_user_namespaces_falls_back)
{
	cf_test_require_landlock();
	cf_test_require_userns_switch();
	falls_back((const char *[]){"CF_TEST_NO_USERNS=1", NULL}, "fork",
		   "\"write_protect_off\":\"unshare(");
	cr_expect(strstr(o.err, "credfence: warning: harness: no mount namespace (unshare("),
		  OUT_FMT, OUT_ARGS(o));
}

/* A child that can not get the namespace at all: its descriptors closed
 * and the supervisor holding none (the test switch CF_TEST_NO_NS_HANDOVER=1
 * keeps the guard from handing them over). Only the user's explicit
 * --write-protect=warn lets it run with the read fence alone. */
#define NO_HANDOVER "CF_TEST_NO_NS_HANDOVER=1"

Test(fenced_ns, a_child_whose_descriptors_were_closed_falls_back_under_warn)
{
	cf_test_require_landlock();
	more_opt = "--write-protect=warn";
	falls_back((const char *[]){NO_HANDOVER, NULL}, "closefds",
		   "\"write_protect_off\":\"the descriptors of the namespace were closed or replaced");
}

/* By default such a child is refused: said on its stderr (the model's),
 * on the terminal credfence harness was started from (by the supervisor,
 * which holds it), and in the log. */
static void refused_without_it(const char *way, const char *program)
{
	char log[PATH_MAX], opt[PATH_MAX + 8], want[PATH_MAX];
	repo();
	char *before = snapshot();
	harness_way = way;
	harness_log(log, sizeof log, opt, sizeof opt);
	harness_child((const char *[]){NO_HANDOVER, NULL}, opt,
		      "echo ran; echo x > .git/hooks/pre-commit && echo hook written");
	cr_expect_neq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "ran"), OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "hook written"), OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "credfence: write protection can not be given to this command: it "
				"can not enter the harness's mount namespace of the fenced tree"),
		  OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "run the harness with --write-protect=warn to let such a command "
				"run with the read fence alone. Nothing was run."),
		  OUT_FMT, OUT_ARGS(o));
	/* The supervisor's line: only it words "a command of the harness". */
	cf_fx_fmt(want, sizeof want, "credfence: a command of the harness was refused: %s (pid ",
		  program);
	cr_expect(strstr(o.err, want), "want '%s' in: " OUT_FMT, want, OUT_ARGS(o));
	char *text = cf_fx_slurp(log);
	cr_assert(text);
	cr_expect(strstr(text, "\"event\":\"sandbox_status\""), "%s", text);
	cr_expect(strstr(text, "\"verdict\":\"not effective\",\"reason\":\"write protection can "
			       "not be given to this command"),
		  "%s", text);
	cr_expect(strstr(text, "can not enter the harness's mount namespace"), "%s", text);
	free(text);
	char *after = snapshot();
	cr_expect_str_eq(after, before, "a protected object changed");
	free(before);
	free(after);
	cf_fx_assert_no_marker(&fx, &o);
}

Test(fenced_ns, a_child_that_can_not_get_the_namespace_is_refused_and_the_user_told)
{
	cf_test_require_landlock();
	refused_without_it("closefds", "/bin/sh");
}

Test(fenced_ns, a_static_harness_child_that_can_not_get_it_is_refused_and_the_user_told)
{
	cf_test_require_landlock();
	refused_without_it("static", "/bin/sh");
}

/* --write-protect=require: no harness without the namespace, and no child
 * that lost its descriptors. */
/* `echo ran` from a harness child started by WAY, with ENV, under
 * --write-protect=require: refused with SAYS, and nothing ran. */
static void refused_under_require(const char *way, const char *env, const char *says)
{
	cf_test_require_landlock();
	repo();
	harness_way = way;
	harness_child((const char *[]){env, NULL}, "--write-protect=require", "echo ran");
	cr_expect(strstr(o.err, says), OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "ran"), OUT_FMT, OUT_ARGS(o));
}

Test(fenced_ns, require_refuses_a_harness_without_user_namespaces)
{
	cf_test_require_userns_switch();
	refused_under_require("fork", "CF_TEST_NO_USERNS=1",
			      "credfence: harness: write protection can not be made for the "
			      "harness's children");
	cr_expect_eq(o.status, 125, OUT_FMT, OUT_ARGS(o));
}

Test(fenced_ns, require_refuses_a_child_whose_descriptors_were_closed)
{
	refused_under_require("closefds", NO_HANDOVER,
			      "credfence: write protection can not be made for this child");
	cr_expect_neq(o.status, 0, OUT_FMT, OUT_ARGS(o));
}

/* A harness that puts another file in the place of the namespace's
 * descriptors (here /dev/null, by dup2, before its child's exec): the
 * child checks them by inode and device, so it does not take them for the
 * namespace, and gets it from the supervisor. Where the supervisor holds
 * none either: refused under require and by default; under warn it runs
 * with the read fence alone, and its log line says why. */
Test(fenced_ns, a_child_whose_descriptors_were_replaced_is_refused_under_require)
{
	refused_under_require("clobber", NO_HANDOVER,
			      "credfence: write protection can not be made for this child: the "
			      "descriptors of the namespace were closed or replaced");
	cr_expect_neq(o.status, 0, OUT_FMT, OUT_ARGS(o));
}

Test(fenced_ns, a_child_whose_descriptors_were_replaced_falls_back_under_warn)
{
	cf_test_require_landlock();
	more_opt = "--write-protect=warn";
	falls_back((const char *[]){NO_HANDOVER, NULL}, "clobber",
		   "\"write_protect_off\":\"the descriptors of the namespace were closed or replaced");
}

/* The harness itself is free: it writes the protected files (a bash
 * harness's own redirection), its children do not. */
Test(fenced_ns, the_harness_itself_still_writes_the_protected_files)
{
	cf_test_require_landlock();
	repo();
	harness_way = "bash";
	static struct argvb b;
	b.n = 0;
	argvb_add(&b, "--");
	argvb_add(&b, "bash");
	argvb_add(&b, "-c");
	argvb_add(&b, "echo '#harness' >> .git/config && echo harness wrote; "
		      "/bin/sh -c 'echo x >> .git/config' || echo child refused; exit 0");
	cf_fx_credfence(&o, &fx, "harness", NULL, b.v);
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "harness wrote"), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "child refused"), OUT_FMT, OUT_ARGS(o));
	char *cfg = cf_fx_slurp(cf_fx_at(fx.ws, ".git/config"));
	cr_assert(cfg);
	cr_expect(strstr(cfg, "#harness") && !strstr(cfg, "\nx\n"), "%s", cfg);
	free(cfg);
}

/* The children's user namespace maps every id to itself for a root
 * harness, so that a root child's chown and tar -p keep owners as without
 * the fence; a user's child owns its files as before. */
Test(fenced_ns, owners_are_kept_in_a_harness_childs_namespace)
{
	cf_test_require_landlock();
	cf_test_require_tool("tar");
	repo();
	harness_way = "spawn";
	char script[512];
	unsigned uid = geteuid() == 0 ? 12345 : (unsigned)geteuid();
	unsigned gid = geteuid() == 0 ? 23456 : (unsigned)getegid();
	cf_fx_fmt(script, sizeof script,
		  "set -e; mkdir -p o/d && echo x > o/d/f && chown %u:%u o/d/f && "
		  "tar -cf o.tar o && mkdir x && tar -xpf o.tar -C x && "
		  "stat -c 'owner %%u:%%g' x/o/d/f",
		  uid, gid);
	harness_child(NULL, NULL, script);
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "owner %u:%u", uid, gid), OUT_FMT, OUT_ARGS(o));
	struct stat st;
	cr_assert_eq(stat(cf_fx_at(fx.ws, "x/o/d/f"), &st), 0);
	cr_expect(st.st_uid == uid && st.st_gid == gid, "owner %u:%u outside", st.st_uid, st.st_gid);
}

/* The user's git outside, in a child: once STARTED exists, it kills the
 * keeper whose pid is in KFILE (when KILL), renames config.lock over
 * .git/config with `git config`, then makes RENAMED. */
static pid_t rename_over_from_outside(const char *started, bool kill, const char *kfile,
				      const char *renamed)
{
	char watch[4 * PATH_MAX];
	cf_fx_fmt(watch, sizeof watch,
		  "i=0; while [ ! -e '%s' ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; "
		  "if [ %d = 1 ]; then k=$(cat '%s'); kill -9 \"$k\" || exit 3; i=0; "
		  "while [ -e /proc/$k ] && [ $i -lt 100 ]; do sleep 0.02; i=$((i+1)); done; fi; "
		  "git config user.name renamed-over && : > '%s'",
		  started, kill ? 1 : 0, kfile, renamed);
	return sh_plain_child(watch);
}

/* The child W of rename_over_from_outside did it all. */
static void expect_renamed_over(pid_t w)
{
	int st;
	cr_assert_eq(waitpid(w, &st, 0), w);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the user's git config failed (%d)",
		  WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

/* While a harness runs, the user's own `git config` outside renames
 * config.lock over .git/config: the kernel detaches the read-only bind in
 * the children's namespace too. The keeper (shared_ns.h) binds the new
 * file again: a child started after, and one already running before, can
 * not write it. KILL: the test kills the keeper first (the control: the
 * old warning, or under require a refusal). WAY: "bash" (a bash harness
 * whose children ask the keeper) or a way of cf-nsharness (the script is
 * one fenced shell: its own children inherit the namespace, and only the
 * keeper's watch holds the file). KEEPER gets the keeper's pid (bash). */
static void renamed_from_outside(const char *opt, bool kill, const char *way, int *keeper)
{
	char started[PATH_MAX], renamed[PATH_MAX], kfile[PATH_MAX],
		script[4 * PATH_MAX];
	repo();
	/* In the workspace: the script of cf-nsharness runs fenced. */
	cf_fx_fmt(started, sizeof started, "%s/started", fx.ws);
	cf_fx_fmt(renamed, sizeof renamed, "%s/renamed", fx.ws);
	cf_fx_fmt(kfile, sizeof kfile, "%s/keeper", fx.ws);
	pid_t w = rename_over_from_outside(started, kill, kfile, renamed);
	/* The running child waits 0.5 s after the rename: within the window
	 * SECURITY.md gives. */
	cf_fx_fmt(script, sizeof script,
		  "echo \"${CREDFENCE_FENCED_NS##*,}\" > '%s'\n"
		  "/bin/sh -c 'echo x >> .git/config && echo WROTE-BEFORE'\n"
		  "/bin/sh -c 'i=0; while [ ! -e \"$1\" ] && [ $i -lt 400 ]; do sleep 0.05; "
		  "i=$((i+1)); done; sleep 0.5; echo x >> .git/config && echo WROTE-RUNNING' - '%s' &\n"
		  ": > '%s'\n"
		  "i=0; while [ ! -e '%s' ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done\n"
		  "/bin/sh -c 'echo x >> .git/config && echo WROTE-AFTER'\n"
		  "/bin/sh -c 'git config user.email y && echo GIT-WROTE'\n"
		  "wait\n"
		  "exit 0\n",
		  kfile, renamed, started, renamed);
	static struct argvb b;
	b.n = 0;
	if (opt)
		argvb_add(&b, "%s", opt);
	argvb_add(&b, "--");
	if (!strcmp(way, "bash")) {
		argvb_add(&b, "bash");
		argvb_add(&b, "-c");
	} else {
		argvb_add(&b, "%s", CF_NSHARNESS);
		argvb_add(&b, "%s", way);
	}
	argvb_add(&b, "%s", script);
	cf_fx_credfence(&o, &fx, "harness", NULL, b.v);
	expect_renamed_over(w);
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "WROTE-BEFORE"), OUT_FMT, OUT_ARGS(o));
	char *k = cf_fx_slurp(kfile);
	*keeper = k ? atoi(k) : 0;
	free(k);
}

/* The file as the user's git config left it: nothing a child appended. */
static void expect_config_kept(void)
{
	char *cfg = cf_fx_slurp(cf_fx_at(fx.ws, ".git/config"));
	cr_assert(cfg);
	cr_expect(strstr(cfg, "renamed-over"), "%s", cfg);
	cr_expect(!strstr(cfg, "\nx\n") && !strstr(cfg, "= y\n"), "%s", cfg);
	free(cfg);
}

/* PID has ended (gone, or a zombie its new parent has not reaped yet),
 * waiting up to 2 s. */
static bool ended(int pid)
{
	char path[64], stat[256];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	for (int i = 0; i < 100; i++) {
		char *s = cf_fx_slurp(path);
		if (!s)
			return true;
		snprintf(stat, sizeof stat, "%s", s);
		free(s);
		const char *p = strrchr(stat, ')');
		if (p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'))
			return true;
		usleep(20000);
	}
	return false;
}

static void expect_held(void)
{
	cr_expect(!strstr(o.out, "WROTE-AFTER"), OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "WROTE-RUNNING"), OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "GIT-WROTE"), OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.err, "is no longer held read-only"), OUT_FMT, OUT_ARGS(o));
	expect_config_kept();
}

Test(fenced_ns, a_file_renamed_over_from_outside_is_held_again)
{
	int keeper;
	cf_test_require_landlock();
	renamed_from_outside(NULL, false, "bash", &keeper);
	expect_held();
	/* The keeper ends with the harness: nothing is left behind. */
	cr_assert_gt(keeper, 1, "no keeper pid: " OUT_FMT, OUT_ARGS(o));
	cr_expect(ended(keeper), "the keeper %d outlived the harness", keeper);
}

Test(fenced_ns, a_file_renamed_over_from_outside_is_held_again_for_a_c_harness)
{
	int keeper;
	cf_test_require_landlock();
	renamed_from_outside(NULL, false, "fork", &keeper);
	expect_held();
}

/* The control: with the keeper killed, the old warning, and the new file
 * is writable to the children (so the test above can fail). */
Test(fenced_ns, a_file_renamed_over_without_its_keeper_is_said_lost)
{
	int keeper;
	cf_test_require_landlock();
	renamed_from_outside(NULL, true, "bash", &keeper);
	cr_expect(strstr(o.out, "WROTE-AFTER"), OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "credfence: warning: "), OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, ".git/config was replaced or removed from outside since the harness "
				"started, and is no longer held read-only (the keeper that binds it "
				"again is gone: start the harness again)"),
		  OUT_FMT, OUT_ARGS(o));
}

Test(fenced_ns, a_file_renamed_over_without_its_keeper_refuses_children_under_require)
{
	int keeper;
	cf_test_require_landlock();
	renamed_from_outside("--write-protect=require", true, "bash", &keeper);
	cr_expect(!strstr(o.out, "WROTE-AFTER") && !strstr(o.out, "GIT-WROTE"), OUT_FMT,
		  OUT_ARGS(o));
	cr_expect(strstr(o.err, "credfence: write protection can not be kept for this child"),
		  OUT_FMT, OUT_ARGS(o));
}

/* Neither a harness child nor the harness itself reaches the keeper: its
 * memory and environment are unreadable, ptrace is refused. */
Test(fenced_ns, the_keeper_is_out_of_reach)
{
	cf_test_require_landlock();
	repo();
	char script[PATH_MAX + 128];
	cf_fx_fmt(script, sizeof script, "'%s' reach \"${CREDFENCE_FENCED_NS##*,}\"; exit $?",
		  CF_NSHARNESS);
	cf_fx_credfence(&o, &fx, "harness", NULL, CF_ARGV("--", "bash", "-c", script));
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.out, "KEEPER ") && strstr(o.out, "DENIED ptrace"), OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "LEAK"), OUT_FMT, OUT_ARGS(o));
	cf_fx_out_free(&o);
	/* The harness itself: its memory and ptrace (a root harness reads any
	 * process's environment, SECURITY.md puts root out of scope). */
	cf_fx_credfence(&o, &fx, "harness", NULL, CF_ARGV("--", CF_NSHARNESS, "reach", "-"));
	cr_expect(strstr(o.out, "KEEPER ") && strstr(o.out, "DENIED ptrace"), OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.out, "/mem E"), OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "LEAK ptrace") && !strstr(o.out, "/mem\n"), OUT_FMT,
		  OUT_ARGS(o));
}

/* The harness floods the keeper with requests while the user's own git
 * config renames over .git/config outside, 40 times back to back: the
 * children still launch (the keeper answers a batch a pass, then rests; a
 * child waits at most CF_KEEPER_WAIT_MS), and once the renames stop the
 * file is held again. A child's write that lands inside the window after
 * one of the renames goes through (SECURITY.md): not asserted here. */
Test(fenced_ns, a_flood_of_requests_does_not_stop_children)
{
	cf_test_require_landlock();
	repo();
	char started[PATH_MAX], watch[2 * PATH_MAX];
	cf_fx_fmt(started, sizeof started, "%s/started", fx.ws);
	cf_fx_fmt(watch, sizeof watch,
		  "i=0; while [ ! -e '%s' ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; "
		  "i=0; while [ $i -lt 40 ]; do git config user.name n$i || exit 1; i=$((i+1)); "
		  "done; : > done",
		  started);
	pid_t w = sh_plain_child(watch);
	static const char script[] =
		"IFS=, read -r a b c d e f g kfd kpid <<EOF\n$CREDFENCE_FENCED_NS\nEOF\n"
		"kfd=$((10#$kfd)); [ \"$kfd\" -gt 2 ] || { echo NOFD; exit 1; }\n"
		"( i=0; while [ $i -lt 3000 ]; do printf x >&$kfd; i=$((i+1)); done ) 2>/dev/null &\n"
		": > started\n"
		"n=0; s=$(date +%s); i=0\n"
		"while [ $i -lt 40 ]; do /bin/sh -c 'echo x >> .git/config && echo WROTE' 2>/dev/null; "
		"n=$((n+1)); i=$((i+1)); done\n"
		"echo LAUNCHED $n in $(( $(date +%s) - s )) s\n"
		"i=0; while [ ! -e done ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; sleep 0.5\n"
		"/bin/sh -c 'echo y >> .git/config && echo WROTE-AFTER'\n"
		"wait; exit 0\n";
	cf_fx_credfence(&o, &fx, "harness", NULL, CF_ARGV("--", "bash", "-c", (char *)script));
	int st;
	cr_assert_eq(waitpid(w, &st, 0), w);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the user's git config failed");
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.out, "LAUNCHED 40 in "), OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "WROTE-AFTER"), OUT_FMT, OUT_ARGS(o));
	const char *t = strstr(o.out, " in ");
	cr_expect(t && atoi(t + 4) < 30, OUT_FMT, OUT_ARGS(o));
	char *cfg = cf_fx_slurp(cf_fx_at(fx.ws, ".git/config"));
	cr_assert(cfg);
	cr_expect(strstr(cfg, "= n39\n") && !strstr(cfg, "\ny\n"), "%s", cfg);
	free(cfg);
}

/* Every row of the table (common/protected.c), made to exist (a directory
 * row with a file in it, a file row with content), attacked from a fenced
 * command: each write, create, append, truncate, rename, unlink and chmod
 * fails and nothing changes. A home row that lies in no writable location is
 * refused by Landlock instead of the mounts; either way it must hold. */
static void every_row(const char *how)
{
	size_t cap = 1 << 16;
	char *made = malloc(cap), *list = malloc(cap), *script = malloc(4 * cap);
	cr_assert(made && list && script);
	size_t m = 0, l = 0, s = 0;
	s += (size_t)snprintf(script + s, 4 * cap - s, "%s",
			      "try() { n=$1; shift; if ( \"$@\" ) >/dev/null 2>&1; then "
			      "echo \"ESCAPED $n\"; fi; }\n");
	for (size_t i = 0; i < cf_protected_count; i++) {
		const struct cf_protected_row *r = &cf_protected_table[i];
		char p[PATH_MAX];
		if (r->base == CF_PROT_GIT)
			continue; /* found in git's files: tests/enforce/test_write_holds.c */
		bool private_copy = r->private_copy; /* written inside, unchanged outside */
		cf_fx_fmt(p, sizeof p, "%s/%s", r->base == CF_PROT_HOME ? fx.home : fx.ws, r->rel);
		bool dir = r->kind == CF_PROT_DIR;
		m += (size_t)snprintf(made + m, cap - m,
				      dir ? "mkdir -p '%1$s' && echo orig > '%1$s/f'\n"
					  : "mkdir -p \"$(dirname '%1$s')\" && echo orig > '%1$s'\n",
				      p);
		l += (size_t)snprintf(list + l, cap - l, " '%s'", p);
		if (private_copy)
			s += (size_t)snprintf(script + s, 4 * cap - s,
					      "echo x > '%1$s/f' && echo x > '%1$s/new' && "
					      "mkdir '%1$s/sub'\n",
					      p);
		else if (dir)
			s += (size_t)snprintf(
				script + s, 4 * cap - s,
				"try 'create in %1$s' sh -c 'echo x > \"$1/new\"' - '%1$s'\n"
				"try 'write %1$s/f' sh -c 'echo x > \"$1/f\"' - '%1$s'\n"
				"try 'append %1$s/f' sh -c 'echo x >> \"$1/f\"' - '%1$s'\n"
				"try 'unlink %1$s/f' rm -f '%1$s/f'\n"
				"try 'mkdir in %1$s' mkdir '%1$s/sub'\n"
				"try 'rename away %1$s' mv '%1$s' '%1$s.old'\n"
				"try 'chmod %1$s' chmod 711 '%1$s'\n",
				p);
		else
			s += (size_t)snprintf(
				script + s, 4 * cap - s,
				"try 'write %1$s' sh -c 'echo x > \"$1\"' - '%1$s'\n"
				"try 'append %1$s' sh -c 'echo x >> \"$1\"' - '%1$s'\n"
				"try 'truncate %1$s' truncate -s0 '%1$s'\n"
				"try 'rename over %1$s' sh -c 'echo x > \"$1.n\" && mv -f \"$1.n\" \"$1\"' - '%1$s'\n"
				"try 'rename away %1$s' mv '%1$s' '%1$s.old'\n"
				"try 'unlink %1$s' rm -f '%1$s'\n"
				"try 'chmod %1$s' chmod 600 '%1$s'\n",
				p);
		cr_assert(m < cap && l < cap && s < 4 * cap);
	}
	s += (size_t)snprintf(script + s, 4 * cap - s, "echo rows done\n");
	char snap[1 << 17];
	cf_fx_fmt(snap, sizeof snap,
		  "for t in%s; do find \"$t\" -printf '%%p %%y %%m %%s %%i %%T@ %%C@\\n' | sort; "
		  "find \"$t\" -type f -exec sha256sum {} + | sort; done",
		  list);
	struct cf_fx_out p = {0};
	sh_plain(&p, made);
	cr_assert_eq(p.status, 0, OUT_FMT, OUT_ARGS(p));
	cf_fx_out_free(&p);
	sh_plain(&p, snap);
	cr_assert_eq(p.status, 0, OUT_FMT, OUT_ARGS(p));
	char *before = p.out;
	p.out = NULL;
	cf_fx_out_free(&p);
	/* Too long for one argument: the fenced sh reads it from the workspace. */
	char file[PATH_MAX];
	cf_fx_fmt(file, sizeof file, "%s/rows.sh", fx.ws);
	FILE *f = fopen(file, "w");
	cr_assert(f && fputs(script, f) >= 0 && fclose(f) == 0);
	sh_fenced(NULL, "sh ./rows.sh");
	cr_assert_eq(o.status, 0, "%s: " OUT_FMT, how, OUT_ARGS(o));
	cr_expect(has_line(o.out, "rows done"), "%s: " OUT_FMT, how, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "ESCAPED"), "%s: a row gave way:\n%s", how, o.out);
	sh_plain(&p, snap);
	cr_assert_eq(p.status, 0, OUT_FMT, OUT_ARGS(p));
	cr_expect_str_eq(p.out, before, "%s: a protected object changed", how);
	cf_fx_out_free(&p);
	cf_fx_assert_no_marker(&fx, &o);
	free(before);
	free(made);
	free(list);
	free(script);
}

Test(fenced_ns, every_row_of_the_table_holds_from_run)
{
	cf_test_require_landlock();
	every_row("credfence run");
}

Test(fenced_ns, every_row_of_the_table_holds_from_a_harness_child)
{
	cf_test_require_landlock();
	harness_way = "spawn";
	every_row("a posix_spawn harness child");
}

/* A relaunched child (credfence run below the harness: the shim relaunches
 * a child whose environment moves a secret) joins the harness's namespace
 * after the user's own git renamed a file over .git/config from outside
 * and the keeper that binds it again is gone: the file is not held there
 * any more, the run warns, and its log line must say so too (write
 * protection "off", with the words), not "on". */
Test(fenced_ns, a_relaunched_child_that_finds_a_file_lost_logs_it_off)
{
	char started[PATH_MAX], renamed[PATH_MAX], kfile[PATH_MAX], log[PATH_MAX],
		opt[PATH_MAX + 8], script[4 * PATH_MAX], moved[PATH_MAX + 32];
	cf_test_require_landlock();
	repo();
	cf_fx_fmt(started, sizeof started, "%s/started", fx.root);
	cf_fx_fmt(renamed, sizeof renamed, "%s/renamed", fx.root);
	cf_fx_fmt(kfile, sizeof kfile, "%s/keeper", fx.root);
	cf_fx_fmt(log, sizeof log, "%s/log.jsonl", fx.root);
	cf_fx_fmt(opt, sizeof opt, "--log=%s", log);
	/* Outside: the keeper killed, then the user's git renames over. */
	pid_t w = rename_over_from_outside(started, true, kfile, renamed);
	/* The harness (bash, free to write here, then cf-nsharness in its
	 * place) starts the relaunched child only once the file is lost. */
	cf_fx_fmt(script, sizeof script,
		  "echo \"${CREDFENCE_FENCED_NS##*,}\" > '%s'; : > '%s'\n"
		  "i=0; while [ ! -e '%s' ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done\n"
		  "exec '%s' moved 'cat \"$KUBECONFIG\" || echo kube denied'\n",
		  kfile, started, renamed, CF_NSHARNESS);
	cf_fx_credfence(&o, &fx, "harness", (const char *[]){moved_env(moved, sizeof moved), NULL},
			CF_ARGV(opt, "--", "bash", "-c", script));
	expect_renamed_over(w);
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	/* Relaunched: the fence built from the child's environment. */
	cr_expect(has_line(o.out, "kube denied"), OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "MOVED-KUBE-MARKER"), OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, ".git/config is not held read-only in the namespace the harness "
				"made at its start"),
		  OUT_FMT, OUT_ARGS(o));
	char *text = cf_fx_slurp(log);
	cr_assert(text);
	const char *line = strstr(text, "\"write_protect_off\":");
	cr_expect(line && strstr(line, ".git/config is not held read-only in the namespace"),
		  "%s", text);
	cr_expect(strstr(text, "\"write_protect\":\"off\""), "%s", text);
	free(text);
	cf_fx_assert_no_marker(&fx, &o);
}

/* credfence status tries the mount namespace of the fenced tree in a child
 * (cf_fence_protect_probe). A policy that kills a process making a mount
 * namespace (seccomp-fault SYS=unshare,KILL: a SystemCallFilter= of
 * systemd's kills by default) kills that child before it answers: status
 * must still end, and must not say that anything is held. */
Test(fenced_ns, a_status_whose_namespace_probe_is_killed_ends_and_says_so)
{
	char fault[64];
	cf_test_require_landlock();
	cf_fx_fmt(fault, sizeof fault, "SYS=%d,KILL,%#x", SYS_unshare, CLONE_NEWNS);
	char **env = cf_fx_env(&fx, NULL);
	cf_fx_out_free(&o);
	cf_fx_run(&o, fx.ws, env, NULL,
		  CF_ARGV("/usr/bin/timeout", "30", CF_SECCOMP_FAULT, fault, (char *)cf_fx_bin(),
			  "status", "--home", fx.home, "--workspace", fx.ws));
	cf_fx_env_free(env);
	cr_expect_eq(o.status, 0, "124: status waited for its killed probe\n" OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "read isolation applied"), OUT_FMT, OUT_ARGS(o));
	/* Not "read-only mounts ... 0 protected paths held": nothing is known
	 * to be held. */
	cr_expect(strstr(o.out, "metadata:     supervisor; write protection off: the child that "
				"tries the namespace was killed by signal 31 (Bad system call) before "
				"it answered\n"),
		  OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "protected paths held"), OUT_FMT, OUT_ARGS(o));
}
