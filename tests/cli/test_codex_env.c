/* Codex's shell_environment_policy judged (cli/codex_env.c): what its
 * shell keeps of LD_PRELOAD and the CREDFENCE_* variables, layer over layer. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "codex_env.h"

static struct cf_codex_env e;

static void setup(void)
{
	cf_codex_env_init(&e);
}

static void teardown(void)
{
	cf_codex_env_free(&e);
}

static int layer(const char *doc)
{
	return cf_codex_env_layer(&e, doc, strlen(doc), "config.toml");
}

static const char *val(const char *name)
{
	return cf_codex_env_value(&e, name, "/lib/libcredfence.so", NULL);
}

TestSuite(codex_env, .init = setup, .fini = teardown);

Test(codex_env, no_policy_keeps_everything)
{
	cr_assert_eq(layer("model = \"x\"\n[model_providers.fake]\nname = \"f\"\n"), 0);
	cr_expect_str_eq(val("LD_PRELOAD"), "/lib/libcredfence.so");
	cr_expect(val("CREDFENCE_WORKSPACE"));
}

Test(codex_env, inherit_core_or_none_drops_the_shim)
{
	const char *why;
	cr_assert_eq(layer("[shell_environment_policy]\ninherit = \"core\"\n"), 0);
	cr_expect_null(cf_codex_env_value(&e, "LD_PRELOAD", "x", &why));
	cr_expect_str_eq(why, "inherit");
	cr_expect_str_eq(e.inherit_from, "config.toml");
	cr_expect(val("HOME"), "a core variable stays");
	cr_assert_eq(layer("shell_environment_policy = { inherit = \"none\" }\n"), 0);
	cr_expect_null(val("HOME"));
	cr_assert_eq(layer("shell_environment_policy.inherit = \"all\"\n"), 0);
	cr_expect(val("LD_PRELOAD"), "a later layer's inherit wins");
}

Test(codex_env, set_puts_the_shim_back_and_names_what_it_gives)
{
	cr_assert_eq(layer("[shell_environment_policy]\ninherit = \"core\"\n"
			   "set = { LD_PRELOAD = \"/usr/local/lib/libcredfence.so\" }\n"),
		     0);
	cr_expect_str_eq(val("LD_PRELOAD"), "/usr/local/lib/libcredfence.so");
	cr_expect_null(val("CREDFENCE_WORKSPACE"));
	cr_assert_eq(layer("[shell_environment_policy.set]\nLD_PRELOAD = \"/other.so\"\n"
			   "CREDFENCE_WORKSPACE = \"/w\"\n"),
		     0);
	cr_expect_str_eq(val("LD_PRELOAD"), "/other.so", "the last layer's value");
	cr_expect_str_eq(val("CREDFENCE_WORKSPACE"), "/w");
	cr_expect_eq(e.set.n, 2);
}

Test(codex_env, exclude_and_include_only_as_case_insensitive_globs)
{
	const char *why;
	cr_assert_eq(layer("[shell_environment_policy]\nexclude = [\"AWS_*\", \"ld_*\"]\n"), 0);
	cr_expect_null(cf_codex_env_value(&e, "LD_PRELOAD", "x", &why));
	cr_expect_str_eq(why, "exclude");
	cr_expect(val("CREDFENCE_HOME"));
	cr_assert_eq(layer("[shell_environment_policy]\nexclude = []\n"
			   "include_only = [\"PATH\", \"HOME\"]\n"),
		     0);
	cr_expect_null(cf_codex_env_value(&e, "LD_PRELOAD", "x", &why));
	cr_expect_str_eq(why, "include_only");
	cr_assert_eq(layer("[shell_environment_policy]\ninclude_only = [\"PATH\", \"LD_PRELOAD\", "
			   "\"CREDFENCE_?ORKSPACE\"]\n"),
		     0);
	cr_expect(val("LD_PRELOAD"));
	cr_expect(val("CREDFENCE_WORKSPACE"));
	cr_expect_null(val("CREDFENCE_DENY"));
	/* The defaults drop *KEY* *SECRET* *TOKEN*: none of credfence's names. */
	cr_expect_null(cf_codex_env_value(&e, "PATH_TOKEN", "x", &why));
}

Test(codex_env, globs)
{
	cr_expect(cf_codex_glob("*", "LD_PRELOAD"));
	cr_expect(cf_codex_glob("l?_pre*", "LD_PRELOAD"));
	cr_expect(cf_codex_glob("*PRE*D", "LD_PRELOAD"));
	cr_expect_not(cf_codex_glob("LD_PRELOAD_", "LD_PRELOAD"));
	cr_expect_not(cf_codex_glob("D_*", "LD_PRELOAD"));
	cr_expect(cf_codex_glob("**", ""));
}

Test(codex_env, what_it_can_not_judge_is_refused)
{
	cr_expect_eq(layer("[shell_environment_policy]\ninherit = \"some\"\n"), -EINVAL);
	cr_expect(strstr(e.cant, "inherit"), "%s", e.cant);
	e.cant[0] = '\0';
	cr_expect_eq(layer("[shell_environment_policy]\nfilters = { LD_PRELOAD = \"drop\" }\n"), -EINVAL);
	cr_expect(strstr(e.cant, "filters"), "%s", e.cant);
	e.cant[0] = '\0';
	cr_expect_eq(layer("[profiles.x.shell_environment_policy]\ninherit = \"none\"\n"), -EINVAL);
	e.cant[0] = '\0';
	cr_expect_eq(layer("[shell_environment_policy]\nexclude = \"LD_*\"\n"), -EINVAL);
	e.cant[0] = '\0';
	cr_expect_eq(layer("[shell_environment_policy]\nset = { LD_PRELOAD = 1 }\n"), -EINVAL);
	e.cant[0] = '\0';
	cr_expect_eq(layer("[shell_environment_policy]\ninherit = core\n"), -EINVAL);
	cr_expect(strstr(e.cant, "line 2"), "%s", e.cant);
	e.cant[0] = '\0';
	cr_expect_eq(layer("[[shell_environment_policy]]\ninherit = \"all\"\n"), -EINVAL);
	/* Unknown keys elsewhere are not ours to judge. */
	e.cant[0] = '\0';
	cr_expect_eq(layer("[whatever]\nfilters = 1\n"), 0);
	/* A policy hidden in a multi-line string is text, not a key. */
	cr_expect_eq(layer("notify = \"\"\"\n[shell_environment_policy]\ninherit = \"none\"\n\"\"\"\n"), 0);
	cr_expect(val("LD_PRELOAD"));
}

Test(codex_env, command_line_overrides)
{
	cr_assert_eq(cf_codex_env_override(&e, "model=o3"), 0);
	cr_assert_eq(cf_codex_env_override(&e, "shell_environment_policy.inherit=core"), 0,
		     "a bare value is a string to Codex");
	cr_expect_null(val("LD_PRELOAD"));
	cr_assert_eq(cf_codex_env_override(&e, "shell_environment_policy.inherit=\"all\""), 0);
	cr_expect(val("LD_PRELOAD"));
	cr_assert_eq(cf_codex_env_override(&e, "shell_environment_policy.set.LD_PRELOAD=/x \"y\".so"), 0);
	cr_expect_str_eq(val("LD_PRELOAD"), "/x \"y\".so");
	cr_expect_eq(cf_codex_env_override(&e, "shell_environment_policy.filters=[1]"), -EINVAL);
}
