/* cf-early: the program that needs libcf-early.so (early_lib.c) and uses its
 * IFUNC, which is resolved while this program is relocated (-z now), before
 * any constructor; main says whether the resolver's syscall() returned the
 * real results (in self mode main may run in another process: the process
 * that loaded the shim stays as the waiter). */
#include <stdio.h>
#include <unistd.h>

long cf_early_ifunc(void);
long cf_early_resolver_bad(void);
long cf_early_resolver_exec(void);

int main(void)
{
	long pid = cf_early_ifunc();
	long bad = cf_early_resolver_bad();
	printf("SYSCALL ifunc-getpid %s got=%ld\n", pid > 0 && bad != 1 ? "ok" : "bad", pid);
	printf("SYSCALL ifunc-ebadf %s\n", bad != 2 ? "ok" : "bad");
	/* The resolver's shell said RAN itself; a refusal is said here. */
	long ex = cf_early_resolver_exec();
	if (ex != 0)
		printf("EXEC ifunc-execve refused errno=%d\n", ex == 100 ? 1 : (int)-ex);
	printf("MAIN done\n");
	return 0;
}
