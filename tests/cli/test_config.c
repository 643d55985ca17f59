/* The policy files (cli/config.c) and Claude Code's sandbox settings
 * (cli/settings.c): every key of the option table round-trips against its
 * option, bad files are refused with their line, the command line wins, and
 * settings deny what the equivalent options deny. A fake home throughout:
 * HOME is the fixture's, here and in every credfence run. */
#include <criterion/criterion.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "enforce_test.h"

#ifndef CF_CONFIG_FIXTURES
#error "CF_CONFIG_FIXTURES (tests/cli/fixtures) comes from meson"
#endif

CF_SUITE_STATE()

static void setup(void)
{
	cf_suite_setup();
	/* This process's own reads (the round trip) see the fake home only. */
	cr_assert_eq(setenv("HOME", fx.home, 1), 0);
	unsetenv("XDG_CONFIG_HOME");
	unsetenv("CREDFENCE_CONFIG");
	unsetenv("CREDFENCE_SETTINGS");
}

TestSuite(config, .init = setup, .fini = cf_suite_teardown, .timeout = 60 * CF_TIMEOUT_SCALE);

/* TEXT as a policy file at PATH, mode 0600. */
static void policy(const char *path, const char *text)
{
	cf_fx_write(path, text);
	cr_assert_eq(chmod(path, 0600), 0, "%s", strerror(errno));
}

static const char *user_file(void)
{
	return cf_fx_at(fx.home, ".config/credfence/config.json");
}

/* A value of row R: ARG for its option (NULL: a switch), JSON for its key. */
static void sample(const struct cf_var_row *r, char *arg, size_t an, char *json, size_t jn)
{
	char path[PATH_MAX];
	cf_fx_fmt(path, sizeof path, "%s/p-%s", fx.root, r->key);
	switch (r->kind) {
	case CF_KIND_PATH:
		cf_fx_fmt(arg, an, "%s", path);
		cf_fx_fmt(json, jn, "\"%s\"", path);
		return;
	case CF_KIND_PATHS:
		policy(path, "{}\n"); /* a settings file, for "settings" */
		cf_fx_fmt(arg, an, "%s", path);
		cf_fx_fmt(json, jn, "[\"%s\"]", path);
		return;
	case CF_KIND_LIST:
		cf_fx_fmt(arg, an, "CF_TEST_NAME");
		cf_fx_fmt(json, jn, "[\"CF_TEST_NAME\"]");
		return;
	case CF_KIND_SWITCH:
		arg[0] = '\0';
		cf_fx_fmt(json, jn, "true");
		return;
	case CF_KIND_MODE:
		arg[0] = '\0';
		cf_fx_fmt(json, jn, "\"best-effort\"");
		return;
	case CF_KIND_PROTECT:
		cf_fx_fmt(arg, an, "require");
		cf_fx_fmt(json, jn, "\"require\"");
		return;
	case CF_KIND_NUMBER:
		cf_fx_fmt(arg, an, "7");
		cf_fx_fmt(json, jn, "7");
		return;
	default:
		cr_assert_fail("%s: a key on a row of kind %s", r->name, cf_var_kind_word(r->kind));
	}
}

/* Slot R of A and B hold the same value. */
static void same_slot(const struct cf_var_row *r, const struct cf_options *a,
		      const struct cf_options *b)
{
	const char *x = (const char *)a + r->slot, *y = (const char *)b + r->slot;
	switch (r->kind) {
	case CF_KIND_PATH: {
		const char *s = *(const char *const *)(const void *)x;
		const char *t = *(const char *const *)(const void *)y;
		cr_assert(s && t, "%s: option %s, file %s", r->key, s ? s : "unset", t ? t : "unset");
		cr_expect_str_eq(s, t, "%s", r->key);
		break;
	}
	case CF_KIND_PATHS:
	case CF_KIND_LIST: {
		const struct cf_strv *s = (const void *)x, *t = (const void *)y;
		cr_assert_eq(s->n, 1, "%s: the option gave %zu entries", r->key, s->n);
		cr_assert_eq(t->n, 1, "%s: the file gave %zu entries", r->key, t->n);
		cr_expect_str_eq(s->v[0], t->v[0], "%s", r->key);
		break;
	}
	case CF_KIND_PROTECT:
		cr_expect_eq(*(const int *)(const void *)x, *(const int *)(const void *)y, "%s",
			     r->key);
		cr_expect_eq(*(const int *)(const void *)y, CF_WRITE_PROTECT_REQUIRE, "%s", r->key);
		break;
	case CF_KIND_SWITCH:
	case CF_KIND_MODE:
		cr_expect_eq(*(const int *)(const void *)x, *(const int *)(const void *)y, "%s",
			     r->key);
		cr_expect_geq(*(const int *)(const void *)y, 0, "%s: the file set nothing", r->key);
		break;
	case CF_KIND_NUMBER:
		cr_expect_eq(*(const long *)(const void *)x, *(const long *)(const void *)y, "%s",
			     r->key);
		break;
	default:
		break;
	}
}

