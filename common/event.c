#include "event.h"
#include "protocol.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#ifdef __linux__
#include "sys.h"
#else
#include <unistd.h>
#endif

#include "json.h"

char *cf_event_lists(const struct cf_policy *p)
{
	size_t cap = 64;
	for (size_t i = 0; i < p->n_denied; i++)
		cap += 6 * strlen(p->denied[i].path) + 8; /* \u00XX: six bytes a byte at most */
	for (size_t i = 0; i < p->writable.n; i++)
		cap += 6 * strlen(p->writable.v[i]) + 8;
	char *buf = malloc(cap);
	size_t len = 0;
	if (!buf)
		return NULL;
	buf[0] = '\0';
	cf_json_raw(buf, cap, &len, "\"denied\":[");
	for (size_t i = 0; i < p->n_denied; i++) {
		if (i)
			cf_json_raw(buf, cap, &len, ",");
		cf_json_str(buf, cap, &len, p->denied[i].path);
	}
	cf_json_raw(buf, cap, &len, "],\"writable\":[");
	for (size_t i = 0; i < p->writable.n; i++) {
		if (i)
			cf_json_raw(buf, cap, &len, ",");
		cf_json_str(buf, cap, &len, p->writable.v[i]);
	}
	cf_json_raw(buf, cap, &len, "]");
	return buf;
}

size_t cf_event_head(const struct cf_event *e, char *buf, size_t cap)
{
	size_t len = 0;
	if (!cap)
		return 0;
	buf[0] = '\0';
	cf_json_raw(buf, cap, &len, "{\"event\":\"sandbox_status\",\"pid\":");
	cf_json_num(buf, cap, &len, e->pid);
	cf_json_raw(buf, cap, &len, ",\"program\":");
	cf_json_str(buf, cap, &len, e->program ? e->program : "");
	cf_json_raw(buf, cap, &len, ",\"backend\":");
	cf_json_str(buf, cap, &len, e->backend);
	if (e->abi >= 0) {
		cf_json_raw(buf, cap, &len, ",\"abi\":");
		cf_json_num(buf, cap, &len, e->abi);
	}
	cf_json_raw(buf, cap, &len, ",\"verdict\":");
	cf_json_str(buf, cap, &len, e->applied ? "applied" : "not effective");
	cf_json_raw(buf, cap, &len, ",\"reason\":");
	cf_json_str(buf, cap, &len, e->reason);
	cf_json_raw(buf, cap, &len, ",\"mode\":");
	cf_json_str(buf, cap, &len, cf_mode_word(e->mode));
	cf_json_raw(buf, cap, &len, ",\"rules\":");
	cf_json_num(buf, cap, &len, (long long)e->rules);
	cf_json_raw(buf, cap, &len, ",");
	return len;
}

/* writev never writes through iov_base. */
static void *iov_base(const char *s)
{
	return (void *)(uintptr_t)s;
}

void cf_event_write(int fd, const struct cf_event *e, const char *lists, char *buf, size_t cap)
{
	if (fd < 0)
		return;
	size_t len = cf_event_head(e, buf, cap);
	struct iovec iov[3] = {
		{buf, len},
		{iov_base(lists ? lists : ""), lists ? strlen(lists) : 0},
		{iov_base("}\n"), 2},
	};
#ifdef __linux__
	(void)cf_sys3(SYS_writev, fd, iov, 3);
#else
	(void)!writev(fd, iov, 3);
#endif
}
