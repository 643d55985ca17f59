/* The process's environment, from a dylib. environ is defined by the main
 * program's startup code, which a library can not link against (environ(7)
 * on macOS); _NSGetEnviron() gives its address at run time. Include this
 * instead of declaring environ. */
#ifndef CF_DARWIN_ENVIRON_H
#define CF_DARWIN_ENVIRON_H

#include <crt_externs.h>

#define environ (*_NSGetEnviron())

#endif
