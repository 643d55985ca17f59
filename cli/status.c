#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "cli.h"
#include "machinery.h"
#include "json.h"
#ifndef __APPLE__
#endif
#include "paths.h"
#include "secret_env.h"


static const char *writable_holding(const struct cf_policy *p, const char *path)
{
	for (size_t i = 0; i < p->writable.n; i++)
		if (cf_path_within(path, p->writable.v[i]))
			return p->writable.v[i];
	return NULL;
}

/* How the IPC and metadata fence is enforced on this kernel (enforce/linux/notify/supervisor.h). */
static const char *ipc_how(const struct cf_fence *f)
{
#ifdef __APPLE__
	(void)f;
	return "not fenced on macOS: a fenced program can connect to any Unix socket "
	       "(SECURITY.md)";
#else
	(void)f;
	return "connect to a Unix socket bound outside the fence: denied; metadata changes "
	       "outside the writable locations: denied (seccomp supervisor); Unix datagram "
	       "sockets: made in the fenced tree's own network namespace, so no abstract "
	       "name bound outside is reached";
#endif
}

static int by_name(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	size_t nx = cf_env_name_len(x), ny = cf_env_name_len(y);
	int c = strncmp(x, y, nx < ny ? nx : ny);
	return c ? c : (nx > ny) - (nx < ny);
}

/* This environment's entries sorted by name (the order a shell exports them
 * in is its own), NULL-terminated; malloc'd, or NULL. */
static char **sorted_environ(void)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **v = calloc(n + 1, sizeof *v);
	if (!v)
		return NULL;
	memcpy(v, environ, n * sizeof *v);
	qsort(v, n, sizeof *v, by_name);
	return v;
}

/* The variables of this environment that a fenced program would not get:
 * by name, rule and what the rule says it holds, never by value. */
static void json_env(const struct cf_options *o, char *buf, size_t cap, size_t *len)
{
	struct cf_env_rules r;
	struct cf_env_reason why;
	char name[256];
	bool first = true;
	char **env = sorted_environ();
	cf_options_env_rules(o, &r);
	cf_json_raw(buf, cap, len, ",\"env_withheld\":[");
	for (char **e = env; e && *e; e++) {
		if (cf_env_judge(*e, &r, &why) == CF_ENV_PASS)
			continue;
		snprintf(name, sizeof name, "%.*s", (int)cf_env_name_len(*e), *e);
		cf_json_raw(buf, cap, len, first ? "{\"name\":" : ",{\"name\":");
		cf_json_str(buf, cap, len, name);
		cf_json_raw(buf, cap, len, ",\"rule\":");
		cf_json_str(buf, cap, len, cf_env_why_word(why.why));
		cf_json_raw(buf, cap, len, ",\"holds\":");
		cf_json_str(buf, cap, len, why.holds);
		cf_json_raw(buf, cap, len, "}");
		first = false;
	}
	cf_json_raw(buf, cap, len, "]");
	free(env);
}

void cf_cli_print_env(const struct cf_options *o, FILE *out, const char *indent)
{
	struct cf_env_rules r;
	struct cf_env_reason why;
	char **env = sorted_environ();
	cf_options_env_rules(o, &r);
	for (char **e = env; e && *e; e++)
		if (cf_env_judge(*e, &r, &why) != CF_ENV_PASS)
			fprintf(out, "%s%-40.*s withheld (%s: %s)\n", indent, (int)cf_env_name_len(*e),
				cf_cli_esc(*e), cf_env_why_word(why.why), why.holds);
	free(env);
}

static size_t env_count(const struct cf_options *o)
{
	struct cf_env_rules r;
	size_t n = 0;
	cf_options_env_rules(o, &r);
	for (char **e = environ; *e; e++)
		n += cf_env_secret(*e, &r) != CF_ENV_PASS;
	return n;
}

#ifndef __APPLE__
/* Whether the harness's guard can be made here (cf_fence_guard_probe): -ENOENT
 * when it was not asked (the fence is not ready, or inherited). */
static int guard_rc = -ENOENT;
static char guard_why[1024];
#endif

