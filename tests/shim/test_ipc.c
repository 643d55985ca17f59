/* Issue 10 through the shim: self mode (LD_PRELOAD=libcredfence.so CMD) and
 * the children of a harness started by posix_spawn, fork+exec and vfork (the
 * harness is cf-ipc launch, run under `credfence harness`). The same
 * scenarios as tests/enforce/test_ipc.c, from each of these ways in: outside
 * deputies denied, metadata outside refused, what stays inside works, and
 * --allow-socket / --ssh-agent (or their environment twins) allow exactly
 * what they name. */
#include <criterion/criterion.h>

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

TestSuite(ipc_shim, .init = setup, .fini = teardown, .timeout = 30 * CF_TIMEOUT_SCALE);

/* One test per way in, so that each fails (and is timed) on its own. */
#define EACH_WAY(name, call)                                                     \
	Test(ipc_shim, name##_self) { call(&t, IPCT_SELF); }                     \
	Test(ipc_shim, name##_posix_spawn) { call(&t, IPCT_SPAWN); }             \
	Test(ipc_shim, name##_fork) { call(&t, IPCT_FORK); }                     \
	Test(ipc_shim, name##_vfork) { call(&t, IPCT_VFORK); }

static void allow_opt(struct ipct *x, enum ipct_way w) { ipct_allow_socket(x, w, false); }
static void allow_env(struct ipct *x, enum ipct_way w) { ipct_allow_socket(x, w, true); }
static void agent_opt(struct ipct *x, enum ipct_way w) { ipct_ssh_agent(x, w, false); }

EACH_WAY(outside_sockets_are_denied, ipct_attack_sockets)
EACH_WAY(outside_socket_by_other_paths_is_denied, ipct_attack_socket_paths)
EACH_WAY(outside_tmux_is_denied, ipct_attack_tmux)
EACH_WAY(outside_datagram_deputy_is_denied, ipct_attack_dgram)
EACH_WAY(metadata_outside_is_denied, ipct_meta_outside)
EACH_WAY(metadata_inside_works, ipct_meta_inside)
EACH_WAY(tar_xp_into_the_workspace_works, ipct_tar_inside)
EACH_WAY(sockets_inside_work, ipct_inside_sockets)
EACH_WAY(a_server_of_one_child_is_reachable_by_the_next, ipct_server_then_client)
EACH_WAY(allow_socket_allows_exactly_it, allow_opt)
EACH_WAY(ssh_agent_allows_exactly_it, agent_opt)
EACH_WAY(allowances_can_not_be_widened_inside, ipct_no_self_granted_allowance)
EACH_WAY(a_swapped_agent_socket_stays_denied, ipct_swapped_allowed_socket)
/* The harness reads CREDFENCE_ALLOW_SOCKET too (self mode reads only that). */
Test(ipc_shim, allow_socket_env_in_a_harness) { allow_env(&t, IPCT_SPAWN); }

/* Issue 18: the supervisor killed and its name taken over, from each way a
 * harness starts children. */
Test(ipc_shim, a_taken_over_supervisor_gets_no_listener_posix_spawn) { ipct_takeover(&t, IPCT_SPAWN); }
Test(ipc_shim, a_taken_over_supervisor_gets_no_listener_fork) { ipct_takeover(&t, IPCT_FORK); }
Test(ipc_shim, a_taken_over_supervisor_gets_no_listener_vfork) { ipct_takeover(&t, IPCT_VFORK); }
