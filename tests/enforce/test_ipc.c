/* Issue 10 through `credfence run`: a fenced command can not use a process
 * outside the fence as its deputy (a Unix socket, pathname or abstract, bound
 * outside; a tmux server), nor change metadata outside the writable
 * locations; what stays inside works; --allow-socket and --ssh-agent allow
 * exactly what they name; `check` and `status` say so. The scenarios are in
 * ipctest.c, shared with tests/shim/test_ipc.c (the other ways in). */
#include <criterion/criterion.h>
#include <string.h>

#include "ipctest.h"

static struct ipct t;

static void setup(void)
{
	ipct_setup(&t);
}

static void teardown(void)
{
	ipct_teardown(&t);
}

TestSuite(ipc_run, .init = setup, .fini = teardown, .timeout = 30);

Test(ipc_run, outside_sockets_are_denied) { ipct_attack_sockets(&t, IPCT_RUN); }
Test(ipc_run, outside_socket_by_other_paths_is_denied) { ipct_attack_socket_paths(&t, IPCT_RUN); }
Test(ipc_run, outside_tmux_is_denied) { ipct_attack_tmux(&t, IPCT_RUN); }
Test(ipc_run, metadata_outside_is_denied) { ipct_meta_outside(&t, IPCT_RUN); }
Test(ipc_run, metadata_inside_works) { ipct_meta_inside(&t, IPCT_RUN); }
Test(ipc_run, tar_xp_into_the_workspace_works) { ipct_tar_inside(&t, IPCT_RUN); }
Test(ipc_run, sockets_inside_work) { ipct_inside_sockets(&t, IPCT_RUN); }
Test(ipc_run, a_server_of_the_tree_is_reachable) { ipct_server_then_client(&t, IPCT_RUN); }
Test(ipc_run, allow_socket_allows_exactly_it) { ipct_allow_socket(&t, IPCT_RUN, false); }
Test(ipc_run, allow_socket_env_allows_exactly_it) { ipct_allow_socket(&t, IPCT_RUN, true); }
Test(ipc_run, ssh_agent_allows_exactly_it) { ipct_ssh_agent(&t, IPCT_RUN, false); }
Test(ipc_run, ssh_agent_env_allows_exactly_it) { ipct_ssh_agent(&t, IPCT_RUN, true); }
Test(ipc_run, a_swapped_agent_socket_stays_denied) { ipct_swapped_allowed_socket(&t, IPCT_RUN); }
Test(ipc_run, allowances_can_not_be_widened_inside) { ipct_no_self_granted_allowance(&t, IPCT_RUN); }

/* The only line of OUT that holds NEEDLE (asserts there is exactly one). */
static void expect_one_line(const struct cf_fx_out *o, const char *needle, const char *what)
{
	size_t n = 0;
	for (const char *p = o->out; (p = strstr(p, needle)); p++)
		n++;
	cr_expect_eq(n, 1, "%s: %zu lines with '%s'\nstatus %d\n--- stdout\n%s\n--- stderr\n%s", what,
		     n, needle, o->status, o->out, o->err);
}

/* `credfence check SOCK`: "connect: denied" for an outside socket, "connect:
 * allowed" for one --allow-socket names, and still denied for its neighbour. */
Test(ipc_run, check_says_connect_denied_or_allowed)
{
	char a[PATH_MAX], b[PATH_MAX], count[PATH_MAX];
	cf_fx_fmt(a, sizeof a, "%s/a.sock", t.tmp);
	cf_fx_fmt(b, sizeof b, "%s/b.sock", t.tmp);
	ipct_serve(&t, a, count);
	ipct_serve(&t, b, count);
	struct cf_fx_out o;

	cf_fx_credfence(&o, &t.fx, "check", NULL, CF_ARGV(a));
	expect_one_line(&o, "connect: denied", "check of an outside socket");
	cr_expect(!strstr(o.out, "connect: allowed"));
	cf_fx_out_free(&o);

	cf_fx_credfence(&o, &t.fx, "check", NULL, CF_ARGV("--allow-socket", a, a));
	expect_one_line(&o, "connect: allowed", "check with --allow-socket");
	cf_fx_out_free(&o);

	cf_fx_credfence(&o, &t.fx, "check", NULL, CF_ARGV("--allow-socket", a, b));
	expect_one_line(&o, "connect: denied", "check of the neighbour of an allowed socket");
	cf_fx_out_free(&o);

	char env[PATH_MAX + 32];
	cf_fx_fmt(env, sizeof env, "CREDFENCE_ALLOW_SOCKET=%s", a);
	cf_fx_credfence(&o, &t.fx, "check", (const char *[]){env, NULL}, CF_ARGV(a));
	expect_one_line(&o, "connect: allowed", "check with CREDFENCE_ALLOW_SOCKET");
	cf_fx_out_free(&o);
	cr_expect_eq(ipct_accepts(count), 0, "check connected to a socket");
}

/* `credfence status` has an "ipc:" part in its verdict. */
Test(ipc_run, status_shows_the_ipc_part)
{
	struct cf_fx_out o;
	cf_fx_credfence(&o, &t.fx, "status", NULL, NULL);
	bool found = false;
	for (const char *p = o.out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		found |= strncmp(p, "ipc:", 4) == 0;
	cr_expect(found, "no line 'ipc: ...' in status\nstatus %d\n--- stdout\n%s\n--- stderr\n%s",
		  o.status, o.out, o.err);
	cr_expect_eq(o.status, 0, "status: %d\n%s", o.status, o.err);
	cf_fx_out_free(&o);
}
