/* Where no user namespace can be had (issue 33), `credfence harness -- AGENT`
 * still starts in the default mode: each program the agent starts is fenced
 * by Landlock (its read of a fake key fails with EACCES, no marker
 * anywhere), nothing it starts writes outside the writable locations, and
 * what needs the namespace (the guard over the harness's own reads, write
 * protection) is named in one line at start, in the log and in `credfence
 * status`, with the one command that turns it on.
 *
 * Each way a machine refuses, through the test build's switch
 * (CF_TEST_USERNS, enforce/linux/mountns/userns.c), which fails as the real case
 * fails: sysctl (Debian's kernel.unprivileged_userns_clone=0: EPERM),
 * maxns (user.max_user_namespaces=0: ENOSPC), seccomp (a container's
 * default profile: EPERM, root included), apparmor (Ubuntu 23.10 and
 * later: the namespace is made, with no capability in it). Root has
 * CAP_SYS_ADMIN, which passes the sysctl and Ubuntu's rule: there its
 * guard holds, as it would on such a machine.
 *
 * The agents are stand-ins named as the four (common/harness_kinds.c):
 * scripts as claude, gemini and opencode, Codex's npm layout with busybox
 * as its static native program. */
#include <sys/stat.h>
#include <unistd.h>

#include "enforce_test.h"

CF_SUITE_STATE()
TestSuite(nouserns, .init = cf_suite_setup, .fini = cf_suite_teardown, .timeout = 240);

static const char *const faults[] = {"sysctl", "maxns", "seccomp", "apparmor"};
#define N_FAULTS (sizeof faults / sizeof *faults)

/* What the fenced children run, in the workspace: a script the agent hands
 * to /bin/sh (dynamic, so the shim fences it; a static shell's builtins
 * would run in the harness itself). */
#define CHILD_CMDS                                                                           \
	"cat \"$HOME/.ssh/id_ed25519\"; echo \"READ rc=$?\"\n"                                \
	"echo x > \"$HOME/planted\"; echo \"HOME-WRITE rc=$?\"\n"                             \
	"echo x > \"$CF_T_OUTSIDE/planted\"; echo \"OUTSIDE-WRITE rc=$?\"\n"                  \
	"chmod 600 \"$HOME/notes.txt\"; echo \"CHMOD rc=$?\"\n"                                \
	"echo built > out.txt; echo \"WS-WRITE rc=$?\"\n"

/* The remedy each way names (enforce/linux/mountns/userns.c, cf_userns_remedy). */
static const char *remedy(const char *fault)
{
	if (strcmp(fault, "sysctl") == 0)
		return "sudo sysctl -w kernel.unprivileged_userns_clone=1";
	if (strcmp(fault, "maxns") == 0)
		return "sudo sysctl -w user.max_user_namespaces=";
	if (strcmp(fault, "seccomp") == 0)
		return "--security-opt seccomp=";
	return "sudo apparmor_parser -r /etc/apparmor.d/credfence";
}

/* Whether FAULT leaves this user without the harness's guard (root passes
 * Debian's sysctl and Ubuntu's rule; max_user_namespaces leaves root its
 * own mount namespace, which is all its guard makes). */
static bool guard_off(const char *fault)
{
	if (geteuid() != 0)
		return true;
	return strcmp(fault, "seccomp") == 0;
}

static void script(const char *path, const char *text)
{
	cf_fx_write(path, text);
	cr_assert_eq(chmod(path, 0755), 0);
}

/* NAME in ROOT/agents: a script that runs CHILD_CMDS in a child shell. */
static const char *agent_script(const char *name)
{
	const char *bin = cf_fx_at(fx.root, "agents");
	script(cf_fx_at(bin, name), "#!/bin/bash\n/bin/sh \"$CF_T_CHILD\"\n");
	return bin;
}

/* Codex as npm installs it: PREFIX/bin/codex -> the wrapper, its native
 * program (busybox, static) in the platform package nested under it. It
 * forks its child (a command it would exec in place is the harness
 * itself, as a shell's last command is: README, "credfence harness"). */
