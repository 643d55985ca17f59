#include "proc.h"

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
		return 0;
	long n = cf_sys3(SYS_read, fd, buf, sizeof buf - 1);
	cf_sys_close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* The command name may hold spaces and parentheses: fields start after the last ')'. */
	char *p = 0;
	for (char *q = buf; *q; q++)
		if (*q == ')')
			p = q;
	if (!p)
		return 0;
	p++;
	*state = p[0] == ' ' ? p[1] : 0; /* field 3 */
	/* After ')' come fields 3.. ; start time is field 22. */
	int field = 2;
	while (*p && field < 22) {
		if (*p == ' ') {
			field++;
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
