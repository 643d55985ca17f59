#include "proc.h"

#include <errno.h>
#include <fcntl.h>

#include "sys.h"

unsigned long long cf_proc_self_starttime(void)
{
	return cf_proc_starttime(0);
}

unsigned long long cf_proc_starttime(int pid)
{
	char state;
	return cf_proc_starttime_state(pid, &state);
}

unsigned long long cf_proc_starttime_state(int pid, char *state)
{
	struct cf_proc_stat st;
	*state = 0;
	if (cf_proc_stat(pid, &st) < 0)
		return 0;
	*state = st.state;
	return st.start;
}

/* Field N (N >= 3) of the stat line P points into, after the last ')'. */
static unsigned long long field(const char *p, int n)
{
	int at = 2;
	while (*p && at < n) {
		if (*p == ' ') {
			at++;
			while (*p == ' ')
				p++;
			continue;
		}
		p++;
	}
	unsigned long long v = 0;
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (unsigned long long)(*p++ - '0');
	return v;
}

int cf_proc_stat(int pid, struct cf_proc_stat *st)
{
	char buf[1024], path[32] = "/proc/self/stat";
	if (pid > 0) {
		char digits[12];
		int nd = 0, at = 6; /* after "/proc/" */
		do
			digits[nd++] = (char)('0' + pid % 10);
		while ((pid /= 10) && nd < (int)sizeof digits);
		while (nd)
			path[at++] = digits[--nd];
		for (const char *t = "/stat"; *t; t++)
			path[at++] = *t;
		path[at] = '\0';
	}
	int fd = cf_sys_openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fd;
	long n = cf_sys3(SYS_read, fd, buf, sizeof buf - 1);
	cf_sys_close(fd);
	if (n <= 0)
		return n < 0 ? (int)n : -EIO;
	buf[n] = '\0';
	/* The command name may hold spaces and parentheses: fields start after the last ')'. */
	char *p = 0;
	for (char *q = buf; *q; q++)
		if (*q == ')')
			p = q;
	if (!p || p[1] != ' ')
		return -EIO;
	p++;
	st->state = p[1];                       /* field 3 */
	st->ppid = (int)field(p, 4);            /* field 4 */
	st->start = field(p, 22);               /* field 22, clock ticks since boot */
	st->env_start = (unsigned long)field(p, 50); /* fields 50 and 51 (Linux 3.5) */
	st->env_end = (unsigned long)field(p, 51);
	return st->start ? 0 : -EIO;
}

int cf_proc_self_env_area(unsigned long *lo, unsigned long *hi)
{
	struct cf_proc_stat st;
	*lo = *hi = 0;
	if (cf_proc_stat(0, &st) < 0 || !st.env_start || st.env_end <= st.env_start)
		return -1;
	*lo = st.env_start;
	*hi = st.env_end;
	return 0;
}