/* One table drives both: each row with an option, given through its key in
 * a --config file, lands in the slot its option fills, with the same value.
 * A row with an option and no key fails here. */
Test(config, every_key_round_trips_against_its_option)
{
	int keys = 0;
	for (size_t i = 0; i < CF_VAR_COUNT; i++) {
		const struct cf_var_row *r = &cf_vars[i];
		if (!r->option || i == CF_VAR_CONFIG)
			continue;
		cr_assert(r->key, "%s (%s) has no key in the policy file", r->name, r->option);
		char arg[PATH_MAX], json[PATH_MAX + 64], text[PATH_MAX + 128], opt[64];
		sample(r, arg, sizeof arg, json, sizeof json);
		cf_fx_fmt(opt, sizeof opt, "%.*s", (int)strcspn(r->option, " ,"), r->option);
		char *argv[] = {opt, arg, "--", "true", NULL};
		if (!arg[0]) /* a switch, or --best-effort */
			memmove(argv + 1, argv + 2, 3 * sizeof *argv);
		int argc = arg[0] ? 4 : 3;
		struct cf_cli a;
		cr_assert_eq(cf_cli_parse(&a, "harness", argc, argv, true, false), 0, "%s", opt);

		const char *file = cf_fx_at(fx.root, "policy.json");
		cf_fx_fmt(text, sizeof text, "{\n  \"%s\": %s\n}\n", r->key, json);
		policy(file, text);
		struct cf_options b;
		struct cf_config cfg;
		cf_options_init(&b);
		b.config = file;
		cr_assert_eq(cf_config_load(&cfg, &b), 0, "%s", text);
		same_slot(r, &a.opts, &b);
		cr_expect(cfg.took[i], "%s: the file's value is not marked as taken", r->key);
		cf_config_free(&cfg);
		cf_options_free(&b);
		cf_cli_free(&a);
		keys++;
	}
	cr_expect_gt(keys, 10, "only %d keys", keys);
}

Test(config, a_tilde_is_the_protected_home)
{
	struct cf_options b;
	struct cf_config cfg;
	cf_fx_mkdirs(cf_fx_at(fx.home, ".cargo/registry"));
	policy(user_file(), "{\"writable\": [\"~/.cargo/registry\"], \"log\": \"~/cf.log\"}\n");
	cf_options_init(&b);
	cr_assert_eq(cf_config_load(&cfg, &b), 0);
	cr_assert_eq(b.writable.n, 1);
	cr_expect_str_eq(b.writable.v[0], cf_fx_at(fx.home, ".cargo/registry"));
	cr_expect_str_eq(b.log, cf_fx_at(fx.home, "cf.log"));
	cf_config_free(&cfg);
	cf_options_free(&b);
}

Test(config, a_key_line_is_found_at_its_depth)
{
	struct cf_config_file f = {.text = "{\n \"x\": {\"denyRead\": 1},\n \"sandbox\": {\n"
					   "  \"filesystem\": {\n   \"denyRead\": []\n  }\n }\n}\n"};
	f.len = strlen(f.text);
	const char *deep[] = {"sandbox", "filesystem", "denyRead"}, *top[] = {"sandbox"};
	cr_expect_eq(cf_config_key_line(&f, deep, 3), 5);
	cr_expect_eq(cf_config_key_line(&f, top, 1), 3);
}

/* "credfence run" with the fixture and OPTS, whose command would leave
 * ws/ran behind: the file must stop it. */