static const char *codex_layout(void)
{
	static char bin[PATH_MAX];
	char pkg[PATH_MAX], native[PATH_MAX * 2], link[PATH_MAX + 16];
	cf_test_require_tool("/bin/busybox");
	cf_fx_fmt(bin, sizeof bin, "%s/npm/bin", fx.root);
	cf_fx_fmt(pkg, sizeof pkg, "%s/npm/lib/node_modules/@openai/codex", fx.root);
	script(cf_fx_at(pkg, "bin/codex.js"),
	       "#!/bin/bash\n"
	       "n=$(dirname \"$(readlink -f \"$0\")\")/../node_modules/@openai/codex-linux-x64/"
	       "vendor/x86_64-unknown-linux-musl/bin/codex\n"
	       "(exec -a sh \"$n\" -c '/bin/sh \"$CF_T_CHILD\"; true')\n");
	cf_fx_fmt(native, sizeof native,
		  "%s/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
		  pkg);
	cf_fx_mkdirs(native);
	rmdir(native);
	struct cf_fx_out c;
	cf_fx_run(&c, NULL, NULL, NULL, CF_ARGV("/bin/cp", "/bin/busybox", native));
	cr_assert_eq(c.status, 0);
	cf_fx_out_free(&c);
	cf_fx_mkdirs(bin);
	cf_fx_fmt(link, sizeof link, "%s/codex", bin);
	cr_assert_eq(symlink("../lib/node_modules/@openai/codex/bin/codex.js", link), 0);
	return bin;
}

/* Lines of TEXT that start with PREFIX. */
static size_t lines_with(const char *text, const char *prefix)
{
	size_t n = 0, k = strlen(prefix);
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		n += strncmp(l, prefix, k) == 0;
	return n;
}

static void expect_fenced_children(const char *what)
{
	struct stat st;
	cr_expect(strstr(o.out, "READ rc=1"), "%s: the key's read did not fail: " OUT_FMT, what,
		  OUT_ARGS(o));
	cr_expect(strstr(o.out, "Permission denied") || strstr(o.err, "Permission denied"),
		  "%s: no EACCES: " OUT_FMT, what, OUT_ARGS(o));
	cf_fx_assert_no_marker(&fx, &o);
	cr_expect(!strstr(o.out, "HOME-WRITE rc=0"), "%s: " OUT_FMT, what, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "OUTSIDE-WRITE rc=0"), "%s: " OUT_FMT, what, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "CHMOD rc=0"), "%s: " OUT_FMT, what, OUT_ARGS(o));
	cr_expect_neq(access(cf_fx_at(fx.home, "planted"), F_OK), 0, "%s: a child wrote the home",
		      what);
	cr_expect_neq(access(cf_fx_at(fx.root, "outside/planted"), F_OK), 0,
		      "%s: a child wrote outside", what);
	cr_assert_eq(stat(cf_fx_at(fx.home, "notes.txt"), &st), 0);
	cr_expect_neq(st.st_mode & 0777, 0600, "%s: a child changed a mode outside", what);
	cr_expect(strstr(o.out, "WS-WRITE rc=0"), "%s: the workspace write failed: " OUT_FMT, what,
		  OUT_ARGS(o));
	unlink(cf_fx_at(fx.ws, "out.txt"));
}

