/* The fence on macOS (fence.h, darwin/fence_state.h): policy, then profile,
 * then Seatbelt. */
#ifdef __APPLE__
#include "fence_state.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "event.h"
#include "seatbelt.h"


/* A secret the enclosing sandbox lets us read, or NULL. Asked of the kernel
 * (sandbox_check) without opening anything: a missing secret is judged by its
 * name just as an existing one. */
static const char *uncovered(const struct cf_policy *p)
{
	for (size_t i = 0; i < p->n_denied; i++)
		if (cf_sb_allows("file-read-data", p->denied[i].path) != 0)
			return p->denied[i].path;
	return NULL;
}

/* Rules in the profile: its lines that allow or deny. */
static size_t count_rules(const char *text)
{
	size_t n = 0;
	for (const char *l = text; l && *l;) {
		if (!strncmp(l, "(allow ", 7) || !strncmp(l, "(deny ", 6))
			n++;
		const char *nl = strchr(l, '\n');
		l = nl ? nl + 1 : NULL;
	}
	return n;
}

int cf_fence_prepare(struct cf_fence *f, const struct cf_options *o, char *const envp[],
		     const char *cwd)
{
	char here[PATH_MAX];
	int rc;

	memset(f, 0, sizeof *f);
	if (!cwd)
		cwd = getcwd(here, sizeof here) ? here : "/";
	if ((rc = cf_policy_build(&f->pol, o, envp, cwd)))
		return rc;
	if (!(f->lists_json = cf_event_lists(&f->pol)))
		return -ENOMEM;
	if (f->pol.verdict != CF_VERDICT_APPLIED)
		return 0;
	if (cf_sb_probe()) {
		cf_policy_verdict(&f->pol, &(struct cf_why){.id = CF_WHY_SEATBELT_MISSING});
		return 0;
	}
	if (cf_sb_active() == 1) {
		/* Sandboxed already (a nested run, the shim loaded into us, or a
		 * sandbox of someone else's): a second sandbox can not be applied.
		 * Add none, but only when the one in force denies every secret. */
		f->inherited = f->ready = cf_policy_inherit(&f->pol, uncovered(&f->pol));
		return 0;
	}
	rc = cf_profile_build(&f->pf, &f->pol);
	if (rc == -ENOMEM)
		return rc;
	if (rc) {
		cf_policy_verdict(&f->pol, &(struct cf_why){.id = CF_WHY_SEATBELT_PROFILE, .err = -rc});
		return 0;
	}
	f->res.rules = count_rules(f->pf.text);
	f->ready = true;
	return 0;
}

struct cf_fence *cf_fence_new(void)
{
	return calloc(1, sizeof(struct cf_fence));
}

void cf_fence_free(struct cf_fence *f)
{
	cf_profile_free(&f->pf);
	free(f->lists_json);
	cf_policy_free(&f->pol);
	memset(f, 0, sizeof *f);
}

/* The accessors of the door, written once for both systems. */
#include "fence_fields.h"

int cf_fence_apply(struct cf_fence *f)
{
	if (!f->ready)
		return -EPERM;
	if (f->inherited)
		return 0;
	char why[1024];
	int rc = cf_sb_apply(&f->pf, why, sizeof why);
	if (rc)
		cf_fence_refuse(f, &(struct cf_why){.id = CF_WHY_SEATBELT_REFUSED, .arg = {why}});
	return rc;
}

void cf_fence_reason(const struct cf_fence *f, char *out, size_t cap)
{
	cf_policy_reason(&f->pol, out, cap);
}

void cf_fence_refuse(struct cf_fence *f, const struct cf_why *w)
{
	cf_policy_verdict(&f->pol, w);
	f->ready = false;
}

/* The child's verdict: its return code, then the system's words. */
struct probe_report {
	int rc;
	char why[1024];
};

int cf_fence_resolve(void)
{
	return cf_sb_probe();
}

int cf_fence_fenced(void)
{
	return cf_sb_active() == 1;
}

int cf_fence_may_create(const char *path)
{
	int r = cf_sb_allows("file-write-create", path);
	return r == 1 ? 0 : r == 0 ? -EPERM : r;
}

