/* A program named with --harness-program in the role tests (test_follow.c).
 * Its arguments are pairs, each an action done in order with one line out:
 *   write PATH   create PATH: "ROLE write ok", or the errno's name
 *   read PATH    "ROLE read " and the first line of PATH, or the errno's name
 *   system CMD   system(CMD): "ROLE system STATUS"
 *   marker -     "ROLE marker self" when CREDFENCE_HARNESS names this
 *                process, "other" when another, "none" when unset */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *err_name(int e)
{
	return e == EACCES ? "EACCES" : e == EROFS ? "EROFS" : e == EPERM ? "EPERM" : e == ENOENT ? "ENOENT" : "other";
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	for (int i = 1; i + 1 < argc; i += 2) {
		const char *act = argv[i], *arg = argv[i + 1];
		if (strcmp(act, "write") == 0) {
			FILE *f = fopen(arg, "w");
			printf("ROLE write %s\n", f ? "ok" : err_name(errno));
			if (f)
				fclose(f);
		} else if (strcmp(act, "read") == 0) {
			char line[256] = "";
			FILE *f = fopen(arg, "r");
			if (!f) {
				printf("ROLE read %s\n", err_name(errno));
				continue;
			}
			if (!fgets(line, sizeof line, f))
				line[0] = '\0';
			fclose(f);
			printf("ROLE read %s%s", line, strchr(line, '\n') ? "" : "\n");
		} else if (strcmp(act, "system") == 0) {
			int st = system(arg);
			printf("ROLE system %d\n", st);
		} else if (strcmp(act, "marker") == 0) {
			const char *m = getenv("CREDFENCE_HARNESS");
			printf("ROLE marker %s\n", !m ? "none" : atol(m) == (long)getpid() ? "self" : "other");
		} else {
			fprintf(stderr, "cf-role: unknown action %s\n", act);
			return 2;
		}
	}
	return 0;
}
