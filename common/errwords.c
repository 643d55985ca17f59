#include "errwords.h"

#include <errno.h>

#include "json.h"

const char *cf_errno_words(int e)
{
	switch (e) {
	case EPERM: return "Operation not permitted";
	case ENOENT: return "No such file or directory";
	case ESRCH: return "No such process";
	case EINTR: return "Interrupted system call";
	case EIO: return "Input/output error";
	case E2BIG: return "Argument list too long";
	case EBADF: return "Bad file descriptor";
	case EAGAIN: return "Resource temporarily unavailable";
	case ENOMEM: return "Cannot allocate memory";
	case EACCES: return "Permission denied";
	case EFAULT: return "Bad address";
	case EBUSY: return "Device or resource busy";
	case EEXIST: return "File exists";
	case ENOTDIR: return "Not a directory";
	case EINVAL: return "Invalid argument";
	case EMFILE: return "Too many open files";
	case ENFILE: return "Too many open files in system";
	case ENOSPC: return "No space left on device";
	case EPIPE: return "Broken pipe";
	case ERANGE: return "Numerical result out of range";
	case ENAMETOOLONG: return "File name too long";
	case ENOSYS: return "Function not implemented";
	case ELOOP: return "Too many levels of symbolic links";
	case EOPNOTSUPP: return "Operation not supported";
	case ECONNRESET: return "Connection reset by peer";
	case ENOTCONN: return "Transport endpoint is not connected";
	case ETIMEDOUT: return "Connection timed out";
	case ECONNREFUSED: return "Connection refused";
	case ESTALE: return "Stale file handle";
	default: return 0;
	}
}

void cf_errno_put(char *buf, size_t cap, size_t *len, int e)
{
	const char *w = cf_errno_words(e);
	if (w) {
		cf_json_raw(buf, cap, len, w);
	} else {
		cf_json_raw(buf, cap, len, "error ");
		cf_json_num(buf, cap, len, e);
	}
}