int cf_fence_container_gap(char *why, size_t n)
{
	(void)why;
	(void)n;
	return 0;
}

int cf_fence_probe(struct cf_fence *f)
{
	if (!f->ready || f->inherited)
		return f->ready ? 0 : -EPERM;
	int fds[2];
	if (pipe(fds))
		return -errno;
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(fds[0]);
		close(fds[1]);
		return -e;
	}
	if (pid == 0) {
		static struct probe_report mine;
		close(fds[0]);
		mine.rc = cf_sb_apply(&f->pf, mine.why, sizeof mine.why);
		(void)!write(fds[1], &mine, sizeof mine);
		_exit(0);
	}
	close(fds[1]);
	static struct probe_report r;
	size_t got = 0;
	while (got < sizeof r) {
		ssize_t n = read(fds[0], (char *)&r + got, sizeof r - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fds[0]);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	if (got != sizeof r) {
		r.rc = -EPIPE;
		snprintf(r.why, sizeof r.why, "the probe child died");
	}
	if (r.rc) {
		r.why[sizeof r.why - 1] = '\0';
		cf_fence_refuse(f, &(struct cf_why){.id = CF_WHY_SEATBELT_REFUSED, .arg = {r.why}});
	}
	return r.rc;
}

bool cf_fence_current(const struct cf_fence *f)
{
	if (f->inherited)
		return true;
	return f->ready && cf_policy_resolves_same(&f->pol);
}

int cf_fence_enter(const struct cf_fence *f, char *buf, size_t bufsz, struct cf_expand_result *res)
{
	res->rules = 0;
	res->refusal = NULL;
	if (!f->ready)
		return -EPERM;
	if (f->inherited) {
		res->rules = f->res.rules;
		return 0;
	}
	if (!cf_policy_resolves_same(&f->pol))
		return -ESTALE;
	int rc = cf_sb_apply(&f->pf, buf, bufsz);
	if (rc)
		res->refusal = buf;
	else
		res->rules = f->res.rules;
	return rc;
}

/* Seatbelt's profile is no descriptor: nothing of the parent's to close. */
int cf_fence_close_parents_fds(const struct cf_fence *f)
{
	(void)f;
	return 0;
}

void cf_fence_words(const struct cf_fence *f, int rc, const struct cf_expand_result *res,
		    char *out, size_t cap)
{
	struct cf_why w = f->pol.why; /* not ready: its own verdict */
	if (f->ready && rc == -ESTALE)
		w = (struct cf_why){.id = CF_WHY_STALE};
	else if (f->ready)
		w = (struct cf_why){.id = CF_WHY_SEATBELT_REFUSED,
				    .arg = {res && res->refusal ? res->refusal : strerror(-rc)}};
	cf_why_words(&w, out, cap);
}

int cf_fence_log_open(const struct cf_fence *f)
{
	if (!f->pol.log)
		return -1;
	return open(f->pol.log, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
}

void cf_fence_log(const struct cf_fence *f, int fd, pid_t pid, const char *program, bool applied,
		  const char *reason, size_t rules, char *buf, size_t bufsz)
{
	struct cf_event e = {pid, program, "seatbelt", -1, applied, reason, f->pol.mode, rules,
			     NULL, 0, NULL};
	cf_event_write(fd, &e, f->lists_json, buf, bufsz);
}

/* No IPC supervisor on macOS yet (SECURITY.md): none is ever needed or
 * started, and no failure refuses in best-effort mode too. */
bool cf_fence_refuses_always(const struct cf_fence *f, int rc)
{
	(void)f;
	(void)rc;
	return false;
}

bool cf_fence_needs_supervisor(const struct cf_fence *f)
{
	(void)f;
	return false;
}

const char *cf_fence_supervisor(const struct cf_fence *f)
{
	(void)f;
	return NULL;
}

int cf_fence_start_supervisor(struct cf_fence *f, pid_t keeper, int logfd, bool above)
{
	(void)f;
	(void)above;
	(void)keeper;
	(void)logfd;
	return 0;
}

#endif