static void print_json(const struct cf_fence *f, const struct cf_options *o, const char *release,
		       const char *shim, const char *shim_in, const struct cf_config *cfg)
{
	const struct cf_policy *p = cf_fence_policy(f);
	static char buf[1 << 20];
	size_t len = 0, cap = sizeof buf;
	cf_json_raw(buf, cap, &len, "{\"kernel\":");
	cf_json_str(buf, cap, &len, release);
#ifdef __APPLE__
	cf_json_raw(buf, cap, &len, ",\"backend\":\"seatbelt\"");
#else
	cf_json_raw(buf, cap, &len, ",\"backend\":\"landlock\",\"abi\":");
	cf_json_num(buf, cap, &len, cf_fence_abi(f));
#endif
	cf_json_raw(buf, cap, &len, ",\"home\":");
	if (p->home)
		cf_json_str(buf, cap, &len, p->home);
	else
		cf_json_raw(buf, cap, &len, "null");
	cf_json_raw(buf, cap, &len, ",\"account_home\":");
	if (p->account_home)
		cf_json_str(buf, cap, &len, p->account_home);
	else
		cf_json_raw(buf, cap, &len, "null");
	cf_json_raw(buf, cap, &len, ",\"workspace\":");
	cf_json_str(buf, cap, &len, p->workspace ? p->workspace : "");
	cf_json_raw(buf, cap, &len, ",\"denied\":[");
	for (size_t i = 0; i < p->n_denied; i++) {
		cf_json_raw(buf, cap, &len, i ? ",{\"path\":" : "{\"path\":");
		cf_json_str(buf, cap, &len, p->denied[i].path);
		cf_json_raw(buf, cap, &len, ",\"holds\":");
		cf_json_str(buf, cap, &len, p->denied[i].holds);
		cf_json_raw(buf, cap, &len, ",\"source\":");
		cf_json_str(buf, cap, &len, p->denied[i].why);
		cf_json_raw(buf, cap, &len, "}");
	}
	cf_json_raw(buf, cap, &len, "],\"writable\":[");
	for (size_t i = 0; i < p->writable.n; i++) {
		if (i)
			cf_json_raw(buf, cap, &len, ",");
		cf_json_str(buf, cap, &len, p->writable.v[i]);
	}
	cf_json_raw(buf, cap, &len, "],\"rules\":");
	cf_json_num(buf, cap, &len, (long long)cf_fence_rules(f));
	cf_json_raw(buf, cap, &len, ",\"ipc\":");
	cf_json_str(buf, cap, &len, ipc_how(f));
#ifndef __APPLE__
	if (cf_fence_protect_planned(f)) {
		cf_json_raw(buf, cap, &len, ",\"metadata\":");
		cf_json_str(buf, cap, &len, cf_fence_protect_off_why(f)[0] ? "supervisor" : "mounts");
		cf_json_raw(buf, cap, &len, ",\"protected\":");
		cf_json_num(buf, cap, &len, (long long)cf_fence_protect_held(f));
		cf_json_raw(buf, cap, &len, ",\"write_protect\":");
		cf_json_str(buf, cap, &len, cf_fence_protect_off_why(f)[0] ? "off" : "on");
	}
#endif
#ifndef __APPLE__
	if (guard_rc != -ENOENT) {
		cf_json_raw(buf, cap, &len, ",\"harness_guard\":");
		cf_json_str(buf, cap, &len, guard_rc ? "off" : "on");
		if (guard_rc) {
			cf_json_raw(buf, cap, &len, ",\"harness_guard_off\":");
			cf_json_str(buf, cap, &len, guard_why);
		}
	}
#endif
	cf_json_raw(buf, cap, &len, ",\"allowed_sockets\":[");
	for (size_t i = 0; i < p->allow_sockets.n; i++) {
		if (i)
			cf_json_raw(buf, cap, &len, ",");
		cf_json_str(buf, cap, &len, p->allow_sockets.v[i]);
	}
	cf_json_raw(buf, cap, &len, "],\"allowed_reads\":[");
	for (size_t i = 0; i < p->allow_read.n + p->allow_rows.n; i++) {
		if (i)
			cf_json_raw(buf, cap, &len, ",");
		cf_json_str(buf, cap, &len, i < p->allow_read.n ? p->allow_read.v[i]
							      : p->allow_rows.v[i - p->allow_read.n]);
	}
	cf_json_raw(buf, cap, &len, "],\"allow_read_refused\":");
	if (p->allow_read_refused)
		cf_json_str(buf, cap, &len, p->allow_read_refused);
	else
		cf_json_raw(buf, cap, &len, "null");
	json_env(o, buf, cap, &len);
	cf_json_raw(buf, cap, &len, ",\"mode\":");
	cf_json_str(buf, cap, &len, cf_mode_word(p->mode));
	cf_json_raw(buf, cap, &len, ",\"shim\":");
	if (shim)
		cf_json_str(buf, cap, &len, shim);
	else
		cf_json_raw(buf, cap, &len, "null");
	cf_json_raw(buf, cap, &len, ",\"shim_writable\":");
	cf_json_raw(buf, cap, &len, shim_in ? "true" : "false");
	const char *parts[][2] = {{"command", cf_cli_self_path()}, {"launcher", cf_cli_script_path()}};
	for (size_t i = 0; i < 2; i++) {
		cf_json_raw(buf, cap, &len, ",\"");
		cf_json_raw(buf, cap, &len, parts[i][0]);
		cf_json_raw(buf, cap, &len, "\":");
		if (parts[i][1])
			cf_json_str(buf, cap, &len, parts[i][1]);
		else
			cf_json_raw(buf, cap, &len, "null");
		cf_json_raw(buf, cap, &len, ",\"");
		cf_json_raw(buf, cap, &len, parts[i][0]);
		cf_json_raw(buf, cap, &len, "_writable\":");
		cf_json_raw(buf, cap, &len, cf_cli_writable_holding(p, parts[i][1]) ? "true" : "false");
	}
	cf_json_raw(buf, cap, &len, ",\"log_refused\":");
	if (p->log_refused)
		cf_json_str(buf, cap, &len, p->log_refused);
	else
		cf_json_raw(buf, cap, &len, "null");
	cf_json_raw(buf, cap, &len, ",\"policy_files\":");
	cf_config_json(cfg, buf, cap, &len);
	cf_json_raw(buf, cap, &len, ",\"verdict\":");
	cf_json_str(buf, cap, &len, cf_fence_ready(f) ? "applied" : "not effective");
	cf_json_raw(buf, cap, &len, ",\"status\":");
	cf_json_str(buf, cap, &len, cf_cli_reason(f));
	cf_json_raw(buf, cap, &len, "}\n");
	fputs(buf, stdout);
}

