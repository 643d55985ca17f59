#include "denial.h"

#include <stdio.h>
#include <string.h>

#include "paths.h"

const char *cf_denial_tilde(char *out, size_t cap, const char *path, const char *home)
{
	size_t n = home ? strlen(home) : 0;
	if (n > 1 && strncmp(path, home, n) == 0 && (path[n] == '/' || path[n] == '\0'))
		snprintf(out, cap, "~%s", path + n);
	else
		snprintf(out, cap, "%s", path);
	return out;
}

bool cf_denial_is_pty(const char *path)
{
	return strncmp(path, "/dev/pts/", 9) == 0 && path[9] != '\0';
}

const char *cf_denial_row(const char *path)
{
	return cf_denial_is_pty(path) ? CF_DENIAL_PTY_ROW : "outside every writable location";
}

const char *cf_denial_allow(char *out, size_t cap, const char *path, bool write, bool secret,
			    const char *home)
{
	char p[4096 + 2];
	if (secret && write)
		return NULL;
	if (secret)
		snprintf(out, cap, "--allow-read %s", cf_denial_tilde(p, sizeof p, path, home));
	else if (cf_denial_is_pty(path))
		snprintf(out, cap, "--allow-ptys"); /* /dev/pts is no writable location */
	else
		snprintf(out, cap, "--writable DIR");
	return out;
}

/* R (snprintf's result) as the length written into OUT (CAP): a line cut
 * short still ends with its newline. */
static size_t cut(char *out, size_t cap, int r)
{
	if (r < 0)
		return 0;
	if ((size_t)r >= cap) {
		out[cap - 2] = '\n';
		return cap - 1;
	}
	return (size_t)r;
}

size_t cf_denial_words(char *out, size_t cap, const char *path, bool write, const char *holds,
		       const char *home)
{
	char p[4096 + 2], allow[4096 + 32];
	if (cap < 2)
		return 0;
	cf_denial_tilde(p, sizeof p, path, home);
	const char *a = cf_denial_allow(allow, sizeof allow, path, write, holds != NULL, home);
	const char *what = holds ? holds : cf_denial_row(path);
	int r;
	if (a)
		r = snprintf(out, cap, "credfence: denied %s of %s (%s); to allow: %s, or see: credfence check %s\n",
			     write ? "write" : "read", p, what, a, p);
	else
		r = snprintf(out, cap, "credfence: denied write of %s (%s); no option makes a secret "
			     "writable; see: credfence check %s\n", p, what, p);
	return cut(out, cap, r);
}

const char *cf_denial_protected_allow(char *out, size_t cap, const char *loc, const char *home)
{
	char l[4096 + 2];
	snprintf(out, cap, "--allow-write-protected %s", cf_denial_tilde(l, sizeof l, loc, home));
	return out;
}

size_t cf_denial_protected_words(char *out, size_t cap, const char *path, const char *runs,
				 const char *loc, const char *home)
{
	char p[4096 + 2], allow[4096 + 32];
	if (cap < 2)
		return 0;
	cf_denial_tilde(p, sizeof p, path, home);
	cf_denial_protected_allow(allow, sizeof allow, loc, home);
	int r = snprintf(out, cap,
			 "credfence: denied write of %s (runs unfenced later: %s); to allow: %s, or "
			 "see: credfence check %s\n",
			 p, runs, allow, p);
	return cut(out, cap, r);
}

/* Whether PATH lies in a harness-tmp.* directory right under BASE. */
static bool in_harness_tmp(const char *path, const char *base)
{
	static const char name[] = "harness-tmp.";
	size_t n = base ? strlen(base) : 0;
	if (!n || !cf_path_within(path, base) || path[n] != '/')
		return false;
	return strncmp(path + n + 1, name, sizeof name - 1) == 0;
}

const char *cf_denial_own_row(const struct cf_denial_own *own, const char *path)
{
	if (own->tmpdir && cf_path_within(path, own->tmpdir))
		return "the harness's own temporary directory, made by credfence";
	if (in_harness_tmp(path, own->runtime) || in_harness_tmp(path, own->state))
		return "a harness's own temporary directory, made by credfence";
	if (own->state && cf_path_within(path, own->state))
		return "credfence's own state";
	if (own->log && strcmp(path, own->log) == 0)
		return "credfence's log";
	return NULL;
}

size_t cf_denial_own_words(char *out, size_t cap, const char *path, const char *row,
			   const char *home)
{
	char p[4096 + 2];
	if (cap < 2)
		return 0;
	cf_denial_tilde(p, sizeof p, path, home);
	return cut(out, cap, snprintf(out, cap, "credfence: denied write of %s (%s); no fenced "
				      "command may write there, and no option changes that\n",
				      p, row));
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

bool cf_denial_ssh_key(const char *path, const char *loc)
{
	static const char *const not_keys[] = {"known_hosts", "known_hosts2", "config"};
	size_t n = strlen(loc);
	if (strcmp(base_name(loc), ".ssh") != 0 || strncmp(path, loc, n) != 0 || path[n] != '/')
		return false;
	for (size_t i = 0; i < sizeof not_keys / sizeof *not_keys; i++)
		if (strcmp(path + n + 1, not_keys[i]) == 0)
			return false;
	return true;
}

size_t cf_denial_ssh_key_words(char *out, size_t cap, const char *path, const char *holds,
			       bool agent, const char *home)
{
	char p[4096 + 2];
	if (cap < 2)
		return 0;
	cf_denial_tilde(p, sizeof p, path, home);
	if (agent)
		return cut(out, cap, snprintf(out, cap, "credfence: denied read of %s (%s); ssh signs "
					      "with your agent here (--ssh-agent): if it has no key, "
					      "add one to it outside the fence (ssh-add)\n", p, holds));
	return cut(out, cap, snprintf(out, cap, "credfence: denied read of %s (%s); ssh can sign with "
				      "your agent instead of its key files: to allow: --ssh-agent\n",
				      p, holds));
}

size_t cf_denial_connect_words(char *out, size_t cap, const char *path, const char *ssh_agent,
			       const char *home)
{
	char p[4096 + 2];
	const char *b = base_name(path);
	if (cap < 2)
		return 0;
	cf_denial_tilde(p, sizeof p, path, home);
	if (ssh_agent && strcmp(path, ssh_agent) == 0)
		return cut(out, cap, snprintf(out, cap, "credfence: denied connect to %s (your ssh "
					      "agent, $SSH_AUTH_SOCK); to allow: --ssh-agent\n", p));
	if (strcmp(b, "S.gpg-agent") == 0 || strncmp(b, "S.gpg-agent.", 12) == 0)
		return cut(out, cap, snprintf(out, cap, "credfence: denied connect to %s (gpg-agent); "
					      "to allow: --allow-socket %s\n", p, p));
	return 0;
}
