#include "verdict.h"

#include <errno.h>
#include <stdbool.h>

#include "errwords.h"
#include "json.h"

struct fixed {
	int err;
	const char *words;
};

static const struct fixed landlock_words[] = {
	{ENOSYS, "not built into this kernel: ENOSYS"},
	{EOPNOTSUPP, "disabled at boot: EOPNOTSUPP"},
	{EPERM, "blocked by seccomp or a container policy: EPERM"},
	{E2BIG, "the process already has the 16 stacked Landlock layers the kernel allows: E2BIG"},
	{0, NULL},
};

static const struct fixed ttyfilter_words[] = {
	{ENOSYS, "no filter for this machine, or no seccomp: ENOSYS"},
	{EINVAL, "the kernel has no seccomp filters: EINVAL"},
	{EPERM, "refused by an outer seccomp or container policy: EPERM"},
	{EACCES, "no_new_privs is not set: EACCES"},
	{ENOMEM, "out of memory, or too many filters: ENOMEM"},
	{0, NULL},
};

static const struct row {
	enum cf_verdict verdict;
	const char *tmpl;
	const struct fixed *fixed; /* words for {E}, before the system's */
} rows[CF_WHY_COUNT] = {
	[CF_WHY_APPLIED] = {CF_VERDICT_APPLIED, CF_STATUS_APPLIED, NULL},
	[CF_WHY_INHERITED] = {CF_VERDICT_APPLIED,
			      CF_STATUS_APPLIED " (inherited: this process is fenced already)", NULL},
	[CF_WHY_HOME_EMPTY] = {CF_VERDICT_HOME_EMPTY, "HOME is empty", NULL},
	[CF_WHY_OVERLAP] = {CF_VERDICT_OVERLAP, "writable location {W} overlaps secret {S}", NULL},
	[CF_WHY_STATE_UNRESOLVED] = {CF_VERDICT_HARNESS_STATE, "--harness-state {D} can not be resolved",
				     NULL},
	[CF_WHY_STATE_SECRET] = {CF_VERDICT_HARNESS_STATE,
				 "--harness-state {D} {holds} secret {S} ({WHAT})", NULL},
	[CF_WHY_STATE_TRUSTED] = {CF_VERDICT_HARNESS_STATE,
				  "--harness-state {D} {holds} {F}, which {H} trusts ({WHAT})", NULL},
	[CF_WHY_LANDLOCK] = {CF_VERDICT_LANDLOCK, "landlock unavailable ({E})", landlock_words},
	[CF_WHY_LANDLOCK_ABI] = {CF_VERDICT_LANDLOCK,
				 "landlock unavailable (kernel ABI too old: {N}, need {M})", NULL},
	[CF_WHY_TOO_MANY] = {CF_VERDICT_TOO_MANY, "too many entries under {DIR} ({N} > {LIMIT})", NULL},
	[CF_WHY_NESTED] = {CF_VERDICT_NESTED,
			   "this process is fenced already by a policy that does not deny {S}", NULL},
	[CF_WHY_NESTED_NO_IPC] = {CF_VERDICT_NESTED,
				  "this process is fenced already, by a fence without an IPC "
				  "supervisor; start it from outside that fence",
				  NULL},
	[CF_WHY_UNRESOLVED] = {CF_VERDICT_ERROR, "can not resolve secret {S} ({E})", NULL},
	[CF_WHY_WRITABLE_LINK] = {CF_VERDICT_WRITABLE_LINK,
				  "writable location {W} is reached through symlink {L}, which lies "
				  "in writable location {V}",
				  NULL},
	[CF_WHY_WORKSPACE_DOT] = {CF_VERDICT_WORKSPACE,
				  "the workspace {DIR} is the current directory and lies in the home "
				  "dot-directory {D}",
				  NULL},
	[CF_WHY_WORKSPACE_UNSET] = {CF_VERDICT_WORKSPACE,
				    "CREDFENCE_WORKSPACE is not set, so the workspace would be the "
				    "current directory {DIR}",
				    NULL},
	[CF_WHY_WORKSPACE_RELATIVE] = {CF_VERDICT_WORKSPACE,
				       "CREDFENCE_WORKSPACE='{DIR}' is relative, so each process "
				       "would take it from its own current directory",
				       NULL},
	[CF_WHY_TTYFILTER] = {CF_VERDICT_SECCOMP,
			      "seccomp filter for terminal injection could not be installed ({E})",
			      ttyfilter_words},
	[CF_WHY_LOOP] = {CF_VERDICT_ERROR,
			 "a location of the plan was replaced by a symlink after the policy was "
			 "resolved: ELOOP",
			 NULL},
	[CF_WHY_STALE] = {CF_VERDICT_ERROR,
			  "a symlink on the way to a secret changed since the harness prepared its "
			  "plan; start the harness again",
			  NULL},
	[CF_WHY_IPC_NOTIF] = {CF_VERDICT_IPC, "seccomp user notification unavailable ({E})", NULL},
	[CF_WHY_IPC_BUSY] = {CF_VERDICT_IPC,
			     "another seccomp notification listener is installed ({E})", NULL},
	[CF_WHY_IPC_NNP] = {CF_VERDICT_IPC, "seccomp filter refused (no_new_privs not set) ({E})",
			    NULL},
	[CF_WHY_IPC_TIMEOUT] = {CF_VERDICT_IPC, "IPC supervisor did not answer ({E})", NULL},
	[CF_WHY_IPC_UNREACHABLE] = {CF_VERDICT_IPC, "IPC supervisor unreachable ({E})", NULL},
	[CF_WHY_IPC_NONE] = {CF_VERDICT_IPC, "no IPC supervisor serves this process ({E})", NULL},
	[CF_WHY_IPC_REFUSED] = {CF_VERDICT_IPC, "IPC supervisor refused the fence ({E})", NULL},
	[CF_WHY_IPC_START] = {CF_VERDICT_IPC, "the IPC supervisor could not be started ({E})", NULL},
	[CF_WHY_IPC_PTRACE] = {CF_VERDICT_IPC,
			       "Yama's ptrace_scope keeps the IPC supervisor from the fenced "
			       "processes (it needs 1 or less, or CAP_SYS_PTRACE for 2) "
			       "(ptrace_scope {N})",
			       NULL},
	[CF_WHY_IPC_PIDFD] = {CF_VERDICT_IPC, "pidfd_getfd unavailable ({E})", NULL},
	[CF_WHY_IPC_ENDED] = {CF_VERDICT_IPC,
				 "the IPC supervisor has ended; nothing more can be fenced under "
				 "it (start the harness or command again)",
				 NULL},
	[CF_WHY_IPC_IDENTITY] = {CF_VERDICT_IPC,
				 "the IPC supervisor's identity can not be established ({E})", NULL},
	[CF_WHY_SEATBELT_MISSING] = {CF_VERDICT_SEATBELT,
				     "seatbelt unavailable (sandbox_init_with_parameters not found)",
				     NULL},
	[CF_WHY_SEATBELT_REFUSED] = {CF_VERDICT_SEATBELT, "seatbelt unavailable ({WHY})", NULL},
	[CF_WHY_SEATBELT_PROFILE] = {CF_VERDICT_ERROR, "can not build the seatbelt profile ({E})",
				     NULL},
	[CF_WHY_CHILD_NOMEM] = {CF_VERDICT_ERROR, "the child could not prepare its fence", NULL},
};