static void print_text(const struct cf_fence *f, const struct cf_options *o, const char *release,
		       const char *shim, const char *shim_in, const struct cf_config *cfg)
{
	const struct cf_policy *p = cf_fence_policy(f);
#ifdef __APPLE__
	printf("credfence seatbelt read: kernel=%s\n", release);
#else
	printf("credfence landlock read: kernel=%s abi=%d\n", release, cf_fence_abi(f));
#endif
	printf("home:         %s\n", p->home ? cf_cli_esc(p->home) : "(none)");
	if (p->account_home)
		printf("account home: %s (from the password database; denied too)\n",
		       cf_cli_esc(p->account_home));
	printf("workspace:    %s\n", p->workspace ? cf_cli_esc(p->workspace) : "(none)");
	printf("mode:         %s\n", cf_mode_word(p->mode));
	printf("denied (%zu):\n", p->n_denied);
	for (size_t i = 0; i < p->n_denied; i++)
		printf("  %-48s %s%s%s\n", cf_cli_esc(p->denied[i].path), p->denied[i].holds,
		       strcmp(p->denied[i].why, "default") ? "; from " : "",
		       strcmp(p->denied[i].why, "default") ? p->denied[i].why : "");
	printf("writable (%zu):\n", p->writable.n);
	for (size_t i = 0; i < p->writable.n; i++)
		printf("  %s\n", cf_cli_esc(p->writable.v[i]));
	printf("rules:        %zu\n", cf_fence_rules(f));
	printf("ipc:          %s\n", ipc_how(f));
#ifndef __APPLE__
	if (cf_fence_abi_note(f))
		printf("older ABI:    %s\n", cf_fence_abi_note(f));
	if (cf_fence_protect_planned(f)) {
		/* The private caches as planned (a dry run makes none). */
		size_t priv = cf_fence_protect_private_copies(f);
		if (!cf_fence_protect_off_why(f)[0])
			printf("metadata:     read-only mounts outside the writable locations; %zu "
			       "protected paths held read-only; %zu caches private to the fence\n",
			       cf_fence_protect_held(f), priv);
		else
			printf("metadata:     supervisor; write protection off: %s\n",
			       cf_cli_esc(cf_fence_protect_off_why(f)));
	}
#endif
#ifndef __APPLE__
	if (guard_rc != -ENOENT)
		printf("harness guard: %s%s\n",
		       guard_rc ? "off: the harness's own reads of the secrets are not guarded "
				  "(its children stay fenced): " : "on: the harness's own reads of the "
				  "secrets are refused (covers in a mount namespace of its own)",
		       guard_rc ? cf_cli_esc(guard_why) : "");
#endif
	printf("allowed sockets (%zu):\n", p->allow_sockets.n);
	for (size_t i = 0; i < p->allow_sockets.n; i++)
		printf("  %s\n", cf_cli_esc(p->allow_sockets.v[i]));
	printf("allowed reads (%zu):\n", p->allow_read.n + p->allow_rows.n);
	for (size_t i = 0; i < p->allow_read.n; i++) {
		const char *in = "?";
		for (size_t k = 0; k < p->n_denied; k++)
			if (cf_path_within(p->allow_read.v[i], p->denied[k].path))
				in = p->denied[k].path;
		printf("  %-48s inside %s, whose other entries stay denied\n",
		       cf_cli_esc(p->allow_read.v[i]), cf_cli_esc(in));
	}
	for (size_t i = 0; i < p->allow_rows.n; i++)
		printf("  %-48s the whole secret location, lifted\n", cf_cli_esc(p->allow_rows.v[i]));
	printf("environment withheld (%zu):\n", env_count(o));
	cf_cli_print_env(o, stdout, "  ");
	printf("shim:         %s\n", shim ? cf_cli_esc(shim) : "(not found)");
	if (shim_in)
		printf("warning: the shim lies in the writable location %s: a fenced program could "
		       "replace it; install it outside every writable location (meson install)\n",
		       cf_cli_esc(shim_in));
	const char *self = cf_cli_self_path(), *script = cf_cli_script_path();
	printf("command:      %s\n", self ? cf_cli_esc(self) : "(not known)");
	if (script)
		printf("launcher:     %s\n", cf_cli_esc(script));
	const char *w = cf_cli_writable_holding(p, self);
	if (w)
		printf("warning: the credfence command lies in the writable location %s: run and "
		       "harness refuse it; install credfence outside every writable location "
		       "(meson install, or scripts/credfence)\n",
		       cf_cli_esc(w));
	const char *link = cf_cli_link_path();
	if ((w = cf_cli_writable_holding(p, link)))
		printf("warning: the link %s you called credfence by lies in the writable location "
		       "%s: run and harness refuse it; call the command above directly\n",
		       cf_cli_esc(link), cf_cli_esc(w));
	/* Not refused: it has run already; the next call should not use it. */
	if ((w = cf_cli_writable_holding(p, script)))
		printf("warning: the launcher script lies in the writable location %s: a fenced "
		       "command could rewrite it; call the installed command above instead\n",
		       cf_cli_esc(w));
	if (p->log_refused)
		printf("warning: %s; run and harness refuse it: choose a log file outside every "
		       "writable location\n",
		       cf_cli_esc(p->log_refused));
	if (p->allow_read_refused)
		printf("warning: %s; run and harness refuse it\n", cf_cli_esc(p->allow_read_refused));
	char gap[1024];
	if (cf_fence_container_gap(gap, sizeof gap))
		printf("warning: %s\n", cf_cli_esc(gap));
	if (cfg->n)
		cf_config_print(cfg, stdout);
	printf("%s\n", cf_cli_esc(cf_cli_reason(f)));
}

