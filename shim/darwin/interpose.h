/* macOS interposition: dyld reads (replacement, original) pairs from the
 * __DATA,__interpose section of a library inserted with DYLD_INSERT_LIBRARIES
 * and binds every other image's references to ORIGINAL to REPLACEMENT. The
 * library's own references are left alone, so inside it a plain call of the
 * original IS the real function: no dlsym(RTLD_NEXT) on macOS.
 *
 * Calls between libSystem's own dylibs (execvp in libsystem_c reaching execve
 * in libsystem_kernel, system() reaching posix_spawn) are interposed as well,
 * which is why every replacement runs behind the recursion guard (guard.h). */
#ifndef CF_DARWIN_INTERPOSE_H
#define CF_DARWIN_INTERPOSE_H

#ifndef __APPLE__
#error "shim/darwin is macOS only"
#endif

struct cf_interpose {
	const void *replacement;
	const void *original;
};

#define CF_INTERPOSE(replacement, original)                                                    \
	__attribute__((used)) static const struct cf_interpose cf_interpose_##original         \
		__attribute__((section("__DATA,__interpose"))) = {(const void *)&replacement,  \
								   (const void *)&original}

#endif
