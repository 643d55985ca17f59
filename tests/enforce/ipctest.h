/* The IPC and metadata fence tests (issue 10), shared by tests/enforce
 * (credfence run) and tests/shim (self mode and harness children): each
 * scenario is one function, run from one way in.
 *
 * A scenario starts its outside servers itself (cf-ipcserve on a path or an
 * abstract name, a real tmux server), checks unfenced that each of them does
 * hand out the fake key (so the test can fail), then attacks them fenced.
 * Every helper asserts (criterion). Nothing outside the fixture root and one
 * directory of the test's own in /tmp is created or changed. */
#ifndef CF_IPCTEST_H
#define CF_IPCTEST_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "fixture.h"

enum ipct_way {
	IPCT_RUN,   /* credfence run -- CMD */
	IPCT_SELF,  /* LD_PRELOAD=libcredfence.so CMD (self mode) */
	IPCT_SPAWN, /* credfence harness -- cf-ipc launch spawn CMD */
	IPCT_FORK,  /* ... launch fork CMD */
	IPCT_VFORK, /* ... launch vfork CMD */
};

#define IPCT_MAX_PIDS 16

struct ipct {
	struct cf_fx fx;
	char tmp[PATH_MAX];   /* /tmp/cf-ipc-XXXXXX, canonical: a writable location */
	char log[PATH_MAX];   /* ROOT/log.jsonl, outside every writable location */
	char plain[PATH_MAX]; /* ROOT/plain.txt: what an allowed socket may hand out */
	char abs[48];         /* "@cf-ipc-<hex>": prefix of this test's abstract names */
	const char *key;      /* the fake ~/.ssh/id_ed25519 */
	char tmux[PATH_MAX];  /* the outside tmux server's socket, "" when none */
	pid_t pids[IPCT_MAX_PIDS];
	int n_pids;
	bool no_userns; /* CF_TEST_NO_USERNS=1: the supervisor, not read-only
			   mounts, refuses metadata (enforce/linux/mountns/tree_ns.h) */
};

#define IPCT_PLAIN_TEXT "PLAIN-NOT-SECRET"

/* Landlock required (skip locally, fail under CI=true), then the fixture and
 * the /tmp directory. Teardown kills every server the test started. */
void ipct_setup(struct ipct *t);
void ipct_teardown(struct ipct *t);

/* What the fence is told to allow. BY_ENV: through the environment twins
 * (CREDFENCE_ALLOW_SOCKET, CREDFENCE_SSH_AGENT) rather than the options; self
 * mode always uses them. */
struct ipct_allow {
	const char *sockets[4];
	bool ssh_agent;
	bool by_env;
};

/* Run CMD (absolute paths; an argument ";;" separates commands run one after
 * the other by the same fenced tree) fenced by WAY, with --log t->log, ALLOW
 * (may be NULL) and ENV_EXTRA ("NAME=value", NULL-terminated, may be NULL). */
void ipct_fenced(struct cf_fx_out *o, struct ipct *t, enum ipct_way way,
		 const struct ipct_allow *allow, const char *const *env_extra, char *const cmd[]);

/* The scenarios, each from WAY. */
void ipct_attack_sockets(struct ipct *t, enum ipct_way way);  /* path in /tmp, path in ws, abstract */
void ipct_attack_socket_paths(struct ipct *t, enum ipct_way way); /* symlink, relative, io_uring, rename */
void ipct_attack_tmux(struct ipct *t, enum ipct_way way);     /* tmux send-keys to an outside server */
void ipct_attack_dgram(struct ipct *t, enum ipct_way way);    /* sendto an outside abstract datagram deputy */
void ipct_no_self_granted_allowance(struct ipct *t, enum ipct_way way); /* child env, nested run/self */
void ipct_meta_outside(struct ipct *t, enum ipct_way way);    /* key, ~, ~/.ssh, non-secrets */
void ipct_meta_inside(struct ipct *t, enum ipct_way way);     /* workspace and /tmp */
void ipct_tar_inside(struct ipct *t, enum ipct_way way);      /* tar -xpf into the workspace */
void ipct_inside_sockets(struct ipct *t, enum ipct_way way);  /* python: unix, forkserver, tcp, ... */
void ipct_server_then_client(struct ipct *t, enum ipct_way way); /* one child serves (path, /tmp, abstract, abstract datagram), a later one connects */
void ipct_allow_socket(struct ipct *t, enum ipct_way way, bool by_env);
void ipct_ssh_agent(struct ipct *t, enum ipct_way way, bool by_env);
void ipct_swapped_allowed_socket(struct ipct *t, enum ipct_way way); /* agent socket replaced by a link */
/* Issue 18: a harness child kills the supervisor while starved threads (and
 * an outside impostor) bind its name; later children are refused. Harness ways only. */
void ipct_takeover(struct ipct *t, enum ipct_way way);

/* For the CLI tests: start an outside cf-ipcserve on SOCK (path or "@name");
 * COUNT receives the file its accepts are counted in. */
void ipct_serve(struct ipct *t, const char *sock, char count[PATH_MAX]);
size_t ipct_accepts(const char *count);
/* Lines of the log with "event":"EVENT" that contain NEEDLE (NULL: any). */
size_t ipct_log_count(const struct ipct *t, const char *event, const char *needle);
const char *ipct_way_name(enum ipct_way way);

#endif