static void refused(char *const opts[], const char *want)
{
	char ran[PATH_MAX];
	cf_fx_fmt(ran, sizeof ran, "%s/ran", fx.ws);
	fenced(&o, &fx, NULL, opts, CF_ARGV("touch", ran));
	cr_expect_eq(o.status, 125, OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, want), "no \"%s\" in:\n" OUT_FMT, want, OUT_ARGS(o));
	cr_expect(strstr(o.err, "Nothing was run."), OUT_FMT, OUT_ARGS(o));
	cr_expect_neq(access(ran, F_OK), 0, "the command ran");
}

static char want[PATH_MAX + 128];

Test(config, a_syntax_error_is_refused_with_its_line)
{
	policy(user_file(), "{\n  \"writable\": [],\n  \"mode\": \"required\"\n  \"ssh_agent\": true\n}\n");
	cf_fx_fmt(want, sizeof want, "credfence: %s:4: not valid JSON", user_file());
	refused(NULL, want);
}

Test(config, an_unknown_key_is_refused_with_its_line)
{
	policy(user_file(), "{\n  \"mode\": \"required\",\n  \"writeable\": [\"~/x\"]\n}\n");
	cf_fx_fmt(want, sizeof want, "credfence: %s:3: unknown key \"writeable\"", user_file());
	refused(NULL, want);
}

Test(config, a_wrong_type_is_refused_with_its_line)
{
	policy(user_file(), "{\n  \"ssh_agent\": \"yes\"\n}\n");
	cf_fx_fmt(want, sizeof want, "credfence: %s:2: \"ssh_agent\" must be true or false",
		  user_file());
	refused(NULL, want);
	policy(user_file(), "{\n\n  \"writable\": \"~/.cargo\"\n}\n");
	cf_fx_fmt(want, sizeof want, "credfence: %s:3: \"writable\" must be an array", user_file());
	refused(NULL, want);
}

/* json-c keeps the last of two equal keys: the first would be lost unseen. */
Test(config, a_key_given_twice_is_refused)
{
	policy(user_file(), "{\n  \"deny\": [\"~/a\"],\n  \"mode\": \"required\",\n"
			    "  \"deny\": []\n}\n");
	cf_fx_fmt(want, sizeof want, "credfence: %s:2: \"deny\" is given 2 times; keep one",
		  user_file());
	refused(NULL, want);
}

Test(config, a_missing_writable_is_refused_with_its_line)
{
	policy(user_file(), "{\n  \"mode\": \"required\",\n  \"writable\": [\"~/nowhere\"]\n}\n");
	cf_fx_fmt(want, sizeof want, "credfence: %s:3: \"writable\": '%s/nowhere' does not exist",
		  user_file(), fx.home);
	refused(NULL, want);
}

Test(config, a_file_in_the_workspace_is_refused)
{
	const char *file = cf_fx_at(fx.ws, "policy.json");
	policy(file, "{\"mode\": \"best-effort\"}\n");
	cf_fx_fmt(want, sizeof want, "lies in writable location %s", fx.ws);
	refused(CF_ARGV("--config", (char *)file), want);
}

Test(config, a_symlink_into_the_workspace_is_refused)
{
	policy(cf_fx_at(fx.ws, "cfg/policy.json"), "{\"mode\": \"best-effort\"}\n");
	const char *link = cf_fx_at(fx.root, "cfgdir");
	cr_assert_eq(symlink(cf_fx_at(fx.ws, "cfg"), link), 0, "%s", strerror(errno));
	char file[PATH_MAX];
	cf_fx_fmt(file, sizeof file, "%s/policy.json", link);
	refused(CF_ARGV("--config", file), "writable location");
}

Test(config, a_file_others_can_write_is_refused)
{
	policy(user_file(), "{\"mode\": \"best-effort\"}\n");
	cr_assert_eq(chmod(user_file(), 0664), 0);
	refused(NULL, "is writable by other users (mode 664)");
	cr_assert_eq(chmod(user_file(), 0600), 0);
	cr_assert_eq(chmod(cf_fx_at(fx.home, ".config/credfence"), 0777), 0);
	refused(NULL, "is writable by other users (mode 777), who could replace the file");
}

Test(config, a_missing_config_file_is_refused)
{
	refused(CF_ARGV("--config", (char *)cf_fx_at(fx.root, "nope.json")), "can not open it");
}