/* `credfence harness -- NAME` with each fault, in the default mode. */
static void each_fault(const char *name, const char *bin)
{
	char path[PATH_MAX * 2], outside[PATH_MAX + 32], log[PATH_MAX + 32], logopt[PATH_MAX + 40];
	char child[PATH_MAX + 32];
	cf_fx_fmt(path, sizeof path, "PATH=%s:%s", bin, getenv("PATH"));
	cf_fx_fmt(outside, sizeof outside, "CF_T_OUTSIDE=%s/outside", fx.root);
	cf_fx_fmt(child, sizeof child, "CF_T_CHILD=%s/child.sh", fx.root);
	cf_fx_write(child + strlen("CF_T_CHILD="), CHILD_CMDS);
	cf_fx_mkdirs(cf_fx_at(fx.root, "outside"));
	for (size_t i = 0; i < N_FAULTS; i++) {
		char fault[64], what[128];
		cf_fx_fmt(fault, sizeof fault, "CF_TEST_USERNS=%s", faults[i]);
		cf_fx_fmt(what, sizeof what, "%s, %s", name, faults[i]);
		cf_fx_fmt(log, sizeof log, "%s/log-%s.jsonl", fx.root, faults[i]);
		cf_fx_fmt(logopt, sizeof logopt, "--log=%s", log);
		cf_fx_credfence(&o, &fx, "harness", (const char *[]){path, outside, child, fault, NULL},
				CF_ARGV(logopt, "--", (char *)name));
		cr_expect_eq(o.status, 0, "%s: the harness did not start: " OUT_FMT, what, OUT_ARGS(o));
		expect_fenced_children(what);
		char *text = cf_fx_slurp(log);
		cr_assert(text, "%s: no log", what);
		if (guard_off(faults[i])) {
			/* One line, on the user's terminal: what is off, why, the fix. */
			cr_expect_eq(lines_with(o.err, "credfence: warning: harness: no mount namespace ("),
				     1, "%s: " OUT_FMT, what, OUT_ARGS(o));
			cr_expect(strstr(o.err, "off: the guard over the harness's own reads"),
				  "%s: " OUT_FMT, what, OUT_ARGS(o));
			cr_expect(strstr(o.err, remedy(faults[i])), "%s: no remedy: " OUT_FMT, what,
				  OUT_ARGS(o));
			cr_expect(strstr(text, "\"event\":\"harness_guard\""), "%s: %s", what, text);
			cr_expect(strstr(text, "\"no_namespace\":true"), "%s: %s", what, text);
		} else {
			cr_expect(!strstr(o.err, "no mount namespace"), "%s: " OUT_FMT, what,
				  OUT_ARGS(o));
			cr_expect(strstr(text, "\"applied\":true"), "%s: %s", what, text);
		}
		free(text);
		cf_fx_out_free(&o);
	}
}

Test(nouserns, claude_starts_and_fences_its_children)
{
	cf_test_require_landlock();
	cf_test_require_userns_switch();
	each_fault("claude", agent_script("claude"));
}

Test(nouserns, codex_starts_and_fences_its_children)
{
	cf_test_require_landlock();
	cf_test_require_userns_switch();
	each_fault("codex", codex_layout());
}

Test(nouserns, gemini_starts_and_fences_its_children)
{
	cf_test_require_landlock();
	cf_test_require_userns_switch();
	each_fault("gemini", agent_script("gemini"));
}

Test(nouserns, opencode_starts_and_fences_its_children)
{
	cf_test_require_landlock();
	cf_test_require_userns_switch();
	each_fault("opencode", agent_script("opencode"));
}

/* `credfence status` names the guard and write protection as off, with the
 * remedy; with no fault, the guard is on. */
Test(nouserns, status_names_what_is_off)
{
	cf_test_require_landlock();
	cf_test_require_userns_switch();
	for (size_t i = 0; i < N_FAULTS; i++) {
		char fault[64];
		cf_fx_fmt(fault, sizeof fault, "CF_TEST_USERNS=%s", faults[i]);
		cf_fx_credfence(&o, &fx, "status", (const char *[]){fault, NULL}, NULL);
		cr_expect_eq(o.status, 0, "%s: " OUT_FMT, faults[i], OUT_ARGS(o));
		if (guard_off(faults[i])) {
			cr_expect(strstr(o.out, "\nharness guard: off: "), "%s: " OUT_FMT, faults[i],
				  OUT_ARGS(o));
			cr_expect(strstr(o.out, remedy(faults[i])), "%s: " OUT_FMT, faults[i],
				  OUT_ARGS(o));
		} else {
			cr_expect(strstr(o.out, "\nharness guard: on: "), "%s: " OUT_FMT, faults[i],
				  OUT_ARGS(o));
		}
		/* Write protection of credfence run and self mode: root makes only
		 * a mount namespace, which seccomp alone refuses it. */
		if (guard_off(faults[i]))
			cr_expect(strstr(o.out, "\nmetadata:     supervisor; write protection off: "),
				  "%s: " OUT_FMT, faults[i], OUT_ARGS(o));
		cf_fx_out_free(&o);
		cf_fx_credfence(&o, &fx, "status", (const char *[]){fault, NULL}, CF_ARGV("--json"));
		cr_expect(strstr(o.out, guard_off(faults[i]) ? "\"harness_guard\":\"off\""
							     : "\"harness_guard\":\"on\""),
			  "%s: " OUT_FMT, faults[i], OUT_ARGS(o));
		cf_fx_out_free(&o);
	}
	cf_fx_credfence(&o, &fx, "status", NULL, NULL);
	cr_expect(strstr(o.out, "\nharness guard: on: "), OUT_FMT, OUT_ARGS(o));
}

