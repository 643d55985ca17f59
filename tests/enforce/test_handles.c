/* Issue 36: open_by_handle_at is refused inside the fence (EPERM), root
 * included, from each way in. A file handle names an inode of a file
 * system, not a path: opened through any mount of that file system, it
 * reaches the inode whether or not the mount's root is its ancestor. Since
 * each writable location became a mount of its own (write protection), root
 * read ~/.ssh/id_ed25519 through the workspace's mount, with a handle from
 * name_to_handle_at (which a path lookup allows) and the workspace as the
 * mount descriptor. Tried here through each mount the fence makes on the
 * key's file system: the workspace and a protected read-only bind inside it
 * (.git/hooks), with a handle made inside and one made outside (a harness
 * child's guard hides ~/.ssh from its own lookup). As an ordinary
 * user the call needs a capability the user does not have and fails with
 * EPERM all the same; the control run outside the fence shows, as root,
 * that the probe does read the key when nothing refuses it. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "enforce_test.h"

CF_SUITE_STATE()

static char hooks[PATH_MAX + 32];

static void setup(void)
{
	cf_suite_setup();
	cf_test_require_landlock();
	cf_fx_fmt(hooks, sizeof hooks, "%s/.git/hooks", fx.ws);
	cf_fx_mkdirs(hooks);
}

TestSuite(handles, .init = setup, .fini = cf_suite_teardown, .timeout = 120);

/* The key's handle, made here (name_to_handle_at needs no privilege) as
 * the probe's byhandle operand takes it: TYPE/HEX. */
static const char *handle_of(const char *path)
{
	static char out[32 + 2 * MAX_HANDLE_SZ];
	struct file_handle *h = calloc(1, sizeof *h + MAX_HANDLE_SZ);
	int mount_id;
	cr_assert(h);
	h->handle_bytes = MAX_HANDLE_SZ;
	cr_assert_eq(name_to_handle_at(AT_FDCWD, path, h, &mount_id, 0), 0,
		     "name_to_handle_at(%s): %s", path, strerror(errno));
	size_t k = (size_t)snprintf(out, sizeof out, "%d/", h->handle_type);
	for (unsigned i = 0; i < h->handle_bytes; i++)
		k += (size_t)snprintf(out + k, sizeof out - k, "%02x", h->f_handle[i]);
	free(h);
	return out;
}

/* sh -c text that runs the probe: the key's handle made inside (handle:)
 * and made outside (byhandle:), each opened through the workspace and
 * through .git/hooks. */
static void script(char *out, size_t n)
{
	const char *key = cf_fx_secret(&fx, ".ssh")->key, *h = handle_of(key);
	cf_fx_fmt(out, n, "'%s' 'handle:%s:%s' 'handle:%s:%s' 'byhandle:%s:%s' 'byhandle:%s:%s'; exit 0",
		  CF_PROBE, key, fx.ws, key, hooks, h, fx.ws, h, hooks);
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* Every open_by_handle_at refused, and the key's marker nowhere. INSIDE:
 * how many of the handles made inside could be made (a harness child's
 * guard covers ~/.ssh, and its name_to_handle_at fails first). */
static void expect_refused(const char *how, size_t inside)
{
	char want[PATH_MAX + 32];
	cf_fx_fmt(want, sizeof want, "handle %s: EPERM\n", cf_fx_secret(&fx, ".ssh")->key);
	cr_expect_eq(o.status, 0, "%s: " OUT_FMT, how, OUT_ARGS(o));
	cr_expect(count(o.out, want) == inside,
		  "%s: open_by_handle_at of a handle made inside must fail with EPERM: " OUT_FMT,
		  how, OUT_ARGS(o));
	cr_expect(has_line(o.out, "byhandle %s: EPERM", fx.ws) &&
			  has_line(o.out, "byhandle %s: EPERM", hooks),
		  "%s: open_by_handle_at must fail with EPERM: " OUT_FMT, how, OUT_ARGS(o));
	cf_fx_assert_no_marker(&fx, &o);
}

/* Outside the fence, as root, the probe reads the key: the runs below can
 * tell a refusal from a probe that does nothing. */
static void control(void)
{
	if (geteuid() != 0)
		return;
	const char *key = cf_fx_secret(&fx, ".ssh")->key;
	char s[12 * PATH_MAX];
	script(s, sizeof s);
	char **env = cf_fx_env(&fx, NULL);
	struct cf_fx_out p = {0};
	cf_fx_run(&p, fx.ws, env, NULL, CF_ARGV("/bin/sh", "-c", s));
	cf_fx_env_free(env);
	cr_assert(has_line(p.out, "handle %s: OK", key) && has_line(p.out, "byhandle %s: OK", fx.ws) &&
			  strstr(p.out, cf_fx_secret(&fx, ".ssh")->marker),
		  "control: root outside the fence did not read the key by its handle: " OUT_FMT,
		  OUT_ARGS(p));
	cf_fx_out_free(&p);
}

Test(handles, refused_under_credfence_run)
{
	control();
	char s[12 * PATH_MAX];
	script(s, sizeof s);
	fenced(&o, &fx, NULL, NULL, CF_ARGV("/bin/sh", "-c", s));
	expect_refused("credfence run", 2);
}

Test(handles, refused_in_self_mode)
{
	control();
	char s[12 * PATH_MAX], pre[PATH_MAX + 16], home[PATH_MAX + 16], ws[PATH_MAX + 32];
	const char *b = getenv("CREDFENCE_BUILD");
	cr_assert(b && *b, "CREDFENCE_BUILD is not set; run with meson test");
	script(s, sizeof s);
	cf_fx_fmt(pre, sizeof pre, "LD_PRELOAD=%s/shim/libcredfence.so", b);
	cf_fx_fmt(home, sizeof home, "CREDFENCE_HOME=%s", fx.home);
	cf_fx_fmt(ws, sizeof ws, "CREDFENCE_WORKSPACE=%s", fx.ws);
	char **env = cf_fx_env(&fx, (const char *[]){pre, home, ws, NULL});
	cf_fx_run(&o, fx.ws, env, NULL, CF_ARGV("/bin/sh", "-c", s));
	cf_fx_env_free(env);
	expect_refused("self mode", 2);
}

Test(handles, refused_in_a_harness_child)
{
	control();
	char s[12 * PATH_MAX];
	script(s, sizeof s);
	/* bash as the harness; /bin/sh, not its last command, is its fenced child. */
	cf_fx_credfence(&o, &fx, "harness", NULL,
			CF_ARGV("--", "bash", "-c", "/bin/sh -c \"$1\"; exit $?", "bash", s));
	expect_refused("a harness child", 0);
}
