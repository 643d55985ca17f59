/* stack-layers N CMD [ARG...]: put N harmless Landlock layers on this process
 * (each handles only LANDLOCK_ACCESS_FS_MAKE_BLOCK), then exec CMD. With N = 16
 * the kernel refuses any further layer (E2BIG): the fourth Landlock fault. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: stack-layers N CMD [ARG...]\n");
		return 2;
	}
	int n = atoi(argv[1]);
	uint64_t handled = 1ULL << 11; /* LANDLOCK_ACCESS_FS_MAKE_BLOCK */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		perror("stack-layers: no_new_privs");
		return 2;
	}
	for (int i = 0; i < n; i++) {
		long fd = syscall(__NR_landlock_create_ruleset, &handled, sizeof handled, 0);
		if (fd < 0 || syscall(__NR_landlock_restrict_self, fd, 0)) {
			fprintf(stderr, "stack-layers: layer %d: %s\n", i + 1, strerror(errno));
			return 2;
		}
		close((int)fd);
	}
	execvp(argv[2], argv + 2);
	perror("stack-layers: exec");
	return 127;
}