/* status's "mode:" line with ARGS and ENV. */
static void status_mode(const char *const *env, char *const args[], const char *mode)
{
	cf_fx_out_free(&o);
	cf_fx_credfence(&o, &fx, "status", env, args);
	cr_expect(has_line(o.out, "mode:         %s", mode), "not %s:\n" OUT_FMT, mode,
		  OUT_ARGS(o));
}

Test(config, the_command_line_and_the_environment_override_the_file)
{
	cf_test_require_landlock();
	policy(user_file(), "{\n  \"mode\": \"best-effort\",\n  \"keep_env\": [\"GH_TOKEN\"]\n}\n");
	status_mode(NULL, CF_ARGV(NULL), "best-effort");
	cr_expect(has_line(o.out, "policy files (1):"), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "  %s", user_file()), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "    mode: best-effort"), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "    keep_env: GH_TOKEN"), OUT_FMT, OUT_ARGS(o));
	status_mode(NULL, CF_ARGV("--required"), "required");
	cr_expect(has_line(o.out, "    mode: best-effort (overridden by the command line or the "
			   "environment)"), OUT_FMT, OUT_ARGS(o));
	status_mode((const char *[]){"CREDFENCE_MODE=required", NULL}, CF_ARGV(NULL), "required");
	/* A file's list gives way to the command line's. */
	policy(user_file(), "{\"writable\": [\"~/.cargo\"]}\n");
	cf_fx_mkdirs(cf_fx_at(fx.home, ".cargo"));
	cf_fx_mkdirs(cf_fx_at(fx.root, "other"));
	cf_fx_out_free(&o);
	cf_fx_credfence(&o, &fx, "status", NULL, CF_ARGV(NULL));
	cr_expect(has_line(o.out, "  %s", cf_fx_at(fx.home, ".cargo")), OUT_FMT, OUT_ARGS(o));
	cf_fx_out_free(&o);
	cf_fx_credfence(&o, &fx, "status", NULL,
			CF_ARGV("--writable", (char *)cf_fx_at(fx.root, "other")));
	cr_expect(!has_line(o.out, "  %s", cf_fx_at(fx.home, ".cargo")), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "  %s", cf_fx_at(fx.root, "other")), OUT_FMT, OUT_ARGS(o));
}

/* A file of the fixture (the plan), whose text only the test knows. */
static const char *plan(char *marker, size_t n)
{
	const char *path = cf_fx_at(fx.home, "plans/plan.txt");
	cf_fx_fmt(marker, n, "%s-plan", fx.tag);
	char text[256];
	cf_fx_fmt(text, sizeof text, "%s\n", marker);
	cf_fx_write(path, text);
	return path;
}

/* cf-probe read:PATH and cat PATH, fenced with OPTS. */
static void read_plan(char *const opts[], const char *path, char *probe_out, size_t n)
{
	char op[PATH_MAX + 8];
	cf_fx_fmt(op, sizeof op, "read:%s", path);
	cf_fx_out_free(&o);
	fenced(&o, &fx, NULL, opts, CF_ARGV(CF_PROBE, op));
	cf_fx_fmt(probe_out, n, "%s%s", o.out, o.err);
}

Test(config, settings_deny_read_denies_as_the_option_does)
{
	cf_test_require_landlock();
	char marker[96], out[8192], line[PATH_MAX + 32];
	const char *path = plan(marker, sizeof marker);
	const char *settings = cf_fx_at(fx.root, "settings.json");
	policy(settings, "{\n  \"model\": \"opus\",\n  \"sandbox\": {\n    \"enabled\": true,\n"
			 "    \"filesystem\": {\n      \"denyRead\": [\"~/plans/plan.txt\"]\n"
			 "    }\n  }\n}\n");
	/* The control: without either, the plan is read. */
	read_plan(NULL, path, out, sizeof out);
	cr_assert(strstr(out, marker), "the control did not read the plan:\n%s", out);
	cf_fx_fmt(line, sizeof line, "read %s: EACCES", path);
	read_plan(CF_ARGV("--deny", (char *)path), path, out, sizeof out);
	cr_expect(has_line(o.out, "%s", line), "--deny:\n" OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(out, marker), "--deny let the plan out");
	read_plan(CF_ARGV("--settings", (char *)settings), path, out, sizeof out);
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "%s", line), "--settings:\n" OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(out, marker), "--settings let the plan out");
	cr_expect(strstr(o.err, "credfence: settings: ignored model (not a sandbox setting)"),
		  OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "credfence: settings: ignored sandbox.enabled"), OUT_FMT,
		  OUT_ARGS(o));
	/* cat too, and through the policy file's "settings" key. */
	cf_fx_fmt(line, sizeof line, "{\"settings\": [\"%s\"]}\n", settings);
	policy(user_file(), line);
	cf_fx_out_free(&o);
	fenced(&o, &fx, NULL, NULL, CF_ARGV("cat", (char *)path));
	cr_expect_neq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "Permission denied"), OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, marker) && !strstr(o.err, marker), "cat let the plan out");
	cf_fx_assert_no_marker(&fx, &o);
}

