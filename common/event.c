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
#include "secret_env.h"

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
	if (e->metadata) {
		cf_json_raw(buf, cap, &len, ",\"metadata\":");
		cf_json_str(buf, cap, &len, e->metadata);
		cf_json_raw(buf, cap, &len, ",\"protected\":");
		cf_json_num(buf, cap, &len, (long long)e->protected_held);
		cf_json_raw(buf, cap, &len, ",\"write_protect\":");
		cf_json_str(buf, cap, &len, e->write_protect_off ? "off" : "on");
		if (e->write_protect_off) {
			cf_json_raw(buf, cap, &len, ",\"write_protect_off\":");
			cf_json_str(buf, cap, &len, e->write_protect_off);
		}
	}
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

/* One name of an entry, escaped, when it fits with room for the tail. */
static bool put_name(char *buf, size_t cap, size_t *len, const char *entry, size_t tail)
{
	char name[256];
	size_t n = cf_env_name_len(entry);
	if (n >= sizeof name)
		return false;
	for (size_t i = 0; i < n; i++)
		name[i] = entry[i];
	name[n] = '\0';
	if (*len + 6 * n + 4 + tail >= cap)
		return false;
	cf_json_str(buf, cap, len, name);
	return true;
}

/* The env_withheld line: the names of V's entries, each judged under R when
 * JUDGE (V NULL-terminated), all of them otherwise (N entries). */
static size_t env_line(int fd, long pid, const char *program, char *const *v, size_t n,
		       bool judge, const struct cf_env_rules *r, char *buf, size_t cap)
{
	static const char tail[] = "],\"names_cut\":true}\n";
	size_t len = 0, withheld = 0;
	bool cut = false;
	if (fd < 0 || cap < 1024)
		return 0;
	buf[0] = '\0';
	cf_json_raw(buf, cap, &len, "{\"event\":\"env_withheld\",\"pid\":");
	cf_json_num(buf, cap, &len, pid);
	/* The program's first 128 bytes: a name that fits any buffer of 1 KiB. */
	char prog[129];
	size_t plen = 0;
	for (; program && program[plen] && plen < sizeof prog - 1; plen++)
		prog[plen] = program[plen];
	prog[plen] = '\0';
	cf_json_raw(buf, cap, &len, ",\"program\":");
	cf_json_str(buf, cap, &len, prog);
	cf_json_raw(buf, cap, &len, ",\"names\":[");
	for (size_t i = 0; v && (judge ? v[i] != NULL : i < n); i++) {
		if (judge && cf_env_secret(v[i], r) == CF_ENV_PASS)
			continue;
		if (!cut) {
			if (withheld)
				cf_json_raw(buf, cap, &len, ",");
			cut = !put_name(buf, cap, &len, v[i], sizeof tail);
		}
		withheld++;
	}
	if (!withheld)
		return 0;
	if (buf[len - 1] == ',') /* a name that did not fit after a comma */
		buf[--len] = '\0';
	cf_json_raw(buf, cap, &len, cut ? "],\"names_cut\":true}\n" : "]}\n");
#ifdef __linux__
	(void)cf_sys3(SYS_write, fd, buf, len);
#else
	(void)!write(fd, buf, len);
#endif
	return withheld;
}

size_t cf_event_env_write(int fd, long pid, const char *program, char *const *envp,
			  const struct cf_env_rules *r, char *buf, size_t cap)
{
	return env_line(fd, pid, program, envp, 0, true, r, buf, cap);
}

size_t cf_event_withheld_write(int fd, long pid, const char *program, char *const *withheld,
			       size_t n, char *buf, size_t cap)
{
	return env_line(fd, pid, program, withheld, n, false, NULL, buf, cap);
}
