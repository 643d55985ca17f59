/* cf-denyprobe KEY OTHER ALLOWED: the C calls a fenced program makes on a
 * secret, each line "CALL errno-name": open KEY twice (one notice, not two),
 * fopen OTHER, stat KEY, open ALLOWED (no notice). errno is printed as the
 * call left it: the shim must not change it.
 *
 * cf-denyprobe forge read|write PATH...: the shim's report for each PATH,
 * made by hand (a fenced program forging one); prints "forge errno-name". */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "denial_wire.h"

static void say(const char *call, int ok)
{
	int e = errno;
	printf("%s %s\n", call, ok ? "OK" : strerrorname_np(e));
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "forge") == 0) {
		for (int i = 3; i < argc; i++) {
			struct cf_denial_report r = {.access = strcmp(argv[2], "write") == 0};
			snprintf(r.path, sizeof r.path, "%s", argv[i]);
			int rc = ioctl(-1, CF_DENIAL_IOCTL, &r);
			printf("forge %s\n", rc == 0 ? "OK" : strerrorname_np(errno));
		}
		return 0;
	}
	if (argc != 4)
		return 2;
	setvbuf(stdout, NULL, _IONBF, 0);
	int fd = open(argv[1], O_RDONLY);
	say("open", fd >= 0);
	fd = openat(AT_FDCWD, argv[1], O_RDONLY);
	say("openat-again", fd >= 0);
	FILE *f = fopen(argv[2], "r");
	say("fopen", f != NULL);
	struct stat st;
	say("stat", stat(argv[1], &st) == 0);
	fd = open(argv[3], O_RDONLY);
	say("open-allowed", fd >= 0);
	return 0;
}
