#include "proc.h"

#include <fcntl.h>

#include "sys.h"

/* Field FIELD (numbered from 1, as proc(5) does, FIELD > 2) of
 * /proc/self/stat, or 0 when it can not be read. */
static unsigned long long self_stat_field(int want)
{
	char buf[1024];
	int fd = cf_sys_openat(AT_FDCWD, "/proc/self/stat", O_RDONLY | O_CLOEXEC);
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
	/* After ')' come fields 3.. */
	int field = 2;
	while (*p && field < want) {
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

unsigned long long cf_proc_self_starttime(void)
{
	return self_stat_field(22);
}

int cf_proc_self_env_area(unsigned long *lo, unsigned long *hi)
{
	*lo = (unsigned long)self_stat_field(50);
	*hi = (unsigned long)self_stat_field(51);
	if (!*lo || *hi <= *lo) {
		*lo = *hi = 0;
		return -1;
	}
	return 0;
}
