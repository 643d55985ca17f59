/* The table of known harnesses (issue 19): `credfence harness -- claude`
 * (codex, opencode) works for a first-time user with no flag, and a Codex
 * configuration that would start its commands unfenced is refused, exit
 * 125, with the line to add, before anything runs. Stand-ins named as the
 * agents: a bash script as claude, and Codex's layout (a wrapper script in
 * @openai/codex/bin, busybox as its static native program). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
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

TestSuite(shim_known, .init = setup, .fini = teardown, .timeout = 120 * CF_TIMEOUT_SCALE);

static void script(const char *path, const char *text)
{
	cf_fx_write(path, text);
	cr_assert_eq(chmod(path, 0755), 0);
}

static char path_var[PATH_MAX * 2];

/* DIR first on PATH. */
static const char *path_with(const char *dir)
{
	cf_fx_fmt(path_var, sizeof path_var, "PATH=%s:%s", dir, getenv("PATH"));
	return path_var;
}

/* Claude Code's Bash tool writes its shell snapshot from the fenced shell;
 * a first-time user has no ~/.claude at all. */
#define CLAUDE_SCRIPT                                                                       \
	"#!/bin/bash\n"                                                                     \
	"/bin/sh -c 'echo snap > \"$1/snapshot-bash-1.sh\" && echo STATE-WRITE ok' sh "     \
	"\"${CLAUDE_CONFIG_DIR:-$HOME/.claude}/shell-snapshots\"\n"                         \
	"/bin/sh -c 'echo x > \"$HOME/.claude/settings.json\"; d=$?; [ $d -ne 0 ] && d=1; " \
	"echo \"CASE settings deny=$d legit=0\"'\n"                                                     \
	"/bin/sh -c 'cat \"$CF_T_KEY\"; d=$?; cat \"$CF_T_ALLOWED\"; echo \"CASE key "      \
	"deny=$d legit=$?\"'\n"