int cf_cmd_status(int argc, char **argv)
{
	struct cf_cli c;
	struct cf_fence *f = NULL;
	struct utsname u;
	int rc = cf_cli_parse(&c, "status", argc, argv, false, true);
	if (rc || (rc = cf_cli_finish(&c)))
		return rc;
	if (c.n_paths) {
		cf_err("status: unexpected operand '%s'; status takes only options", c.paths[0]);
		return CF_EXIT_FAIL;
	}
	if (!(f = cf_fence_new()) || cf_fence_prepare(f, &c.opts, environ, NULL)) {
		cf_err("out of memory while building the policy");
		return CF_EXIT_FAIL;
	}
	if ((rc = cf_cli_check_config(&c, f, NULL)))
		return rc;
	cf_cli_judge_workspace(&c, f);
	/* The kernel judges the fence, in a child that is thrown away. */
	if (cf_fence_ready(f) && !cf_fence_inherited(f))
		(void)cf_fence_probe(f);
#ifndef __APPLE__
	char why[512];
	if (cf_fence_ready(f) && !cf_fence_inherited(f) && !cf_fence_protect_prepare(f, &c.opts, NULL))
		(void)cf_fence_protect_probe(f, why, sizeof why);
	if (cf_fence_ready(f) && !cf_fence_inherited(f))
		guard_rc = cf_fence_guard_probe(guard_why, sizeof guard_why);
#endif
	const char *release = uname(&u) == 0 ? u.release : "unknown";
	const char *shim = cf_cli_find_shim();
	const char *shim_in = shim ? writable_holding(cf_fence_policy(f), shim) : NULL;
	if (c.json)
		print_json(f, &c.opts, release, shim, shim_in, &c.cfg);
	else
		print_text(f, &c.opts, release, shim, shim_in, &c.cfg);
	rc = cf_fence_ready(f) ? 0 : 1;
	cf_fence_destroy(f);
	cf_cli_free(&c);
	return rc;
}
