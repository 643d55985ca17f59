/* credfence explain LOGFILE: a past run's log read back for a person. The
 * denials grouped by what denied them (a secret row, a write-protected row,
 * the socket rule, the metadata rule), each with the line that would allow it; then the launches
 * and their verdicts. A line that is not one of credfence's JSON lines is
 * skipped and counted, never fatal. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "logline.h"
#include "strv.h"

/* One group of denials: its title and its lines, in the order met. */
struct group {
	char *title;
	struct cf_strv lines;
	struct cf_strv allows; /* distinct, in the order met */
};

struct explain {
	struct group *g;
	size_t n;
	struct cf_strv launches;
	struct cf_strv ended;
	size_t events, skipped, other;
};

static const char *or_q(const char *s)
{
	return s && *s ? s : "?";
}

static struct group *group_of(struct explain *x, const char *title)
{
	for (size_t i = 0; i < x->n; i++)
		if (strcmp(x->g[i].title, title) == 0)
			return &x->g[i];
	struct group *g = realloc(x->g, (x->n + 1) * sizeof *g);
	if (!g)
		return NULL;
	x->g = g;
	g = &x->g[x->n];
	memset(g, 0, sizeof *g);
	if (!(g->title = strdup(title)))
		return NULL;
	x->n++;
	return g;
}

static int add(struct explain *x, const char *title, const char *line, const char *allow)
{
	struct group *g = group_of(x, title);
	if (!g || cf_strv_add(&g->lines, line))
		return -1;
	return allow && *allow ? cf_strv_add_unique(&g->allows, allow) : 0;
}

static int fmt_add(struct explain *x, const char *title, const char *allow, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fmt_add(struct explain *x, const char *title, const char *allow, const char *fmt, ...)
{
	char line[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	return add(x, title, line, allow);
}

/* One event into X: -1 only when out of memory. */
static int take(struct explain *x, const struct cf_logline *l)
{
	const char *ev = cf_logline_get(l, "event");
	const char *pid = or_q(cf_logline_get(l, "pid"));
	const char *prog = or_q(cf_logline_get(l, "program"));
	const char *reason = cf_logline_get(l, "reason");
	char title[4096], allow[4200], line[8192];
	if (!ev) {
		x->skipped++;
		return 0;
	}
	x->events++;
	if (strcmp(ev, "denied") == 0) {
		/* The supervisor's judgement of a fenced program's failed
		 * open (issue 24): the row and the option are its own. */
		const char *row = cf_logline_get(l, "row");
		snprintf(title, sizeof title, "%s", row && *row ? row : "outside every writable location");
		return fmt_add(x, title, cf_logline_get(l, "allow"), "%s %s by %s (pid %s)",
			       or_q(cf_logline_get(l, "access")), or_q(cf_logline_get(l, "path")),
			       prog, pid);
	}
	if (strcmp(ev, "write_protected") == 0) {
		/* A write inside a writable location that the protected table
		 * refuses (issue 23): grouped by the row, as check words it. */
		snprintf(title, sizeof title, "runs unfenced later: %s",
			 or_q(cf_logline_get(l, "row")));
		return fmt_add(x, title, cf_logline_get(l, "allow"), "write %s by %s (pid %s)",
			       or_q(cf_logline_get(l, "path")), prog, pid);
	}
	if (strcmp(ev, "ipc_denied") == 0) {
		const char *sock = or_q(cf_logline_get(l, "socket"));
		snprintf(allow, sizeof allow, "--allow-socket %s", sock);
		bool creds = reason && strcmp(reason, "credentials") == 0;
		return fmt_add(x, "Unix sockets bound outside the fence", creds ? NULL : allow,
			       "connect %s by %s (pid %s)%s%s", sock, prog, pid,
			       reason ? ": " : "", reason ? reason : "");
	}
	if (strcmp(ev, "metadata_denied") == 0) {
		return fmt_add(x, "metadata changes outside the writable locations", "--writable DIR",
			       "%s %s by %s (pid %s)%s%s", or_q(cf_logline_get(l, "call")),
			       or_q(cf_logline_get(l, "path")), prog, pid, reason ? ": " : "",
			       reason ? reason : "");
	}
	if (strcmp(ev, "sandbox_status") == 0) {
		snprintf(line, sizeof line, "%s (pid %s): %s, %s", prog, pid,
			 or_q(cf_logline_get(l, "verdict")), or_q(reason));
		return cf_strv_add(&x->launches, line);
	}
	if (strcmp(ev, "supervisor_ended") == 0) {
		snprintf(line, sizeof line, "the supervisor ended (seen by %s, pid %s)%s%s", prog, pid,
			 reason ? ": " : "", reason ? reason : "");
		return cf_strv_add(&x->ended, line);
	}
	x->other++; /* env_withheld and later events: not denials of a path */
	return 0;
}

/* The length of the UTF-8 character at S (2 to 4 bytes) and its code point
 * in *CP, or 0 when S starts none (ASCII, a stray or overlong byte, a
 * surrogate). */
static size_t utf8_at(const unsigned char *s, unsigned *cp)
{
	unsigned c = s[0];
	size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
	if (!n)
		return 0;
	unsigned v = c & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && (v < 0x800 || (v >= 0xd800 && v <= 0xdfff))) || (n == 4 && (v < 0x10000 || v > 0x10ffff)))
		return 0;
	*cp = v;
	return n;
}