Test(shim_known, claude_as_a_first_time_user_needs_no_flag)
{
	char bin[PATH_MAX], claude[PATH_MAX + 16], dot[PATH_MAX + 16], snap[PATH_MAX + 64];
	cf_fx_fmt(bin, sizeof bin, "%s/agents", t.fx.root);
	cf_fx_fmt(claude, sizeof claude, "%s/claude", bin);
	script(claude, CLAUDE_SCRIPT);
	cf_fx_fmt(dot, sizeof dot, "%s/.claude", t.fx.home);
	cf_fx_rmtree(dot); /* the agent never ran here */
	cf_fx_fmt(snap, sizeof snap, "%s/shell-snapshots", dot);
	char **env = st_env(&t, (const char *[]){path_with(bin), NULL});
	struct cf_fx_out o;
	st_harness(&o, &t, env, NULL, CF_ARGV("claude"));
	st_dump("claude, first time", &o);
	cr_expect_eq(o.status, 0, "%s", o.err);
	cr_expect(strstr(o.out, "STATE-WRITE ok"), "its fenced shell could not write its snapshot");
	struct stat st;
	cr_expect(stat(snap, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700,
		  "%s was not made 0700 (mode %o)", snap, st.st_mode & 0777);
	cr_expect(stat(dot, &st) == 0 && (st.st_mode & 0777) == 0700, "~/.claude not 0700");
	cr_expect(access(cf_fx_at(snap, "snapshot-bash-1.sh"), F_OK) == 0);
	/* Writable is the snapshot directory only: not its settings beside it. */
	st_assert_cases(&t, &o, 2, 1, false);
	cf_fx_out_free(&o);

	/* A returning user: the same, the directory is left as it is. */
	cr_assert_eq(chmod(snap, 0750), 0);
	st_harness(&o, &t, env, NULL, CF_ARGV("claude"));
	cr_expect_eq(o.status, 0, "%s", o.err);
	cr_expect(strstr(o.out, "STATE-WRITE ok"));
	cr_expect(stat(snap, &st) == 0 && (st.st_mode & 0777) == 0750, "a directory was remade");
	st_assert_cases(&t, &o, 2, 1, false);
	cf_fx_out_free(&o);
	cf_fx_env_free(env);
}

/* The state directory is judged before it is made: moved into a secret
 * (CLAUDE_CONFIG_DIR=~/.ssh/claude), it is refused and nothing is made. */
Test(shim_known, a_state_directory_in_a_secret_is_refused_and_not_made)
{
	char bin[PATH_MAX], claude[PATH_MAX + 16], moved[PATH_MAX + 32], cfg[PATH_MAX + 64];
	cf_fx_fmt(bin, sizeof bin, "%s/agents", t.fx.root);
	cf_fx_fmt(claude, sizeof claude, "%s/claude", bin);
	script(claude, CLAUDE_SCRIPT);
	cf_fx_fmt(moved, sizeof moved, "%s/.ssh/claude", t.fx.home);
	cf_fx_fmt(cfg, sizeof cfg, "CLAUDE_CONFIG_DIR=%s", moved);
	char **env = st_env(&t, (const char *[]){path_with(bin), cfg, NULL});
	struct cf_fx_out o;
	st_harness(&o, &t, env, NULL, CF_ARGV("claude"));
	st_dump("claude, state in a secret", &o);
	cr_expect_eq(o.status, 125);
	cr_expect(strstr(o.err, "lies in") && strstr(o.err, "Nothing was run."), "%s", o.err);
	cr_expect(strstr(o.err, "credfence: harness: Claude Code's state ("),
		  "the refusal does not say where the directory comes from: %s", o.err);
	cr_expect(access(moved, F_OK) != 0, "%s was made", moved);
	cr_expect(!strstr(o.out, "CASE"), "the harness ran");
	cf_fx_assert_no_marker(&t.fx, &o);
	cf_fx_out_free(&o);
	cf_fx_env_free(env);
}

/* Codex as npm installs it: PREFIX/bin/codex -> the wrapper, its native
 * program in the platform package nested under it (npm install -g). The
 * wrapper starts the native program (busybox as sh), which runs cat with
 * the preload kept: cat fences itself. */
static void codex_layout(char *bin, size_t n, bool with_native)
{
	cf_fx_fmt(bin, n, "%s/npm/bin", t.fx.root);
	char pkg[PATH_MAX], wrapper[PATH_MAX + 32], native[PATH_MAX * 2], link[PATH_MAX + 16];
	cf_fx_fmt(pkg, sizeof pkg, "%s/npm/lib/node_modules/@openai/codex", t.fx.root);
	cf_fx_fmt(wrapper, sizeof wrapper, "%s/bin/codex.js", pkg);
	script(wrapper,
	       "#!/bin/bash\n"
	       "n=$(dirname \"$(readlink -f \"$0\")\")/../node_modules/@openai/codex-linux-x64/"
	       "vendor/x86_64-unknown-linux-musl/bin/codex\n"
	       "(exec -a sh \"$n\" -c '/usr/bin/cat \"$CF_T_KEY\"; d=$?; /usr/bin/cat "
	       "\"$CF_T_ALLOWED\"; echo \"CASE codex-shell deny=$d legit=$?\"')\n");
	if (with_native) {
		cf_fx_fmt(native, sizeof native,
			  "%s/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/"
			  "bin/codex",
			  pkg);
		cf_fx_mkdirs(native);
		rmdir(native);
		struct cf_fx_out o;
		cf_fx_run(&o, NULL, NULL, NULL, CF_ARGV("/bin/cp", "/bin/busybox", native));
		cr_assert_eq(o.status, 0);
		cf_fx_out_free(&o);
	}
	cf_fx_mkdirs(bin);
	cf_fx_fmt(link, sizeof link, "%s/codex", bin);
	cr_assert_eq(symlink("../lib/node_modules/@openai/codex/bin/codex.js", link), 0);
}

static void codex_config(const char *text)
{
	cf_fx_write(cf_fx_at(t.fx.home, ".codex/config.toml"), text);
}

static void run_codex(struct cf_fx_out *o, const char *bin, const char *what)
{
	char **env = st_env(&t, (const char *[]){path_with(bin), NULL});
	st_harness(o, &t, env, NULL, CF_ARGV("codex", "exec", "hello"));
	st_dump(what, o);
	cf_fx_env_free(env);
}

static void expect_refused(const struct cf_fx_out *o, const char *because)
{
	cr_expect_eq(o->status, 125, "%s", o->err);
	cr_expect(strncmp(o->err, "credfence: harness: Codex's commands would run unfenced: ", 57) == 0,
		  "%s", o->err);
	cr_expect(strstr(o->err, because), "want '%s' in: %s", because, o->err);
	cr_expect(strstr(o->err, "Nothing was run."), "%s", o->err);
	cr_expect(!strstr(o->out, "CASE"), "the harness ran");
	cf_fx_assert_no_marker(&t.fx, o);
}

Test(shim_known, codex_needs_no_flag_and_runs_its_commands_fenced)
{
	cf_test_require_tool("/bin/busybox");
	char bin[PATH_MAX];
	codex_layout(bin, sizeof bin, true);
	struct cf_fx_out o;
	run_codex(&o, bin, "codex, no configuration");
	cr_expect_eq(o.status, 0, "%s", o.err);
	cr_expect(!strstr(o.err, "--static-harness"), "a warning for the known harness: %s", o.err);
	st_assert_cases(&t, &o, 1, 1, false);
	cf_fx_out_free(&o);

	/* inherit = "core" with the set line credfence asks for: accepted. */
	char conf[PATH_MAX * 3];
	cf_fx_fmt(conf, sizeof conf,
		  "model = \"m\"\n[shell_environment_policy]\ninherit = \"core\"\n"
		  "set = { LD_PRELOAD = \"%s/lib/libcredfence.so\", CREDFENCE_WORKSPACE = \"%s\" }\n",
		  t.fx.root, t.fx.ws);
	codex_config(conf);
	run_codex(&o, bin, "codex, core with the set line");
	cr_expect_eq(o.status, 0, "%s", o.err);
	st_assert_cases(&t, &o, 1, 1, false);
	cf_fx_out_free(&o);
}

Test(shim_known, codex_configurations_that_would_run_open_are_refused)
{
	cf_test_require_tool("/bin/busybox");
	char bin[PATH_MAX], want[PATH_MAX * 2];
	codex_layout(bin, sizeof bin, true);
	struct cf_fx_out o;

	codex_config("[shell_environment_policy]\ninherit = \"core\"\n");
	run_codex(&o, bin, "codex, inherit core");
	expect_refused(&o, "drops LD_PRELOAD (inherit = \"core\" in ");
	cf_fx_fmt(want, sizeof want, "add the line: set = { LD_PRELOAD = \"%s/lib/libcredfence.so\", "
		  "CREDFENCE_WORKSPACE = \"%s\" }", t.fx.root, t.fx.ws);
	cr_expect(strstr(o.err, want), "want: %s\n%s", want, o.err);
	cf_fx_out_free(&o);

	codex_config("[shell_environment_policy]\ninherit = \"core\"\n"
		     "set = { LD_PRELOAD = \"/usr/local/lib/cf-missing/libcredfence.so\" }\n");
	run_codex(&o, bin, "codex, a set line naming a missing shim");
	expect_refused(&o, "/usr/local/lib/cf-missing/libcredfence.so\", which does not exist");
	cr_expect(strstr(o.err, "change its set line to: set = { LD_PRELOAD = "), "%s", o.err);
	cf_fx_out_free(&o);

	codex_config("[shell_environment_policy]\nset = { LD_PRELOAD = \"/bin/true\" }\n");
	run_codex(&o, bin, "codex, a set line naming another library");
	expect_refused(&o, "is not this credfence's shim");
	cf_fx_out_free(&o);

	codex_config("[shell_environment_policy]\nexclude = [\"LD_*\"]\n");
	run_codex(&o, bin, "codex, exclude");
	expect_refused(&o, "drops LD_PRELOAD (a pattern of exclude");
	cf_fx_out_free(&o);

	codex_config("[shell_environment_policy]\ninclude_only = [\"PATH\", \"LD_PRELOAD\"]\n");
	run_codex(&o, bin, "codex, include_only without CREDFENCE_*");
	expect_refused(&o, "drops CREDFENCE_WORKSPACE (include_only)");
	cr_expect(strstr(o.err, "add \"LD_PRELOAD\" and \"CREDFENCE_*\" to include_only"), "%s", o.err);
	cf_fx_out_free(&o);

	codex_config("[shell_environment_policy]\ninherit = core\n");
	run_codex(&o, bin, "codex, TOML it can not read");
	expect_refused(&o, "line 2 is TOML that credfence's reader does not follow");
	cf_fx_out_free(&o);

	/* A project's own layer, and an override on Codex's command line. */
	codex_config("");
	cf_fx_write(cf_fx_at(t.fx.ws, ".codex/config.toml"),
		    "[shell_environment_policy]\ninherit = \"none\"\n");
	run_codex(&o, bin, "codex, a project layer");
	expect_refused(&o, "inherit = \"none\" in ");
	cr_expect(strstr(o.err, t.fx.ws), "%s", o.err);
	cf_fx_out_free(&o);
	cf_fx_rmtree(cf_fx_at(t.fx.ws, ".codex"));
	char **env = st_env(&t, (const char *[]){path_with(bin), NULL});
	st_harness(&o, &t, env, NULL,
		   CF_ARGV("codex", "-c", "shell_environment_policy.inherit=core", "exec", "x"));
	expect_refused(&o, "inherit = \"core\" in -c");
	cf_fx_out_free(&o);
	cf_fx_env_free(env);
}

Test(shim_known, codex_without_its_native_program_is_refused)
{
	char bin[PATH_MAX];
	codex_layout(bin, sizeof bin, false);
	struct cf_fx_out o;
	run_codex(&o, bin, "codex, no native program");
	cr_expect_eq(o.status, 125, "%s", o.err);
	cr_expect(strstr(o.err, "starts a native program that is not where it looks"), "%s", o.err);
	cr_expect(strstr(o.err, "--harness-program PATH"), "%s", o.err);
	cr_expect(!strstr(o.out, "CASE"));
	cf_fx_out_free(&o);
}