static char *fixture_copy(const char *name)
{
	char src[PATH_MAX];
	cf_fx_fmt(src, sizeof src, "%s/%s", CF_CONFIG_FIXTURES, name);
	char *text = cf_fx_slurp(src);
	cr_assert(text, "%s: %s", src, strerror(errno));
	const char *dst = cf_fx_at(fx.root, name);
	policy(dst, text);
	free(text);
	return strdup(dst);
}

/* JSON (status --json) without its policy_files field, which names the
 * files read and so differs by them alone. */
static void drop_policy_files(char *json)
{
	char *a = strstr(json, ",\"policy_files\":"), *b = a ? strstr(a, ",\"verdict\":") : NULL;
	cr_assert(a && b, "no policy_files field: %s", json);
	memmove(a, b, strlen(b) + 1);
}

/* Claude Code's documented settings give the policy of the options they
 * stand for: status --json is the same, byte for byte, but for the policy
 * files it names. */
Test(config, claude_code_documented_settings_equal_their_options)
{
	cf_test_require_landlock();
	char *settings = fixture_copy("claude-code-settings.json");
	cf_fx_mkdirs(cf_fx_at(fx.home, ".kube"));
	struct stat st;
	bool build = stat("/tmp/build", &st) == 0;
	cf_fx_credfence(&o, &fx, "status", NULL, CF_ARGV("--json", "--settings", settings));
	char *from_settings = strdup(o.out);
	cr_expect(strstr(o.err, "credfence: settings: ignored sandbox.excludedCommands (credfence "
			 "does not run commands unfenced)"), OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "credfence: settings: ignored sandbox.network.allowLocalBinding "
			 "(credfence does not filter the network)"), OUT_FMT, OUT_ARGS(o));
	cf_fx_out_free(&o);
	char kube[PATH_MAX], sock[PATH_MAX], aws[PATH_MAX];
	cf_fx_fmt(kube, sizeof kube, "%s/.kube", fx.home);
	cf_fx_fmt(sock, sizeof sock, "%s/.ssh/agent-socket", fx.home);
	cf_fx_fmt(aws, sizeof aws, "%s/.aws/credentials", fx.home);
	if (build)
		cf_fx_credfence(&o, &fx, "status", NULL,
				CF_ARGV("--json", "--writable", "/tmp/build", "--writable", kube,
					"--deny", aws, "--allow-socket", sock));
	else
		cf_fx_credfence(&o, &fx, "status", NULL,
				CF_ARGV("--json", "--writable", kube, "--deny", aws,
					"--allow-socket", sock));
	cr_expect(strstr(from_settings, "\"settings\":true"), "%s", from_settings);
	drop_policy_files(from_settings);
	drop_policy_files(o.out);
	cr_expect_str_eq(from_settings, o.out, "--settings and the options differ");
	cr_expect(strstr(o.out, kube), "%s", o.out); /* the options did something */
	free(from_settings);
	free(settings);
}

/* sandbox-runtime's documented example holds .env read-only inside the
 * workspace, which credfence can not do: refused, not dropped. */
Test(config, srt_documented_settings_refuse_deny_write_in_the_workspace)
{
	char *settings = fixture_copy("srt-settings.json");
	cf_fx_fmt(want, sizeof want, "credfence: %s:19: sandbox.filesystem.denyWrite: %s/.env lies in "
		  "writable location %s", settings, fx.ws, fx.ws);
	refused(CF_ARGV("--settings", settings), want);
	cr_expect(strstr(o.err, "credfence: settings: ignored network.allowedDomains (credfence "
			 "does not filter the network)"), OUT_FMT, OUT_ARGS(o));
	free(settings);
}

