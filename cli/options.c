#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "event.h"
#include "protected_match.h"
#include "secret_env.h"
#include "vars.h"

void cf_err(const char *fmt, ...)
{
	va_list ap;
	fputs("credfence: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static const char *value(int argc, char **argv, int *i, const char *sub)
{
	const char *opt = argv[*i];
	const char *eq = strchr(opt, '=');
	if (eq)
		return eq + 1;
	if (*i + 1 >= argc) {
		cf_err("%s: option %s needs a value; see 'credfence %s --help'", sub, opt, sub);
		return NULL;
	}
	return argv[++*i];
}

static bool is_opt(const char *arg, const char *name)
{
	size_t n = strlen(name);
	return strncmp(arg, name, n) == 0 && (arg[n] == '\0' || arg[n] == '=');
}

int cf_cli_parse(struct cf_cli *c, const char *sub, int argc, char **argv, bool want_cmd,
		 bool allow_json)
{
	return cf_cli_parse_env(c, sub, argc, argv, want_cmd, allow_json, false);
}

int cf_cli_parse_env(struct cf_cli *c, const char *sub, int argc, char **argv, bool want_cmd,
		     bool allow_json, bool allow_env)
{
	memset(c, 0, sizeof *c);
	cf_options_init(&c->opts);
	c->paths = calloc((size_t)argc + 1, sizeof *c->paths);
	if (!c->paths) {
		cf_err("out of memory");
		return CF_EXIT_FAIL;
	}
	int i;
	for (i = 0; i < argc; i++) {
		const char *a = argv[i], *v;
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (is_opt(a, "--home")) {
			if (!(v = value(argc, argv, &i, sub)))
				return CF_EXIT_FAIL;
			c->opts.home = v;
		} else if (is_opt(a, "--workspace")) {
			if (!(v = value(argc, argv, &i, sub)))
				return CF_EXIT_FAIL;
			c->opts.workspace = v;
		} else if (is_opt(a, "--writable")) {
			if (!(v = value(argc, argv, &i, sub)))
				return CF_EXIT_FAIL;
			c->opts.writable_from_cli = true;
			if (cf_strv_add(&c->opts.writable, v))
				return CF_EXIT_FAIL;
		} else if (is_opt(a, "--deny")) {
			if (!(v = value(argc, argv, &i, sub)))
				return CF_EXIT_FAIL;
			c->opts.deny_from_cli = true;
			if (cf_strv_add(&c->opts.deny, v))
				return CF_EXIT_FAIL;
		} else if (is_opt(a, "--allow-read")) {
			if (!(v = value(argc, argv, &i, sub)))
				return CF_EXIT_FAIL;
			c->opts.allow_read_from_cli = true;
			if (cf_strv_add(&c->opts.allow_read, v))
				return CF_EXIT_FAIL;
		} else if (is_opt(a, "--deny-env") || is_opt(a, "--keep-env")) {
			if (!(v = value(argc, argv, &i, sub)))
				return CF_EXIT_FAIL;
			bool deny = a[2] == 'd';
			*(deny ? &c->opts.deny_env_from_cli : &c->opts.keep_env_from_cli) = true;
			if (cf_strv_add(deny ? &c->opts.deny_env : &c->opts.keep_env, v))
				return CF_EXIT_FAIL;
		} else if (is_opt(a, "--config")) {
			if (!(v = value(argc, argv, &i, sub)))
				return CF_EXIT_FAIL;
			c->opts.config = v;
		} else if (is_opt(a, "--settings")) {
			if (!(v = value(argc, argv, &i, sub)))
				return CF_EXIT_FAIL;
			c->opts.settings_from_cli = true;
			if (cf_strv_add(&c->opts.settings, v))
				return CF_EXIT_FAIL;
		} else if (is_opt(a, "--log")) {
			if (!(v = value(argc, argv, &i, sub)))
				return CF_EXIT_FAIL;
			c->opts.log = v;
		} else if (is_opt(a, "--max-entries")) {
			if (!(v = value(argc, argv, &i, sub)))
				return CF_EXIT_FAIL;
			char *end;
			errno = 0;
			long n = strtol(v, &end, 10);
			if (*v < '0' || *v > '9' || *end || n <= 0 || errno == ERANGE) {
				cf_err("%s: --max-entries takes a positive number, not '%s'", sub, v);
				return CF_EXIT_FAIL;
			}
			c->opts.max_entries = n;
		} else if (is_opt(a, "--allow-socket")) {
			if (!(v = value(argc, argv, &i, sub)))
				return CF_EXIT_FAIL;
			c->opts.allow_sockets_from_cli = true;
			if (cf_strv_add(&c->opts.allow_sockets, v))
				return CF_EXIT_FAIL;
		} else if (is_opt(a, "--harness-may-read")) {
			if (!(v = value(argc, argv, &i, sub)))
				return CF_EXIT_FAIL;
			if (strcmp(sub, "harness") != 0) {
				cf_err("%s: --harness-may-read is an option of credfence harness only "
				       "(it concerns the harness's own reads); leave it out",
				       sub);
				return CF_EXIT_FAIL;
			}
			c->opts.harness_may_read_from_cli = true;
			if (cf_strv_add(&c->opts.harness_may_read, v))
				return CF_EXIT_FAIL;
		} else if (is_opt(a, "--harness-state")) {
			if (!(v = value(argc, argv, &i, sub)))
				return CF_EXIT_FAIL;
			c->opts.harness_state_from_cli = true;
			if (cf_strv_add(&c->opts.harness_state, v))
				return CF_EXIT_FAIL;
		} else if (is_opt(a, "--allow-write-protected")) {
			if (!(v = value(argc, argv, &i, sub)))
				return CF_EXIT_FAIL;
			c->opts.allow_write_protected_from_cli = true;
			if (cf_strv_add(&c->opts.allow_write_protected, v))
				return CF_EXIT_FAIL;
		} else if (is_opt(a, "--write-protect")) {
			if (!(v = value(argc, argv, &i, sub)))
				return CF_EXIT_FAIL;
			int w = cf_write_protect_parse(v);
			if (w < 0) {
				cf_err("%s: --write-protect takes 'warn' or 'require', not '%s'", sub, v);
				return CF_EXIT_FAIL;
			}
			c->opts.write_protect = w;
			c->opts.write_protect_from_cli = true;
		} else if (strcmp(a, "--ssh-agent") == 0) {
			c->opts.ssh_agent = 1;
		} else if (strcmp(a, "--allow-ptys") == 0) {
			c->opts.allow_ptys = 1;
		} else if (strcmp(a, "--quiet-denials") == 0) {
			c->opts.quiet_denials = 1;
		} else if (is_opt(a, "--harness-program") || strcmp(a, "--static-harness") == 0) {
			/* Which processes get the harness role: credfence harness only. */
			if (strcmp(sub, "harness") != 0) {
				cf_err("%s: %.*s is an option of credfence harness only; leave it out",
				       sub, (int)strcspn(a, "="), a);
				return CF_EXIT_FAIL;
			}
			if (a[2] == 's') {
				c->opts.static_harness = 1;
				continue;
			}
			if (!(v = value(argc, argv, &i, sub)))
				return CF_EXIT_FAIL;
			c->opts.harness_programs_from_cli = true;
			if (cf_strv_add(&c->opts.harness_programs, v))
				return CF_EXIT_FAIL;
		} else if (strcmp(a, "--best-effort") == 0) {
			c->opts.mode = CF_MODE_BEST_EFFORT;
		} else if (strcmp(a, "--required") == 0) {
			c->opts.mode = CF_MODE_REQUIRED;
		} else if (allow_json && strcmp(a, "--json") == 0) {
			c->json = true;
		} else if (allow_env && strcmp(a, "--env") == 0) {
			c->env = true;
		} else if (a[0] == '-' && a[1] != '\0') {
			cf_err("%s: unknown option '%s'; see 'credfence %s --help'", sub, a, sub);
			return CF_EXIT_FAIL;
		} else if (want_cmd) {
			break; /* the command starts here */
		} else {
			c->paths[c->n_paths++] = argv[i];
		}
	}
	if (want_cmd) {
		if (i >= argc) {
			cf_err("%s: no command given; usage: credfence %s [options] -- CMD [ARG...]",
			       sub, sub);
			return CF_EXIT_FAIL;
		}
		c->cmd = argv + i;
	} else {
		for (; i < argc; i++)
			c->paths[c->n_paths++] = argv[i];
	}
	return 0;
}

int cf_cli_finish(struct cf_cli *c)
{
	const char *bad = NULL;
	int rc = cf_options_from_env(&c->opts, environ, &bad);
	if (rc == -EINVAL) {
		enum cf_var_kind kind = cf_var_find(bad)->kind;
		cf_err("%s='%s' is not valid; use %s", bad, getenv(bad),
		       kind == CF_KIND_MODE     ? "'required' or 'best-effort'"
		       : kind == CF_KIND_PROTECT ? "'warn' or 'require'"
		       : kind == CF_KIND_SWITCH ? "'1' or '0'"
						: "a positive number");
		return CF_EXIT_FAIL;
	}
	if (rc) {
		cf_err("out of memory");
		return CF_EXIT_FAIL;
	}
	/* The files fill what the command line and the environment left unset.
	 * Not inside a fence: there the policy comes from the twins the
	 * enclosing credfence exported, and a fenced program must not choose a
	 * file (CREDFENCE_CONFIG, XDG_CONFIG_HOME, HOME) for a credfence it
	 * starts, nor one the shim relaunches. */
	if (!cf_fence_fenced() && cf_config_load(&c->cfg, &c->opts))
		return CF_EXIT_FAIL;
	char why[PATH_MAX + 256];
	if (cf_options_check(&c->opts, why, sizeof why)) {
		cf_err("%s. Nothing was run.", why);
		return CF_EXIT_FAIL;
	}
	c->opts.account_home = cf_account_home();
	const char *agent = getenv("SSH_AUTH_SOCK");
	if (c->opts.ssh_agent > 0 && (!agent || !*agent)) {
		cf_err("--ssh-agent (CREDFENCE_SSH_AGENT) allows $SSH_AUTH_SOCK, which is not set; "
		       "start ssh-agent first, or leave the option out. Nothing was run.");
		return CF_EXIT_FAIL;
	}
	if (c->opts.home && c->opts.home[0] && c->opts.home[0] != '/') {
		cf_err("--home must be an absolute path, not '%s'", c->opts.home);
		return CF_EXIT_FAIL;
	}
	return 0;
}

void cf_cli_free(struct cf_cli *c)
{
	cf_config_free(&c->cfg);
	cf_options_free(&c->opts);
	free(c->paths);
}

const char *cf_cli_hint(enum cf_verdict v)
{
	switch (v) {
	case CF_VERDICT_HOME_EMPTY:
		return "set HOME or pass --home DIR";
	case CF_VERDICT_OVERLAP:
		return "choose a workspace or --writable location that neither contains nor lies inside a secret";
	case CF_VERDICT_LANDLOCK:
		return "run on a kernel with Landlock enabled (lsm=landlock), or pass --best-effort to run without isolation";
	case CF_VERDICT_NESTED:
		return "run credfence outside the enclosing fence, or with a policy it covers";
	case CF_VERDICT_SEATBELT:
		return "run where the Seatbelt sandbox is available (sandbox_init_with_parameters), or pass --best-effort to run without isolation";
	case CF_VERDICT_TOO_MANY:
		return "raise --max-entries (CREDFENCE_MAX_ENTRIES) or tidy that directory";
	case CF_VERDICT_WRITABLE_LINK:
		return "name the location by a path without a symlink inside a writable location "
		       "(a fenced program could retarget it), or remove that symlink";
	case CF_VERDICT_WORKSPACE:
		return "cd to your project directory, or pass --workspace DIR";
	case CF_VERDICT_SECCOMP:
		return "run where seccomp filters can be installed (a container's seccomp policy may "
		       "refuse them), or pass --best-effort to run without isolation";
	case CF_VERDICT_IPC:
		return "run on a kernel with seccomp user notification (Linux 5.9 or later, not "
		       "blocked by a container policy), or pass --best-effort to run without isolation";
	case CF_VERDICT_HARNESS_STATE:
		return "name the harness's state subdirectory that its children write (for Claude Code "
		       "~/.claude/shell-snapshots), not a directory that holds a secret or a file the "
		       "harness trusts; see 'Harness state' in docs/cli-reference.md";
	default:
		return "fix the location or remove it from CREDFENCE_DENY / --deny";
	}
}

int cf_cli_check_config(struct cf_cli *c, const struct cf_fence *f, const char *cwd)
{
	return cf_config_check_places(&c->cfg, cf_fence_policy(f), cwd);
}

int cf_cli_check_log(const struct cf_fence *f)
{
	const struct cf_policy *pol = cf_fence_policy(f);
	if (!pol->log_refused)
		return 0;
	cf_err("%s; choose a log file outside every writable location (--log, CREDFENCE_LOG). "
	       "Nothing was run.",
	       pol->log_refused);
	return CF_EXIT_FAIL;
}

int cf_cli_judge_lifts(const struct cf_cli *c, const struct cf_fence *f, struct cf_strv *lifts)
{
	const struct cf_policy *pol = cf_fence_policy(f);
	struct cf_strv own = {0}, *l = lifts ? lifts : &own;
	char cwd[PATH_MAX], why[2 * PATH_MAX + 256];
	const char *bad = NULL;
	int rc = 0;
	if (!c->opts.allow_write_protected.n)
		return 0;
	if (!getcwd(cwd, sizeof cwd)) {
		cf_err("can not tell the current directory (%s), from which "
		       "--allow-write-protected is taken; give absolute paths. Nothing was run.",
		       strerror(errno));
		return CF_EXIT_FAIL;
	}
	int e = cf_protected_canon_lifts(&c->opts.allow_write_protected, cwd, l, &bad);
	if (e == -ENOMEM) {
		cf_err("out of memory");
		rc = CF_EXIT_FAIL;
	} else if (e) {
		cf_err("--allow-write-protected (CREDFENCE_ALLOW_WRITE_PROTECTED) '%s' can not be "
		       "resolved (%s); give a path without a symlink loop. Nothing was run.",
		       cf_cli_esc(bad), strerror(-e));
		rc = CF_EXIT_FAIL;
	}
	for (size_t i = 0; !rc && i < l->n; i++)
		if (cf_protected_lift_refusal(pol, cwd, l->v[i], why, sizeof why)) {
			cf_err("%s. Nothing was run.", why);
			rc = CF_EXIT_FAIL;
		}
	/* A lift inside a protected directory keeps what exists writable in
	 * place; a file that is not there can not be made in the read-only
	 * row. Said, not refused: the same lift may be set for every project
	 * (CREDFENCE_ALLOW_WRITE_PROTECTED), and takes effect where it exists. */
	struct cf_protect_scope all;
	char loc[PATH_MAX];
	cf_protect_scope_of(&all, pol, cwd, NULL);
	for (size_t i = 0; !rc && i < l->n; i++)
		if (cf_protected_lift_unborn(&all, l->v[i], loc, sizeof loc))
			cf_warn("--allow-write-protected %s: it does not exist, and inside the "
				"write-protected %s it can not be created (a lift inside a protected "
				"directory keeps a file that exists writable in place); create it "
				"yourself first, or lift %s", cf_cli_esc(l->v[i]), cf_cli_esc(loc),
				cf_cli_esc(loc));
	cf_strv_free(&own);
	return rc;
}

int cf_cli_check_allow_read(const struct cf_fence *f, const char *sub)
{
	const struct cf_policy *pol = cf_fence_policy(f);
	if (pol->allow_read_refused) {
		cf_err("%s: %s. Nothing was run.", sub, cf_cli_esc(pol->allow_read_refused));
		return CF_EXIT_FAIL;
	}
	for (size_t i = 0; i < pol->allow_rows.n; i++)
		cf_warn("%s: --allow-read (CREDFENCE_ALLOW_READ) lifts the whole secret location %s: "
			"fenced programs read everything in it, keys included; name the file they "
			"need inside it instead (--allow-read %s/FILE) to keep the rest denied",
			sub, cf_cli_esc(pol->allow_rows.v[i]), cf_cli_esc(pol->allow_rows.v[i]));
	return 0;
}

void cf_cli_judge_workspace(const struct cf_cli *c, struct cf_fence *f)
{
	const struct cf_policy *pol = cf_fence_policy(f);
	char dot[PATH_MAX];
	if ((c->opts.workspace && *c->opts.workspace) || !cf_fence_ready(f) ||
	    cf_fence_inherited(f) || !pol->workspace || !cf_policy_home_dotdir(pol, pol->workspace, dot, sizeof dot))
		return;
	if (pol->mode == CF_MODE_BEST_EFFORT) {
		cf_err("the workspace %s is the current directory and lies in the home dot-directory "
		       "%s; going on with it (best-effort mode): %s",
		       pol->workspace, dot, cf_cli_hint(CF_VERDICT_WORKSPACE));
		return;
	}
	cf_fence_refuse(f,
			&(struct cf_why){.id = CF_WHY_WORKSPACE_DOT, .arg = {pol->workspace, dot}});
}

const char *cf_cli_reason(const struct cf_fence *f)
{
	static char line[CF_REASON_MAX];
	cf_fence_reason(f, line, sizeof line);
	return line;
}

void cf_cli_log(const struct cf_fence *f, int logfd, const char *program, bool applied)
{
	char buf[8192];
	cf_fence_log(f, logfd, getpid(), program, applied, cf_cli_reason(f),
		     applied ? cf_fence_rules(f) : 0, buf, sizeof buf);
}

void cf_cli_withhold_env(const struct cf_options *o, int logfd, const char *program)
{
	struct cf_env_rules r;
	unsigned long lo, hi;
	char buf[8192];
	cf_options_env_rules(o, &r);
	(void)cf_event_env_write(logfd, getpid(), program, environ, &r, buf, sizeof buf);
	(void)cf_proc_self_env_area(&lo, &hi);
	(void)cf_env_drop_secrets(environ, &r, lo, hi);
}

int cf_cli_hide_env(const struct cf_options *o)
{
	struct cf_env_rules r;
	unsigned long lo, hi;
	cf_options_env_rules(o, &r);
	if (cf_proc_self_env_area(&lo, &hi) == 0 && cf_env_move_secrets(environ, &r, NULL, lo, hi)) {
		cf_err("out of memory while moving the secret variables. Nothing was run.");
		return CF_EXIT_FAIL;
	}
	return 0;
}

_Noreturn void cf_cli_exec(char **cmd)
{
	execvp(cmd[0], cmd);
	int e = errno;
	if (e == ENOENT) {
		cf_err("%s: command not found; check the name and PATH", cmd[0]);
		exit(CF_EXIT_NOTFOUND);
	}
	cf_err("%s: can not execute: %s", cmd[0], strerror(e));
	exit(CF_EXIT_NOEXEC);
}

void cf_warn(const char *fmt, ...)
{
	va_list ap;
	fputs("credfence: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cf_cli_warn_root(const char *sub)
{
	if (geteuid() != 0)
		return;
	cf_warn("%s: running as root, which SECURITY.md puts out of scope: credfence guards an "
		"ordinary user's secrets; root reads /etc/shadow and every user's files inside the "
		"fence; run it as your own user",
		sub);
}

void cf_cli_warn_container(const char *sub, const struct cf_fence *f)
{
	char why[1024];
	if (cf_fence_ready(f) && !cf_fence_inherited(f) && cf_fence_container_gap(why, sizeof why))
		cf_warn("%s: %s", sub, why);
}

const char *cf_cli_esc(const char *s)
{
	static char ring[4][4 * PATH_MAX + 16];
	static unsigned k;
	const char *p = s;
	while (*p && (unsigned char)*p >= 0x20 && *p != 0x7f && *p != '\\')
		p++;
	if (!*p)
		return s; /* nothing to escape: the common case */
	char *out = ring[k++ % 4];
	size_t n = 0, cap = sizeof ring[0];
	for (p = s; *p && n + 8 < cap; p++) {
		unsigned char ch = (unsigned char)*p;
		if (ch == '\\')
			n += (size_t)snprintf(out + n, cap - n, "\\\\");
		else if (ch == '\n')
			n += (size_t)snprintf(out + n, cap - n, "\\n");
		else if (ch == '\t')
			n += (size_t)snprintf(out + n, cap - n, "\\t");
		else if (ch < 0x20 || ch == 0x7f)
			n += (size_t)snprintf(out + n, cap - n, "\\x%02x", ch);
		else
			out[n++] = (char)ch;
	}
	out[n] = '\0';
	if (*p)
		snprintf(out + n, cap - n, "...");
	return out;
}
