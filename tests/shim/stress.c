/* cf-stress THREADS ROUNDS: run as a harness. THREADS threads at once, each
 * ROUNDS times alternating posix_spawn and fork+execve of cf-probe. Every probe
 * must be fenced (status 0); every calling thread stays free (it can still
 * read CF_T_OWN, its own login, which a fenced thread can not); no file descriptor or thread is left behind. A deadlock is
 * caught by alarm(): the process then dies of SIGALRM.
 *
 * CF_T_CHURN=DIR (tests/tsan.sh): every fourth round a thread creates and
 * removes an entry of DIR, an ancestor of the secrets (the fake home), so the
 * harness's fence goes stale and the shim replaces it while other threads'
 * children may still be entering the old one. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *probe, *key;
static char *probe_env[5];
static int any; /* CF_T_ANY: under valgrind Landlock is not there; fenced or not, both do */
static int rounds;
static const char *churn;
static atomic_int bad, launched;

/* The harness's fence watch (enforce/linux/fence_watch.c): its inotify
 * instance (twice), the mount table and the supervisor's pidfd, set at
 * the second launch. One watch is held at a time: counted apart, and at
 * most one set may be open. */
static int watch_fds(int *inotify, int *mounts, int *pidfd)
{
	char link[64], to[PATH_MAX];
	*inotify = *mounts = *pidfd = 0;
	for (int fd = 0; fd < 4096; fd++) {
		snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
		ssize_t n = readlink(link, to, sizeof to - 1);
		if (n <= 0)
			continue;
		to[n] = '\0';
		*inotify += strcmp(to, "anon_inode:inotify") == 0;
		*pidfd += strcmp(to, "anon_inode:[pidfd]") == 0 || strncmp(to, "pidfd:", 6) == 0;
		n = (ssize_t)strlen(to);
		*mounts += n > 10 && strcmp(to + n - 10, "/mountinfo") == 0;
	}
	return *inotify + *mounts + *pidfd;
}

static int count_dir(const char *path)
{
	DIR *d = opendir(path);
	int n = 0;
	if (!d)
		return -1;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static int can_read_key(void)
{
	char c;
	int fd = open(key, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	int ok = read(fd, &c, 1) == 1;
	close(fd);
	return ok;
}

static void check(pid_t pid, const char *how)
{
	int st;
	if (waitpid(pid, &st, 0) != pid) {
		fprintf(stderr, "cf-stress: waitpid after %s: %s\n", how, strerror(errno));
		bad++;
		return;
	}
	launched++;
	if (!WIFEXITED(st) || (WEXITSTATUS(st) != 0 && !(any && WEXITSTATUS(st) == 10))) {
		fprintf(stderr, "cf-stress: cf-probe after %s ended with status %d signal %d\n", how,
			WIFEXITED(st) ? WEXITSTATUS(st) : -1, WIFSIGNALED(st) ? WTERMSIG(st) : 0);
		bad++;
	}
}

static void *worker(void *arg)
{
	(void)arg;
	char *argv[] = {"cf-probe", NULL};
	char entry[4096];
	if (churn)
		snprintf(entry, sizeof entry, "%s/churn-%lx", churn, (unsigned long)pthread_self());
	for (int i = 0; i < rounds; i++) {
		pid_t pid;
		if (churn && i % 4 == 3 && (mkdir(entry, 0700) != 0 || rmdir(entry) != 0)) {
			fprintf(stderr, "cf-stress: %s: %s\n", entry, strerror(errno));
			bad++;
		}
		if (i % 2 == 0) {
			int rc = posix_spawn(&pid, probe, NULL, NULL, argv, probe_env);
			if (rc) {
				fprintf(stderr, "cf-stress: posix_spawn: %s\n", strerror(rc));
				bad++;
				continue;
			}
			check(pid, "posix_spawn");
		} else {
			pid = fork();
			if (pid < 0) {
				fprintf(stderr, "cf-stress: fork: %s\n", strerror(errno));
				bad++;
				continue;
			}
			if (pid == 0) {
				execve(probe, argv, probe_env);
				_exit(98);
			}
			check(pid, "fork+execve");
		}
	}
	if (!can_read_key()) {
		fprintf(stderr, "cf-stress: a calling thread lost access to the key: it was fenced\n");
		bad++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: cf-stress THREADS ROUNDS\n");
		return 2;
	}
	int nthreads = atoi(argv[1]);
	rounds = atoi(argv[2]);
	probe = getenv("CF_T_PROBE");
	key = getenv("CF_T_OWN");
	if (!probe || !key || !getenv("CF_T_KEY") || !getenv("CF_T_KEYS") || !getenv("CF_T_ALLOWED") || nthreads < 1 ||
	    nthreads > 64) {
		fprintf(stderr, "cf-stress: CF_T_PROBE, CF_T_KEY, CF_T_OWN, CF_T_KEYS, CF_T_ALLOWED must be set\n");
		return 2;
	}
	static char e1[70000], e2[8192];
	snprintf(e1, sizeof e1, "CF_T_KEYS=%s", getenv("CF_T_KEYS"));
	snprintf(e2, sizeof e2, "CF_T_ALLOWED=%s", getenv("CF_T_ALLOWED"));
	probe_env[0] = e1, probe_env[1] = e2, probe_env[2] = "PATH=/usr/bin:/bin";
	any = getenv("CF_T_ANY") != NULL;
	churn = getenv("CF_T_CHURN");
	if (any)
		probe_env[3] = "CF_T_QUIET=1";
	/* Long enough for a busy machine (16 x 200 takes 20 to 45 s on two
	 * loaded cores), short of the test's own timeout. */
	alarm(120);

	int wi, wm, wp;
	int fds_before = count_dir("/proc/self/fd") - watch_fds(&wi, &wm, &wp);
	pthread_t t[64];
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, worker, NULL)) {
			fprintf(stderr, "cf-stress: pthread_create failed\n");
			return 1;
		}
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	int fds_after = count_dir("/proc/self/fd") - watch_fds(&wi, &wm, &wp);
	int tasks = count_dir("/proc/self/task");
	if (wi > 2 || wm > 1 || wp > 1) {
		fprintf(stderr, "cf-stress: %d inotify, %d mount table and %d pidfd descriptors: "
				"more than one fence watch\n", wi, wm, wp);
		bad++;
	}
	if (fds_after != fds_before) {
		fprintf(stderr, "cf-stress: %d file descriptors before, %d after\n", fds_before, fds_after);
		bad++;
	}
	/* The shim keeps one spawner thread for the current plan. */
	if (tasks < 1 || tasks > 2) {
		fprintf(stderr, "cf-stress: %d threads left, expected 1 and the shim's spawner\n", tasks);
		bad++;
	}
	if (!can_read_key()) {
		fprintf(stderr, "cf-stress: the harness lost access to the key: it was fenced\n");
		bad++;
	}
	printf("STRESS launched=%d bad=%d\n", (int)launched, (int)bad);
	return bad ? 1 : 0;
}
