/* cf-nsask: asks the supervisor that CREDFENCE_SUPERVISOR names for the
 * mount namespace of the harness's children, as a child that lost its
 * descriptors does (enforce/linux/supervisor.h, cf_ipc_ns_get). Prints
 * "GOT N" (N descriptors received) or "REFUSED ERRNO-NAME"; exits 1 when
 * it got them, 0 when refused, 2 without an address.
 *
 *   cf-nsask enter: got them, it enters the namespace by them (setns user,
 *   then mount) and asks again, from inside: one more line. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "supervisor.h"
#include "supervisor_wire.h"

static int ask(const struct cf_ipc *ipc, int fds[3])
{
	struct cf_ns_wire w;
	int rc = cf_ipc_ns_get(ipc, &w, fds);
	if (rc == 0)
		printf("GOT %d\n", w.nfds);
	else
		printf("REFUSED %s\n", rc > -4096 ? strerrorname_np(-rc) : "IPC");
	fflush(stdout);
	return rc;
}

int main(int argc, char **argv)
{
	struct cf_ipc ipc;
	const char *a = getenv("CREDFENCE_SUPERVISOR");
	memset(&ipc, 0, sizeof ipc);
	if (!a || cf_ipc_set_addr(&ipc, a)) {
		puts("NOADDR");
		return 2;
	}
	int fds[3];
	if (ask(&ipc, fds))
		return 0;
	if (argc == 2 && !strcmp(argv[1], "enter")) {
		if (setns(fds[0], CLONE_NEWUSER) || setns(fds[1], CLONE_NEWNS)) {
			perror("cf-nsask: setns");
			return 3;
		}
		ask(&ipc, fds);
	}
	return 1;
}
