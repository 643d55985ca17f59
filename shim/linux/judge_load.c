/* cf_judge() of libcredfence-fenced.so: the judge is libcredfence-judge.so,
 * beside this library, loaded at the first failure that may be the fence's.
 * A fenced program that meets none never loads it: its start pays for a
 * library of wrappers only, which costs what an empty one does (issue 36:
 * with the judge linked in, 1 000 nested /bin/true cost 1.10x plain; its
 * tables, text and relocations were most of that).
 *
 * Called in normal context, from a failed open or stat (the same context
 * the judge has always been built in, with pthread_once and malloc); the
 * loader's own opens pass through the wrappers (denied.c's judging). When
 * the library is not there or does not load, nothing is explained, and the
 * failed call's errno is as the call left it. */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>

#include "judge.h"
#include "protocol.h"

#define JUDGE_FILE CF_JUDGE_FILE

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const struct cf_judge_ops *ops;

static void load(void)
{
	Dl_info self;
	char path[PATH_MAX];
	if (!dladdr((void *)&load, &self) || !self.dli_fname || self.dli_fname[0] != '/')
		return;
	const char *slash = strrchr(self.dli_fname, '/');
	size_t dir = (size_t)(slash - self.dli_fname) + 1;
	if (dir + sizeof JUDGE_FILE > sizeof path)
		return;
	memcpy(path, self.dli_fname, dir);
	memcpy(path + dir, JUDGE_FILE, sizeof JUDGE_FILE);
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h)
		ops = dlsym(h, "cf_judge_ops");
}

const struct cf_judge_ops *cf_judge(void)
{
	pthread_once(&once, load);
	return ops;
}
