/* `credfence run -- claude` (codex, gemini, opencode): a known agent harness
 * under run would be fenced itself and refused its own state and login, so
 * run refuses with exit 125 and one line naming `credfence harness` with the
 * user's own options and command (issue 19 item 5). A fake agent on PATH
 * would leave a file if it ran; other commands run as before. */
#include <sys/stat.h>
#include <unistd.h>

#include "enforce_test.h"

CF_SUITE_STATE()
TestSuite(run_harness, .init = cf_suite_setup, .fini = cf_suite_teardown, .timeout = 60 * CF_TIMEOUT_SCALE);

/* A fake NAME in ROOT/agents that records that it ran. */
static void fake_agent(const char *name)
{
	char text[PATH_MAX + 64];
	cf_fx_fmt(text, sizeof text, "#!/bin/sh\necho ran > '%s/ran-%s'\n", fx.ws, name);
	const char *path = cf_fx_at(cf_fx_at(fx.root, "agents"), name);
	cf_fx_write(path, text);
	cr_assert_eq(chmod(path, 0755), 0);
}

static void run_cmd(char *const cmd[])
{
	char path[2 * PATH_MAX + 16];
	cf_fx_fmt(path, sizeof path, "PATH=%s/agents:%s", fx.root, getenv("PATH"));
	struct argvb b = {.n = 0};
	argvb_add(&b, "%s", cf_fx_bin());
	argvb_add(&b, "run");
	argvb_add(&b, "--home");
	argvb_add(&b, "%s", fx.home);
	argvb_add(&b, "--workspace");
	argvb_add(&b, "%s", fx.ws);
	argvb_add(&b, "--");
	for (size_t i = 0; cmd[i]; i++)
		argvb_add(&b, "%s", cmd[i]);
	char **env = cf_fx_env(&fx, (const char *[]){path, NULL});
	cf_fx_run(&o, fx.ws, env, NULL, b.v);
	cf_fx_env_free(env);
}

/* Lines of TEXT that are not warnings. */
static size_t message_lines(const char *text)
{
	size_t n = 0;
	for (const char *l = text; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l))
		n += strncmp(l, "credfence: warning: ", 20) != 0;
	return n;
}

static void assert_pointed_to_harness(const char *name, const char *product, const char *tail)
{
	char want[4 * PATH_MAX];
	cr_expect_eq(o.status, 125, "%s: exit %d, expected 125: %s", name, o.status, o.err);
	cf_fx_fmt(want, sizeof want, "credfence: %s is %s, an agent harness:", name, product);
	cr_expect(strstr(o.err, want), "no line naming %s: %s", name, o.err);
	cf_fx_fmt(want, sizeof want, "run it as `credfence harness --home %s --workspace %s -- %s%s`. "
		  "Nothing was run.\n", fx.home, fx.ws, name, tail);
	cr_expect(strstr(o.err, want), "not the exact command %s: %s", want, o.err);
	cr_expect_eq(message_lines(o.err), 1, "not one line: %s", o.err);
	const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
	char ran[PATH_MAX + 64];
	cf_fx_fmt(ran, sizeof ran, "%s/ran-%s", fx.ws, base);
	cr_expect_neq(access(ran, F_OK), 0, "%s ran", name);
}

Test(run_harness, known_agents_are_pointed_to_harness)
{
	const char *names[][2] = {{"claude", "Claude Code"}, {"codex", "Codex"},
				  {"gemini", "Gemini CLI"}, {"opencode", "opencode"}};
	for (size_t i = 0; i < 4; i++) {
		fake_agent(names[i][0]);
		run_cmd(CF_ARGV((char *)names[i][0], "-p", "it's fine"));
		assert_pointed_to_harness(names[i][0], names[i][1], " -p 'it'\\''s fine'");
		cf_fx_out_free(&o);
	}
}

/* By its path too: the last component names it. */
Test(run_harness, known_agent_by_path)
{
	fake_agent("claude");
	char path[PATH_MAX + 32];
	cf_fx_fmt(path, sizeof path, "%s/agents/claude", fx.root);
	run_cmd(CF_ARGV(path));
	assert_pointed_to_harness(path, "Claude Code", "");
}

/* A name that only holds one (claude-helper, xcodex) is another program. */
Test(run_harness, other_programs_run)
{
	fake_agent("claude-helper");
	run_cmd(CF_ARGV("claude-helper"));
	cr_expect_eq(o.status, 0, "exit %d: %s", o.status, o.err);
	cr_expect_eq(access(cf_fx_at(fx.ws, "ran-claude-helper"), F_OK), 0, "it did not run");
}