/* --write-protect=require is the user's own choice: it still refuses. */
Test(nouserns, write_protect_require_still_refuses)
{
	cf_test_require_landlock();
	cf_test_require_userns_switch();
	const char *bin = agent_script("claude");
	char path[PATH_MAX * 2];
	cf_fx_fmt(path, sizeof path, "PATH=%s:%s", bin, getenv("PATH"));
	cf_fx_credfence(&o, &fx, "harness",
			(const char *[]){path, "CF_TEST_USERNS=seccomp", NULL},
			CF_ARGV("--write-protect=require", "--", "claude"));
	cr_expect_eq(o.status, 125, OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "Nothing was run."), OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "READ rc="), "the harness ran: " OUT_FMT, OUT_ARGS(o));
}

/* credfence run in each way: the command runs with the read fence, as the
 * user it is (a process left in a user namespace whose id maps could not
 * be written would be nobody, and could create no file: Ubuntu's rule
 * makes the namespace and then refuses the maps, so the steps are tried in
 * a child first), and the warning names the cause and its remedy. */
Test(nouserns, run_works_in_each_way)
{
	cf_test_require_landlock();
	cf_test_require_userns_switch();
	char uid[32];
	cf_fx_fmt(uid, sizeof uid, "UID %u\n", (unsigned)geteuid());
	for (size_t i = 0; i < N_FAULTS; i++) {
		char fault[64];
		cf_fx_fmt(fault, sizeof fault, "CF_TEST_USERNS=%s", faults[i]);
		fenced(&o, &fx, (const char *[]){fault, NULL}, NULL,
		       CF_ARGV("/bin/sh", "-c",
			       "echo built > out.txt && echo \"UID $(id -u)\"; "
			       "echo \"ROOT-OWNS-/ $(stat -c %u /)\"; "
			       "cat \"$HOME/.ssh/id_ed25519\"; echo \"READ rc=$?\""));
		cr_expect_eq(o.status, 0, "%s: " OUT_FMT, faults[i], OUT_ARGS(o));
		cr_expect(strstr(o.out, uid), "%s: not run as its own user: " OUT_FMT, faults[i],
			  OUT_ARGS(o));
		/* Not nobody's own test: in a namespace without maps, root's
		 * files show as nobody's too. */
		cr_expect(strstr(o.out, "ROOT-OWNS-/ 0\n"), "%s: ids are not mapped: " OUT_FMT,
			  faults[i], OUT_ARGS(o));
		cr_expect_eq(access(cf_fx_at(fx.ws, "out.txt"), F_OK), 0,
			     "%s: the workspace write failed: " OUT_FMT, faults[i], OUT_ARGS(o));
		cr_expect(strstr(o.out, "READ rc=1"), "%s: " OUT_FMT, faults[i], OUT_ARGS(o));
		cf_fx_assert_no_marker(&fx, &o);
		if (guard_off(faults[i])) {
			cr_expect(strstr(o.err, "credfence: write protection is off: "), "%s: " OUT_FMT,
				  faults[i], OUT_ARGS(o));
			cr_expect(strstr(o.err, remedy(faults[i])), "%s: " OUT_FMT, faults[i],
				  OUT_ARGS(o));
		}
		unlink(cf_fx_at(fx.ws, "out.txt"));
		cf_fx_out_free(&o);
	}
}