Test(config, a_project_settings_file_in_the_workspace_is_refused)
{
	policy(cf_fx_at(fx.ws, ".claude/settings.json"),
	       "{\"sandbox\": {\"filesystem\": {\"allowWrite\": [\"~/.cargo\"]}}}\n");
	cf_fx_fmt(want, sizeof want, "%s/.claude/settings.json lies in writable location %s", fx.ws,
		  fx.ws);
	refused(CF_ARGV("--settings", ".claude/settings.json"), want);
}

/* credfence harness exports what the files gave as twins, so that the
 * shim in every program the harness starts fences with the file's policy. */
Test(config, harness_exports_the_files_values)
{
	cf_test_require_landlock();
	char marker[96], text[PATH_MAX + 64];
	const char *path = plan(marker, sizeof marker);
	cf_fx_fmt(text, sizeof text, "{\"deny\": [\"~/plans/plan.txt\"], \"keep_env\": [\"GH_TOKEN\"]}\n");
	policy(user_file(), text);
	cf_fx_credfence(&o, &fx, "harness", NULL,
			CF_ARGV("--", "/bin/sh", "-c",
				"printf '%s\\n' \"$CREDFENCE_DENY\" \"$CREDFENCE_KEEP_ENV\"; cat \"$1\"",
				"sh", (char *)path));
	cr_expect(has_line(o.out, "%s", path), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "GH_TOKEN"), OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "Permission denied"), OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, marker) && !strstr(o.err, marker), "the harness's cat read the plan");
}

/* The key walk (cf_config_key_line) is the one piece of hand-written JSON
 * reading: json-c gives no key positions. Random objects, with decoys (the
 * same names at other depths, inside arrays and strings, escaped quotes,
 * colons and braces in strings), each parsed by json-c first; the walk
 * must name the line the generator wrote the key on. */
struct gen {
	char buf[1 << 16];
	size_t n;
	int line;
	unsigned seed;
};

static unsigned rnd(struct gen *g)
{
	g->seed = g->seed * 1103515245u + 12345u;
	return (g->seed >> 16) & 0x7fff;
}

static void put(struct gen *g, const char *s)
{
	for (; *s && g->n + 1 < sizeof g->buf; s++) {
		g->buf[g->n++] = *s;
		g->line += *s == '\n';
	}
	g->buf[g->n] = '\0';
}

static void ws(struct gen *g)
{
	static const char *const w[] = {"", " ", "\n", "\n  ", "\t", "\r\n"};
	put(g, w[rnd(g) % 6]);
}

static const char *const names[] = {"sandbox", "filesystem", "denyRead", "x", "a\\\"b",
				    "deny:Read", "{", "denyRead "};

static void value(struct gen *g, int depth);

/* An object whose keys are never AVOID (the next key of the path). */
static void members(struct gen *g, int depth, const char *avoid)
{
	for (unsigned k = rnd(g) % 3; k; k--) {
		const char *name = names[rnd(g) % 8];
		if (avoid && strcmp(name, avoid) == 0)
			name = "y";
		ws(g);
		put(g, "\"");
		put(g, name);
		put(g, "\"");
		ws(g);
		put(g, ":");
		ws(g);
		value(g, depth + 1);
		put(g, ",");
	}
}

static void value(struct gen *g, int depth)
{
	switch (depth > 4 ? rnd(g) % 3 : rnd(g) % 5) {
	case 0:
		put(g, "\"denyRead\\\": {\\\"sandbox\\\" :[\"");
		break;
	case 1:
		put(g, "-12.5e3");
		break;
	case 2:
		put(g, "true");
		break;
	case 3:
		put(g, "[");
		ws(g);
		put(g, "{\"denyRead\": 1}");
		for (unsigned k = rnd(g) % 3; k; k--) {
			put(g, ",");
			ws(g);
			value(g, depth + 1);
		}
		ws(g);
		put(g, "]");
		break;
	default:
		put(g, "{");
		members(g, depth, NULL);
		ws(g);
		put(g, "\"last\": null}");
	}
}

