/* cf-nsask: asks the supervisor that CREDFENCE_SUPERVISOR names for the
 * mount namespace of the harness's children, as a child that lost its
 * descriptors does (enforce/linux/notify/supervisor.h, cf_ipc_ns_get). Prints
 * "GOT N" (N descriptors received) or "REFUSED ERRNO-NAME"; exits 1 when
 * it got them, 0 when refused, 2 without an address.
 *
 *   cf-nsask enter: got them, it enters the namespace by them (setns user,
 *   then mount) and asks again, from inside: one more line.
 *
 *   cf-nsask give: hands its own user and mount namespaces to the
 *   supervisor instead, as the harness's guard does once (cf_ipc_ns_give).
 *   Prints "GIVEN" or "GIVE REFUSED ERRNO-NAME"; exits 1 when they were
 *   taken, 0 when refused, 3 when it could not open them. */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "notify/supervisor.h"
#include "notify/supervisor_wire.h"

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

static int give(const struct cf_ipc *ipc)
{
	int fds[3] = {open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC),
		      open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC), -1};
	struct stat u, m;
	if (fds[0] < 0 || fds[1] < 0 || fstat(fds[0], &u) || fstat(fds[1], &m)) {
		perror("cf-nsask: /proc/self/ns");
		return 3;
	}
	struct cf_ns_wire w;
	memset(&w, 0, sizeof w);
	w.nfds = 2;
	w.user_ino = u.st_ino;
	w.mnt_ino = m.st_ino;
	w.dev = u.st_dev;
	int rc = cf_ipc_ns_give(ipc, &w, fds);
	if (rc == 0)
		puts("GIVEN");
	else
		printf("GIVE REFUSED %s\n", rc > -4096 ? strerrorname_np(-rc) : "IPC");
	return rc == 0;
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
	if (argc == 2 && !strcmp(argv[1], "give"))
		return give(&ipc);
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
