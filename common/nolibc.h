/* String helpers safe where the C library is not: between fork and exec in
 * a child that may have been forked from a threaded parent, in a signal
 * handler, and before the shim's real functions are resolved. Plain loops
 * over the caller's memory: no locale, no IFUNC, no sanitizer interceptor.
 * The one copy of each (issue 34); the raw system calls are in
 * common/linux/sys.h. */
#ifndef CF_NOLIBC_H
#define CF_NOLIBC_H

#include <stdbool.h>
#include <stddef.h>

static inline size_t cf_nl_strlen(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}

static inline bool cf_nl_streq(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

/* Whether S begins with P. */
static inline bool cf_nl_has_prefix(const char *s, const char *p)
{
	while (*p && *s == *p)
		s++, p++;
	return !*p;
}

/* The entry of a PATH value at *P joined with FILE (FL bytes, no '/') into
 * BUF (CAP bytes): true when it fits. *P moves to the next entry, NULL
 * after the last. An empty entry is the current directory (FILE alone), as
 * execvp takes it. */
static inline bool cf_nl_path_next(const char **p, const char *file, size_t fl, char *buf,
				   size_t cap)
{
	const char *s = *p, *end = s;
	while (*end && *end != ':')
		end++;
	*p = *end ? end + 1 : NULL;
	size_t dl = (size_t)(end - s), at = 0;
	if (dl + 1 + fl + 1 > cap)
		return false;
	for (; at < dl; at++)
		buf[at] = s[at];
	if (dl)
		buf[at++] = '/';
	for (size_t i = 0; i <= fl; i++)
		buf[at + i] = file[i];
	return true;
}

#endif
