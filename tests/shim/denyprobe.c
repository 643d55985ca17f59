/* cf-denyprobe KEY OTHER ALLOWED: the C calls a fenced program makes on a
 * secret, each line "CALL errno-name": open KEY twice (one notice, not two),
 * fopen OTHER, stat KEY, open ALLOWED (no notice). errno is printed as the
 * call left it: the shim must not change it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void say(const char *call, int ok)
{
	int e = errno;
	printf("%s %s\n", call, ok ? "OK" : strerrorname_np(e));
}

int main(int argc, char **argv)
{
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
