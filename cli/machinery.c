/* The fence never covers its own machinery: the credfence command, the
 * symlink the user called it by, and the shim a harness loads must not lie in
 * a writable location of the fence they set up. A fenced command could
 * replace any of them, and the user's next call would then run unfenced. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef __APPLE__
#include <mach-o/dyld.h>
#endif

#include "cli.h"
#include "machinery.h"
#include "paths.h"
#include "vars.h"

const char *cf_cli_self_path(void)
{
	static char exe[PATH_MAX];
	if (exe[0])
		return exe;
#ifdef __APPLE__
	char raw[PATH_MAX];
	uint32_t size = sizeof raw;
	if (_NSGetExecutablePath(raw, &size) != 0 || !realpath(raw, exe))
		exe[0] = '\0';
#else
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = '\0';
#endif
	return exe[0] ? exe : NULL;
}

/* How the user called credfence: argv[0], set by main. */
static const char *invoked_as;

void cf_cli_set_invoked(const char *argv0)
{
	invoked_as = argv0;
}

/* The symlink the user called credfence by (~/.local/bin/credfence, which
 * scripts/credfence makes), its directory canonical: argv[0], searched in
 * PATH as the shell did when it holds no slash; NULL when it is no symlink
 * or not found. */
const char *cf_cli_link_path(void)
{
	static char link[PATH_MAX];
	char try[PATH_MAX], dir[PATH_MAX];
	struct stat st;
	const char *name = invoked_as, *path = getenv("PATH");
	if (!name || !*name)
		return NULL;
	if (strchr(name, '/')) {
		if ((size_t)snprintf(try, sizeof try, "%s", name) >= sizeof try)
			return NULL;
	} else {
		for (try[0] = '\0'; path && *path;) {
			size_t k = strcspn(path, ":");
			if ((size_t)snprintf(try, sizeof try, "%.*s/%s", (int)k, path, name) < sizeof try &&
			    k && access(try, X_OK) == 0)
				break;
			try[0] = '\0';
			path += k + (path[k] == ':');
		}
	}
	if (!try[0] || lstat(try, &st) || !S_ISLNK(st.st_mode))
		return NULL;
	char *slash = strrchr(try, '/');
	*slash = '\0';
	if (!realpath(*try ? try : "/", dir) ||
	    (size_t)snprintf(link, sizeof link, "%s/%s", strcmp(dir, "/") ? dir : "", slash + 1) >=
		    sizeof link)
		return NULL;
	return link;
}

/* The launcher script that ran us (scripts/credfence sets CREDFENCE_SCRIPT),
 * read once: CMD does not inherit the variable. */
const char *cf_cli_script_path(void)
{
	static char path[PATH_MAX];
	static bool read;
	if (!read) {
		const char *s = getenv(cf_var_name(CF_VAR_SCRIPT));
		if (s && *s && !realpath(s, path))
			path[0] = '\0';
		unsetenv(cf_var_name(CF_VAR_SCRIPT));
		read = true;
	}
	return path[0] ? path : NULL;
}

/* The writable location of P that holds PATH, or NULL. */
const char *cf_cli_writable_holding(const struct cf_policy *p, const char *path)
{
	for (size_t i = 0; path && i < p->writable.n; i++)
		if (cf_path_within(path, p->writable.v[i]))
			return p->writable.v[i];
	return NULL;
}

int cf_cli_check_machinery(const struct cf_policy *p, const char *shim)
{
	struct {
		const char *what, *path;
	} parts[] = {
		{"the credfence command", cf_cli_self_path()},
		{"the shim", shim},
	};
	/* The launcher script is not judged: it has run already, and one that a
	 * fenced command rewrote would not call us at all. It only tells the
	 * user to call the installed copy next time (scripts/credfence); status
	 * still shows where it lies. Read here so that CMD does not inherit it. */
	(void)cf_cli_script_path();
	const char *link = cf_cli_link_path(), *w = cf_cli_writable_holding(p, link);
	if (w) {
		cf_err("the link %s you called credfence by lies in the writable location %s: a fenced "
		       "command could replace it and your next call would run unfenced; call the "
		       "installed copy directly (%s), or link it from a directory outside every "
		       "writable location. Nothing was run.",
		       link, w, cf_cli_self_path() ? cf_cli_self_path() : "PREFIX/bin/credfence");
		return CF_EXIT_FAIL;
	}
	for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
		if (!(w = cf_cli_writable_holding(p, parts[i].path)))
			continue;
		cf_err("%s %s lies in the writable location %s: a fenced command could replace it "
		       "and your next call would run unfenced; install credfence outside every "
		       "writable location (meson install, or scripts/credfence, which installs into "
		       "~/.local/lib/credfence) and run that copy. Nothing was run.",
		       parts[i].what, parts[i].path, w);
		return CF_EXIT_FAIL;
	}
	return 0;
}