/* Whether a terminal or an editor would take the code point CP as a
 * command or a reordering: the C1 controls, and the bidirectional marks and
 * overrides ("Trojan Source"). */
static bool active(unsigned cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0x61c || cp == 0x200e || cp == 0x200f ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

/* S on OUT as it can be shown on the user's terminal: a fenced program
 * names the paths and programs of the log, and the terminal must not take
 * its escape sequences. A control byte, DEL, a byte that starts no UTF-8
 * character and every byte of a C1 control or a bidirectional override are
 * shown as \xNN; printable ASCII and other UTF-8 as they are. */
static void put(FILE *out, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		unsigned cp = 0;
		size_t n = *p >= 0x80 ? utf8_at(p, &cp) : 0;
		if (n && !active(cp)) {
			fwrite(p, 1, n, out);
			p += n;
			continue;
		}
		for (size_t i = 0; i < (n ? n : 1); i++, p++) {
			if (*p >= 0x20 && *p < 0x7f)
				fputc(*p, out);
			else
				fprintf(out, "\\x%02x", *p);
		}
	}
}

/* PREFIX, S as put() shows it, SUFFIX. */
static void put_line(FILE *out, const char *prefix, const char *s, const char *suffix)
{
	fputs(prefix, out);
	put(out, s);
	fputs(suffix, out);
}

static void print(const struct explain *x, const char *file, FILE *out)
{
	put(out, file);
	fprintf(out, ": %zu events", x->events);
	if (x->skipped)
		fprintf(out, ", %zu lines skipped (not credfence JSON lines)", x->skipped);
	fputs("\n", out);
	size_t total = 0;
	for (size_t i = 0; i < x->n; i++)
		total += x->g[i].lines.n;
	fprintf(out, "\nDenials (%zu), by what denied them:\n", total);
	if (!total)
		fputs("  none\n", out);
	for (size_t i = 0; i < x->n; i++) {
		const struct group *g = &x->g[i];
		put_line(out, "  ", g->title, "");
		fprintf(out, " (%zu)\n", g->lines.n);
		for (size_t k = 0; k < g->lines.n; k++)
			put_line(out, "    ", g->lines.v[k], "\n");
		for (size_t k = 0; k < g->allows.n; k++)
			put_line(out, "    to allow: ", g->allows.v[k], "\n");
		if (!g->allows.n)
			fputs("    to allow: no option (see credfence check PATH)\n", out);
	}
	fprintf(out, "\nLaunches (%zu):\n", x->launches.n);
	if (!x->launches.n)
		fputs("  none\n", out);
	for (size_t i = 0; i < x->launches.n; i++)
		put_line(out, "  ", x->launches.v[i], "\n");
	for (size_t i = 0; i < x->ended.n; i++)
		put_line(out, i ? "" : "\n", x->ended.v[i], "\n");
}

static void explain_free(struct explain *x)
{
	for (size_t i = 0; i < x->n; i++) {
		free(x->g[i].title);
		cf_strv_free(&x->g[i].lines);
		cf_strv_free(&x->g[i].allows);
	}
	free(x->g);
	cf_strv_free(&x->launches);
	cf_strv_free(&x->ended);
}

int cf_cmd_explain(int argc, char **argv)
{
	if (argc != 1 || !*argv[0] || argv[0][0] == '-') {
		cf_err("explain: give one log file (credfence explain LOGFILE), as written by --log");
		return CF_EXIT_FAIL;
	}
	FILE *f = fopen(argv[0], "r");
	if (!f) {
		cf_err("explain: can not read %s: %s; give the file --log wrote", argv[0],
		       strerror(errno));
		return CF_EXIT_FAIL;
	}
	struct explain x = {0};
	struct cf_logline l = {0};
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = 0;
	while (!rc && (n = getline(&line, &cap, f)) >= 0) {
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			n--;
		if (n == 0)
			continue;
		int r = cf_logline_parse(&l, line, (size_t)n);
		if (r == -ENOMEM)
			rc = -1;
		else if (r)
			x.skipped++;
		else
			rc = take(&x, &l);
	}
	bool bad = ferror(f);
	fclose(f);
	free(line);
	cf_logline_free(&l);
	if (rc || bad) {
		cf_err("explain: %s while reading %s", rc ? "out of memory" : "a read error",
		       argv[0]);
		explain_free(&x);
		return CF_EXIT_FAIL;
	}
	print(&x, argv[0], stdout);
	explain_free(&x);
	return 0;
}