Test(config, the_key_walk_finds_the_line_json_c_accepts)
{
	const char *const path[] = {"sandbox", "filesystem", "denyRead"};
	static struct gen g;
	for (unsigned seed = 1; seed <= 2000; seed++) {
		int want[3];
		memset(&g, 0, sizeof g);
		g.seed = seed;
		g.line = 1;
		put(&g, "{");
		for (int d = 0; d < 3; d++) {
			members(&g, d, path[d]);
			ws(&g);
			want[d] = g.line;
			put(&g, "\"");
			put(&g, path[d]);
			put(&g, "\"");
			ws(&g);
			put(&g, ":");
			ws(&g);
			if (d < 2)
				put(&g, "{");
		}
		value(&g, 3);
		for (int d = 2; d >= 0; d--) {
			put(&g, ",");
			members(&g, d + 3, NULL);
			ws(&g);
			put(&g, "\"end\": 0}");
		}
		cr_assert_lt(g.n + 1, sizeof g.buf, "seed %u: the text outgrew the buffer", seed);
		json_object *root = json_tokener_parse(g.buf);
		cr_assert(root, "seed %u: json-c refused the generated text:\n%s", seed, g.buf);
		json_object_put(root);
		struct cf_config_file f = {.text = g.buf, .len = g.n};
		for (size_t d = 0; d < 3; d++)
			cr_assert_eq(cf_config_key_line(&f, path, d + 1), want[d],
				     "seed %u, depth %zu:\n%s", seed, d + 1, g.buf);
	}
}

/* Inside a fence no policy file is read: a fenced program must not pick
 * one (here through CREDFENCE_CONFIG and its HOME's) for a credfence it
 * starts. */
Test(config, a_fenced_credfence_reads_no_policy_file)
{
	cf_test_require_landlock();
	const char *loose = cf_fx_at(fx.root, "loose.json");
	policy(loose, "{\"mode\": \"best-effort\"}\n");
	policy(user_file(), "{\"mode\": \"best-effort\"}\n");
	char env[PATH_MAX + 32];
	cf_fx_fmt(env, sizeof env, "CREDFENCE_CONFIG=%s", loose);
	fenced(&o, &fx, NULL, NULL, CF_ARGV("env", env, (char *)cf_fx_bin(), "status"));
	cr_expect(has_line(o.out, "mode:         required"), OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "policy files"), OUT_FMT, OUT_ARGS(o));
	/* The control: unfenced, the same call reads both files. */
	cf_fx_out_free(&o);
	cf_fx_credfence(&o, &fx, "status", (const char *[]){env, NULL}, CF_ARGV(NULL));
	cr_expect(has_line(o.out, "mode:         best-effort"), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "policy files (2):"), OUT_FMT, OUT_ARGS(o));
}

/* status --json names the policy files read and what each gave, as the text
 * output does: the same lines, split into took and overridden. */
Test(config, status_json_lists_the_policy_files)
{
	cf_test_require_landlock();
	policy(user_file(), "{\n  \"mode\": \"best-effort\",\n  \"keep_env\": [\"GH_TOKEN\"]\n}\n");
	char want[2 * PATH_MAX];
	cf_fx_out_free(&o);
	cf_fx_credfence(&o, &fx, "status", NULL, CF_ARGV("--json", "--required"));
	cf_fx_fmt(want, sizeof want,
		  ",\"policy_files\":[{\"path\":\"%s\",\"settings\":false,\"took\":[\"keep_env: "
		  "GH_TOKEN\"],\"overridden\":[\"mode: best-effort\"]}],\"verdict\":",
		  user_file());
	cr_expect(strstr(o.out, want), "not %s:\n" OUT_FMT, want, OUT_ARGS(o));
	/* The text output, in step. */
	cf_fx_out_free(&o);
	cf_fx_credfence(&o, &fx, "status", NULL, CF_ARGV("--required"));
	cr_expect(has_line(o.out, "policy files (1):"), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "    keep_env: GH_TOKEN"), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "    mode: best-effort (overridden by the command line or the "
				  "environment)"),
		  OUT_FMT, OUT_ARGS(o));
	/* None read: an empty list. */
	cr_assert(unlink(user_file()) == 0);
	cf_fx_out_free(&o);
	cf_fx_credfence(&o, &fx, "status", NULL, CF_ARGV("--json"));
	cr_expect(strstr(o.out, ",\"policy_files\":[],\"verdict\":"), OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "GH_TOKEN"), OUT_FMT, OUT_ARGS(o));
}