static const struct row *row_of(enum cf_why_id id)
{
	return (unsigned)id < CF_WHY_COUNT ? &rows[id] : &rows[CF_WHY_STALE];
}

enum cf_verdict cf_why_verdict(enum cf_why_id id)
{
	return row_of(id)->verdict;
}

const char *cf_why_template(enum cf_why_id id)
{
	return (unsigned)id < CF_WHY_COUNT ? rows[id].tmpl : NULL;
}

int cf_why_refuses_always(enum cf_why_id id)
{
	return id == CF_WHY_IPC_ENDED || id == CF_WHY_IPC_IDENTITY;
}

const char *cf_why_fixed_errno(enum cf_why_id id, size_t i)
{
	const struct fixed *f = (unsigned)id < CF_WHY_COUNT ? rows[id].fixed : NULL;
	for (size_t k = 0; f && f[k].words; k++)
		if (k == i)
			return f[k].words;
	return NULL;
}

/* Append S as one line: a line break in a path or a system message would
 * forge a second status line. */
static void put_line(char *out, size_t cap, size_t *len, const char *s)
{
	for (; *s && *len + 1 < cap; s++)
		out[(*len)++] = *s == '\n' || *s == '\r' ? ' ' : *s;
	out[*len] = '\0';
}

static bool slot_is(const char *name, size_t n, const char *want)
{
	size_t i = 0;
	for (; i < n && want[i]; i++)
		if (name[i] != want[i])
			return false;
	return i == n && !want[i];
}

static void put_errno(const struct row *r, int err, char *out, size_t cap, size_t *len)
{
	for (const struct fixed *f = r->fixed; f && f->words; f++)
		if (f->err == err) {
			cf_json_raw(out, cap, len, f->words);
			return;
		}
	cf_errno_put(out, cap, len, err);
}

void cf_why_words(const struct cf_why *w, char *out, size_t cap)
{
	const struct row *r = row_of(w->id);
	size_t len = 0, arg = 0;
	if (!cap)
		return;
	out[0] = '\0';
	if (r->verdict != CF_VERDICT_APPLIED)
		cf_json_raw(out, cap, &len, CF_STATUS_NOT_EFFECTIVE);
	for (const char *t = r->tmpl; *t;) {
		const char *close = *t == '{' ? t + 1 : NULL;
		while (close && *close && *close != '}')
			close++;
		if (!close || !*close) {
			if (len + 1 < cap)
				out[len++] = *t, out[len] = '\0';
			t++;
			continue;
		}
		const char *name = t + 1;
		size_t n = (size_t)(close - name);
		if (slot_is(name, n, "E"))
			put_errno(r, w->err, out, cap, &len);
		else if (slot_is(name, n, "N"))
			cf_json_num(out, cap, &len, w->n);
		else if (slot_is(name, n, "M") || slot_is(name, n, "LIMIT"))
			cf_json_num(out, cap, &len, w->limit);
		else {
			const char *s = arg < CF_WHY_ARGS ? w->arg[arg] : NULL;
			arg++;
			put_line(out, cap, &len, s ? s : "?");
		}
		t = close + 1;
	}
}
