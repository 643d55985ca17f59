#include "ipctest.h"

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/fs.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#if !defined(CF_IPCSERVE) || !defined(CF_IPC) || !defined(CF_IPC_INSIDE_PY)
#error "CF_IPCSERVE, CF_IPC and CF_IPC_INSIDE_PY come from meson"
#endif

#define PYTHON "/usr/bin/python3"

const char *ipct_way_name(enum ipct_way way)
{
	switch (way) {
	case IPCT_RUN: return "credfence run";
	case IPCT_SELF: return "self mode";
	case IPCT_SPAWN: return "harness child by posix_spawn";
	case IPCT_FORK: return "harness child by fork+exec";
	case IPCT_VFORK: return "harness child by vfork";
	}
	return "?";
}

static void dump(const char *what, enum ipct_way way, const struct cf_fx_out *o)
{
	cr_log_info("%s, %s: status %d\n--- stdout ---\n%s\n--- stderr ---\n%s", what,
		    ipct_way_name(way), o->status, o->out, o->err);
}

#define SHOW "status %d\n--- stdout\n%s\n--- stderr\n%s"
#define SHOW_ARGS(o) (o).status, (o).out, (o).err

/* TEXT has a line that is exactly WANT. */
static bool has_exact_line(const char *text, const char *want)
{
	size_t n = strlen(want);
	for (const char *p = text; p && *p;) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == n && strncmp(p, want, n) == 0)
			return true;
		p = e ? e + 1 : NULL;
	}
	return false;
}

/* TEXT has the line "A B C". */
static bool has_line_of(const char *text, const char *a, const char *b, const char *c)
{
	char want[PATH_MAX + 256];
	snprintf(want, sizeof want, "%s %s %s", a, b, c);
	return has_exact_line(text, want);
}

/* Lines of TEXT that start with PREFIX. */
static size_t count_lines(const char *text, const char *prefix)
{
	size_t n = 0, k = strlen(prefix);
	for (const char *p = text; p && *p;) {
		if (strncmp(p, prefix, k) == 0)
			n++;
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	return n;
}

/* A shell line that says whether the command runs fenced at all ("FENCED
 * yes": the key can not be read), so that a failure below names the hole in
 * the IPC or metadata fence and not a way in that did not fence. */
static const char *fenced_probe(const struct ipct *t)
{
	static char line[PATH_MAX + 128];
	cf_fx_fmt(line, sizeof line,
		  "if cat '%s' >/dev/null 2>&1; then echo 'FENCED no'; else echo 'FENCED yes'; fi; ",
		  t->key);
	return line;
}

static void expect_fenced(const struct cf_fx_out *o, enum ipct_way way)
{
	if (has_exact_line(o->out, "FENCED no"))
		cr_expect(0, "%s: the command did not run fenced (it read the key itself)\n" SHOW,
			  ipct_way_name(way), SHOW_ARGS(*o));
	else
		cr_expect(has_exact_line(o->out, "FENCED yes"), "%s: the command did not run\n" SHOW,
			  ipct_way_name(way), SHOW_ARGS(*o));
}

/* ---- setup ---- */

void ipct_setup(struct ipct *t)
{
	memset(t, 0, sizeof *t);
	cf_test_require_landlock();
	cf_fx_setup(&t->fx);
	char tmp[] = "/tmp/cf-ipc-XXXXXX";
	cr_assert(mkdtemp(tmp), "mkdtemp: %s", strerror(errno));
	cr_assert(realpath(tmp, t->tmp));
	cf_fx_fmt(t->log, sizeof t->log, "%s/log.jsonl", t->fx.root);
	cf_fx_fmt(t->plain, sizeof t->plain, "%s/plain.txt", t->fx.root);
	cf_fx_write(t->plain, IPCT_PLAIN_TEXT "\n");
	cf_fx_fmt(t->abs, sizeof t->abs, "@cf-ipc-%s", t->fx.tag + strlen("CFMARK-"));
	t->key = cf_fx_secret(&t->fx, ".ssh")->key;
	cf_fx_write(cf_fx_at(t->fx.ws, "allowed.txt"), "WORKSPACE-FILE-OK\n");
}

static void tmux_kill(struct ipct *t)
{
	if (!t->tmux[0])
		return;
	struct cf_fx_out o;
	char **env = cf_fx_env(&t->fx, (const char *[]){"TERM=xterm", NULL});
	cf_fx_run(&o, NULL, env, NULL, CF_ARGV("tmux", "-S", t->tmux, "kill-server"));
	cf_fx_env_free(env);
	cf_fx_out_free(&o);
	t->tmux[0] = '\0';
}

void ipct_teardown(struct ipct *t)
{
	for (int i = 0; i < t->n_pids; i++)
		if (t->pids[i] > 0) {
			kill(t->pids[i], SIGKILL);
			waitpid(t->pids[i], NULL, 0); /* ECHILD at once for a fenced command's server */
		}
	t->n_pids = 0;
	tmux_kill(t);
	if (t->tmp[0])
		cf_fx_rmtree(t->tmp);
	t->tmp[0] = '\0';
	cf_fx_teardown(&t->fx);
}

static void remember(struct ipct *t, pid_t pid)
{
	cr_assert_lt(t->n_pids, IPCT_MAX_PIDS);
	t->pids[t->n_pids++] = pid;
}

/* Every "ready PID" of O: servers that a fenced command left in the background. */
static void remember_ready(struct ipct *t, const struct cf_fx_out *o)
{
	for (const char *p = o->out; (p = strstr(p, "ready ")); p += 6) {
		int pid = atoi(p + 6);
		if (pid > 1)
			remember(t, pid);
	}
}

/* ---- running fenced ---- */

static const char *shim(void)
{
	static char s[PATH_MAX];
	const char *b = getenv("CREDFENCE_BUILD");
	cr_assert(b && *b, "CREDFENCE_BUILD is not set; run with meson test");
	cf_fx_fmt(s, sizeof s, "%s/shim/libcredfence.so", b);
	return s;
}

struct list {
	const char *v[64];
	char store[16][PATH_MAX + 64];
	int n, ns;
};

static void add(struct list *l, const char *s)
{
	cr_assert_lt(l->n, 63);
	l->v[l->n++] = s;
	l->v[l->n] = NULL;
}

__attribute__((format(printf, 2, 3))) static void addf(struct list *l, const char *fmt, ...)
{
	cr_assert_lt(l->ns, 16);
	char *b = l->store[l->ns++];
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(b, PATH_MAX + 64, fmt, ap);
	va_end(ap);
	cr_assert(k > 0 && k < PATH_MAX + 64);
	add(l, b);
}

void ipct_fenced(struct cf_fx_out *o, struct ipct *t, enum ipct_way way,
		 const struct ipct_allow *allow, const char *const *env_extra, char *const cmd[])
{
	struct list env = {0}, av = {0};
	bool seq = false;
	for (int i = 0; cmd[i]; i++)
		seq |= strcmp(cmd[i], ";;") == 0;
	for (int i = 0; env_extra && env_extra[i]; i++)
		add(&env, env_extra[i]);
	if (t->no_userns) {
		cf_test_require_userns_switch();
		add(&env, "CF_TEST_NO_USERNS=1");
	}
	bool by_env = way == IPCT_SELF || (allow && allow->by_env);
	if (allow && by_env) {
		char socks[PATH_MAX * 2] = "";
		for (int i = 0; i < 4 && allow->sockets[i]; i++) {
			strcat(socks, i ? ":" : "");
			cr_assert_lt(strlen(socks) + strlen(allow->sockets[i]), sizeof socks - 1);
			strcat(socks, allow->sockets[i]);
		}
		if (socks[0])
			addf(&env, "CREDFENCE_ALLOW_SOCKET=%s", socks);
		if (allow->ssh_agent)
			add(&env, "CREDFENCE_SSH_AGENT=1");
	}

	if (way == IPCT_SELF) {
		addf(&env, "LD_PRELOAD=%s", shim());
		addf(&env, "CREDFENCE_HOME=%s", t->fx.home);
		addf(&env, "CREDFENCE_WORKSPACE=%s", t->fx.ws);
		addf(&env, "CREDFENCE_LOG=%s", t->log);
	} else {
		add(&av, cf_fx_bin());
		add(&av, way == IPCT_RUN ? "run" : "harness");
		add(&av, "--home");
		add(&av, t->fx.home);
		add(&av, "--workspace");
		add(&av, t->fx.ws);
		add(&av, "--log");
		add(&av, t->log);
		for (int i = 0; allow && !by_env && i < 4 && allow->sockets[i]; i++) {
			add(&av, "--allow-socket");
			add(&av, allow->sockets[i]);
		}
		if (allow && !by_env && allow->ssh_agent)
			add(&av, "--ssh-agent");
		add(&av, "--");
	}
	if (way >= IPCT_SPAWN || seq) {
		add(&av, CF_IPC);
		add(&av, "launch");
		add(&av, way == IPCT_SPAWN ? "spawn" : way == IPCT_VFORK ? "vfork" : "fork");
	}
	for (int i = 0; cmd[i]; i++)
		add(&av, cmd[i]);

	char **envp = cf_fx_env(&t->fx, env.v);
	cf_fx_run(o, t->fx.ws, envp, NULL, (char *const *)av.v);
	cf_fx_env_free(envp);
	remember_ready(t, o);
}

/* ---- outside servers ---- */

static void serve(struct ipct *t, const char *sock, char count[PATH_MAX], bool dgram);

void ipct_serve(struct ipct *t, const char *sock, char count[PATH_MAX])
{
	serve(t, sock, count, false);
}

static void serve(struct ipct *t, const char *sock, char count[PATH_MAX], bool dgram)
{
	static int k;
	cf_fx_fmt(count, PATH_MAX, "%s/accepts-%d", t->fx.root, k++);
	int p[2];
	cr_assert(pipe2(p, O_CLOEXEC) == 0);
	fflush(NULL);
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		dup2(p[1], 1);
		if (dgram)
			execl(CF_IPCSERVE, CF_IPCSERVE, "-g", sock, count, (char *)NULL);
		else
			execl(CF_IPCSERVE, CF_IPCSERVE, sock, count, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	remember(t, pid);
	struct pollfd pf = {p[0], POLLIN, 0};
	char line[128] = "";
	cr_assert(poll(&pf, 1, 5000) == 1, "cf-ipcserve %s: not ready within 5 s", sock);
	ssize_t n = read(p[0], line, sizeof line - 1);
	close(p[0]);
	cr_assert(n > 0 && strncmp(line, "ready ", 6) == 0, "cf-ipcserve %s: %s", sock,
		  n > 0 ? line : "no word");
}

size_t ipct_accepts(const char *count)
{
	char *c = cf_fx_slurp(count);
	size_t n = 0;
	for (const char *p = c; p && (p = strstr(p, "accept\n")); p++)
		n++;
	free(c);
	return n;
}

/* Unfenced, the server hands out the key: the attack is real. Then its count
 * starts again from 0. */
static void control(struct ipct *t, const char *sock, const char *count)
{
	struct cf_fx_out o;
	char **env = cf_fx_env(&t->fx, NULL);
	cf_fx_run(&o, t->fx.ws, env, NULL, CF_ARGV(CF_IPC, "connect", (char *)sock, (char *)t->key));
	cf_fx_env_free(env);
	cr_assert(strstr(o.out, t->fx.tag), "control: unfenced, %s did not hand out the key: " SHOW,
		  sock, SHOW_ARGS(o));
	cr_assert_eq(ipct_accepts(count), 1, "control: %s counted %zu accepts", sock,
		     ipct_accepts(count));
	cf_fx_out_free(&o);
	cf_fx_write(count, "");
}

size_t ipct_log_count(const struct ipct *t, const char *event, const char *needle)
{
	char *log = cf_fx_slurp(t->log);
	char ev[128];
	size_t n = 0;
	cf_fx_fmt(ev, sizeof ev, "\"event\":\"%s\"", event);
	for (char *line = log, *nl; line && *line; line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl)
			break;
		*nl = '\0';
		if (strstr(line, ev) && (!needle || strstr(line, needle))) {
			cr_expect(line[0] == '{' && nl[-1] == '}', "not a JSON line: %s", line);
			n++;
		}
	}
	free(log);
	return n;
}

/* The log has an EVENT line naming FIELD VALUE, with a pid and a program. */
static void expect_logged(const struct ipct *t, enum ipct_way way, const char *event,
			  const char *field, const char *value)
{
	char needle[PATH_MAX + 64];
	cf_fx_fmt(needle, sizeof needle, "\"%s\":\"%s\"", field, value);
	size_t n = ipct_log_count(t, event, needle);
	if (n == 0) {
		cr_expect(0, "%s: no %s line with %s in the log (%zu %s lines, %zu sandbox_status)",
			  ipct_way_name(way), event, needle, ipct_log_count(t, event, NULL), event,
			  ipct_log_count(t, "sandbox_status", NULL));
		return;
	}
	cr_expect_eq(ipct_log_count(t, event, "\"pid\":"), ipct_log_count(t, event, NULL),
		     "an %s line without a pid", event);
	cr_expect_eq(ipct_log_count(t, event, "\"program\":"), ipct_log_count(t, event, NULL),
		     "an %s line without a program", event);
}

static const struct cf_fx *marker_fx;
static const char *marker_hit;

static int scan(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)ftw;
	if (flag != FTW_F || !S_ISREG(st->st_mode))
		return 0;
	char *c = cf_fx_slurp(path);
	if (c && strstr(c, marker_fx->tag)) {
		static char hit[PATH_MAX];
		snprintf(hit, sizeof hit, "%s", path);
		marker_hit = hit;
	}
	free(c);
	return marker_hit ? 1 : 0;
}

/* No fake key's marker in the output, nor in any file of the workspace or of
 * the test's /tmp directory. */
static void expect_no_marker(const struct ipct *t, const struct cf_fx_out *o)
{
	cr_expect(!strstr(o->out, t->fx.tag) && !strstr(o->err, t->fx.tag),
		  "a fake key's marker (%s) leaked to the output", t->fx.tag);
	const char *dirs[] = {t->fx.ws, t->tmp};
	for (int i = 0; i < 2; i++) {
		marker_fx = &t->fx;
		marker_hit = NULL;
		nftw(dirs[i], scan, 16, FTW_PHYS);
		cr_expect_null(marker_hit, "a fake key's marker was written to %s", marker_hit);
	}
}

/* ---- sockets ---- */

static void expect_connect(const struct cf_fx_out *o, enum ipct_way way, const char *sock,
			   const char *result)
{
	cr_expect(has_line_of(o->out, "CONNECT", sock, result),
		  "%s: connect to %s: want %s\n" SHOW, ipct_way_name(way), sock, result, o->status,
		  o->out, o->err);
}

void ipct_attack_sockets(struct ipct *t, enum ipct_way way)
{
	char socks[3][PATH_MAX], counts[3][PATH_MAX], script[PATH_MAX * 8];
	cf_fx_fmt(socks[0], PATH_MAX, "%s/outside.sock", t->tmp);   /* where tmux's and ssh-agent's live */
	cf_fx_fmt(socks[1], PATH_MAX, "%s/outside.sock", t->fx.ws); /* made outside, in the workspace */
	cf_fx_fmt(socks[2], PATH_MAX, "%s-out", t->abs);
	int k = snprintf(script, sizeof script, "%s", fenced_probe(t));
	for (int i = 0; i < 3; i++) {
		ipct_serve(t, socks[i], counts[i]);
		control(t, socks[i], counts[i]);
		k += snprintf(script + k, sizeof script - (size_t)k, "'%s' connect '%s' '%s'; ", CF_IPC,
			      socks[i], t->key);
	}
	struct cf_fx_out o;
	ipct_fenced(&o, t, way, NULL, NULL, CF_ARGV("/bin/sh", "-c", script));
	dump("outside servers attacked", way, &o);
	expect_fenced(&o, way);
	for (int i = 0; i < 3; i++) {
		expect_connect(&o, way, socks[i], "EACCES");
		cr_expect_eq(ipct_accepts(counts[i]), 0, "%s: the outside server %s accepted %zu times",
			     ipct_way_name(way), socks[i], ipct_accepts(counts[i]));
		expect_logged(t, way, "ipc_denied", "socket", socks[i]);
	}
	expect_no_marker(t, &o);
	cf_fx_out_free(&o);
}

/* A deputy on an abstract datagram socket, reached by sendto() with no
 * connect() for the supervisor to judge (issue 32): Landlock's scope refuses
 * it from ABI 6 on (EPERM); before, the fenced tree's datagram sockets live
 * in a network namespace of its own, where the name is not bound
 * (ECONNREFUSED), or, with no such namespace, are not made (socket-EACCES). */
void ipct_attack_dgram(struct ipct *t, enum ipct_way way)
{
	char sock[64], count[PATH_MAX], script[PATH_MAX * 2];
	cf_fx_fmt(sock, sizeof sock, "%s-outd", t->abs);
	serve(t, sock, count, true);
	struct cf_fx_out o;
	char **env = cf_fx_env(&t->fx, NULL);
	cf_fx_run(&o, t->fx.ws, env, NULL, CF_ARGV(CF_IPC, "dgram", sock, (char *)t->key));
	cf_fx_env_free(env);
	cr_assert(strstr(o.out, t->fx.tag), "control: unfenced, %s did not hand out the key: " SHOW,
		  sock, SHOW_ARGS(o));
	cf_fx_out_free(&o);
	cf_fx_write(count, "");
	cf_fx_fmt(script, sizeof script, "%s'%s' dgram '%s' '%s'", fenced_probe(t), CF_IPC, sock, t->key);
	ipct_fenced(&o, t, way, NULL, NULL, CF_ARGV("/bin/sh", "-c", script));
	dump("an outside datagram deputy attacked", way, &o);
	expect_fenced(&o, way);
	cr_expect(has_line_of(o.out, "DGRAM", sock, "EPERM") ||
			  has_line_of(o.out, "DGRAM", sock, "ECONNREFUSED") ||
			  has_line_of(o.out, "DGRAM", sock, "socket-EACCES"),
		  "%s: sendto %s: want EPERM, ECONNREFUSED or socket-EACCES\n" SHOW,
		  ipct_way_name(way), sock, o.status, o.out, o.err);
	cr_expect_eq(ipct_accepts(count), 0, "%s: the outside deputy %s got %zu datagrams",
		     ipct_way_name(way), sock, ipct_accepts(count));
	expect_no_marker(t, &o);
	cf_fx_out_free(&o);
}

/* The same outside socket reached by other names and other means: a symlink
 * and a hard link in the workspace, a relative path, /proc/self/root, io_uring
 * (which no seccomp filter sees), and the outside socket renamed over a socket
 * that a fenced server bound (a judge that remembers names, not sockets, is
 * fooled by that). */
void ipct_attack_socket_paths(struct ipct *t, enum ipct_way way)
{
	char sock[PATH_MAX], count[PATH_MAX], script[PATH_MAX * 16];
	cf_fx_fmt(sock, sizeof sock, "%s/outside.sock", t->tmp);
	ipct_serve(t, sock, count);
	control(t, sock, count);
	const char *ws = t->fx.ws, *key = t->key;
	cf_fx_fmt(script, sizeof script,
		  "%s"
		  "ln -s '%s' '%s/sym.sock'; '%s' connect '%s/sym.sock' '%s'; "
		  "(cd '%s' && '%s' connect outside.sock '%s'); "
		  "'%s' connect '/proc/self/root%s' '%s'; "
		  "'%s' uring-connect '%s' '%s'; "
		  "if ln '%s' '%s/hard.sock'; then echo LINKED; fi; '%s' connect '%s/hard.sock' '%s'; "
		  "'%s' -d '%s/in.sock' '%s/in.count' && mv -f '%s' '%s/in.sock' && "
		  "'%s' connect '%s/in.sock' '%s'",
		  fenced_probe(t), sock, ws, CF_IPC, ws, key, t->tmp, CF_IPC, key, CF_IPC, sock, key,
		  CF_IPC, sock, key, sock, ws, CF_IPC, ws, key, CF_IPCSERVE, ws, ws, sock, ws, CF_IPC,
		  ws, key);
	struct cf_fx_out o;
	ipct_fenced(&o, t, way, NULL, NULL, CF_ARGV("/bin/sh", "-c", script));
	dump("the outside socket by other names", way, &o);
	expect_fenced(&o, way);
	char name[PATH_MAX + 32];
	cf_fx_fmt(name, sizeof name, "%s/sym.sock", ws);
	expect_connect(&o, way, name, "EACCES");
	expect_connect(&o, way, "outside.sock", "EACCES");
	cf_fx_fmt(name, sizeof name, "/proc/self/root%s", sock);
	expect_connect(&o, way, name, "EACCES");
	cr_expect(has_line_of(o.out, "CONNECT", sock, "EACCES") ||
			  has_line_of(o.out, "CONNECT", sock, "setup-EPERM") ||
			  has_line_of(o.out, "CONNECT", sock, "setup-ENOSYS"),
		  "%s: io_uring connect to %s was not refused\n" SHOW, ipct_way_name(way), sock,
		  SHOW_ARGS(o));
	cf_fx_fmt(name, sizeof name, "%s/hard.sock", ws);
	if (has_exact_line(o.out, "LINKED"))
		expect_connect(&o, way, name, "EACCES");
	cf_fx_fmt(name, sizeof name, "%s/in.sock", ws);
	expect_connect(&o, way, name, "EACCES");
	cr_expect_eq(ipct_accepts(count), 0, "%s: the outside server accepted %zu times",
		     ipct_way_name(way), ipct_accepts(count));
	expect_logged(t, way, "ipc_denied", "socket", sock);
	expect_no_marker(t, &o);
	cf_fx_out_free(&o);
}

/* What the user allowed can not be widened from inside: a harness child
 * started with SSH_AUTH_SOCK or CREDFENCE_ALLOW_SOCKET of the model's choosing,
 * a nested `credfence run --allow-socket`, a nested self mode. The harness
 * (or run) itself was given --ssh-agent with the real agent. */
void ipct_no_self_granted_allowance(struct ipct *t, enum ipct_way way)
{
	char agent[PATH_MAX], other[PATH_MAX], counts[2][PATH_MAX], env[PATH_MAX + 16];
	char e1[PATH_MAX + 32], e2[PATH_MAX + 32], e3[PATH_MAX + 32], e4[PATH_MAX + 32],
		e5[PATH_MAX + 32];
	cf_fx_fmt(agent, sizeof agent, "%s/agent.sock", t->tmp);
	cf_fx_fmt(other, sizeof other, "%s/other.sock", t->tmp);
	ipct_serve(t, agent, counts[0]);
	ipct_serve(t, other, counts[1]);
	control(t, other, counts[1]);
	cf_fx_fmt(env, sizeof env, "SSH_AUTH_SOCK=%s", agent);
	cf_fx_fmt(e1, sizeof e1, "SSH_AUTH_SOCK=%s", other);
	cf_fx_fmt(e2, sizeof e2, "CREDFENCE_ALLOW_SOCKET=%s", other);
	cf_fx_fmt(e3, sizeof e3, "LD_PRELOAD=%s", shim());
	cf_fx_fmt(e4, sizeof e4, "CREDFENCE_HOME=%s", t->fx.home);
	cf_fx_fmt(e5, sizeof e5, "CREDFENCE_WORKSPACE=%s", t->fx.ws);
	struct ipct_allow allow = {.ssh_agent = true};
	struct cf_fx_out o;
	ipct_fenced(&o, t, way, &allow, (const char *[]){env, NULL},
		    CF_ARGV(e1, CF_IPC, "connect", other, (char *)t->key, ";;",
			    e1, e2, "CREDFENCE_SSH_AGENT=1", CF_IPC, "connect", other, (char *)t->key, ";;",
			    (char *)cf_fx_bin(), "run", "--home", t->fx.home, "--workspace", t->fx.ws,
			    "--allow-socket", other, "--ssh-agent", "--", CF_IPC, "connect", other,
			    (char *)t->key, ";;",
			    e1, e2, e3, e4, e5, CF_IPC, "connect", other, (char *)t->key, ";;",
			    CF_IPC, "connect", agent, t->plain));
	dump("allowances widened from inside", way, &o);
	cr_expect(!strstr(o.err, "unknown option") && !strstr(o.err, "unrecognized"),
		  "%s: the options are not known yet\n" SHOW, ipct_way_name(way), SHOW_ARGS(o));
	expect_connect(&o, way, agent, "ok");
	cr_expect(!has_line_of(o.out, "CONNECT", other, "ok"),
		  "%s: a fenced program widened what the user allowed\n" SHOW, ipct_way_name(way),
		  SHOW_ARGS(o));
	cr_expect_geq(count_lines(o.out, "CONNECT "), 3, "%s: too few connects ran\n" SHOW,
		      ipct_way_name(way), SHOW_ARGS(o));
	cr_expect_eq(ipct_accepts(counts[1]), 0, "%s: %s accepted %zu times", ipct_way_name(way),
		     other, ipct_accepts(counts[1]));
	expect_no_marker(t, &o);
	cf_fx_out_free(&o);
}

/* ---- tmux ---- */

static void tmux(struct ipct *t, struct cf_fx_out *o, char *const argv[])
{
	char **env = cf_fx_env(&t->fx, (const char *[]){"TERM=xterm", "SHELL=/bin/sh", NULL});
	cf_fx_run(o, NULL, env, NULL, argv);
	cf_fx_env_free(env);
}

/* Type a line into the outside tmux server's shell, unfenced. */
static void tmux_type(struct ipct *t, const char *line)
{
	struct cf_fx_out o;
	tmux(t, &o, CF_ARGV("tmux", "-S", t->tmux, "send-keys", "-t", "cf", (char *)line, "Enter"));
	cr_assert_eq(o.status, 0, "tmux send-keys (unfenced): " SHOW, SHOW_ARGS(o));
	cf_fx_out_free(&o);
}

/* Everything typed into the outside shell before now has run: keys are
 * handled in order, so a sentinel typed last has run after them. */
static void tmux_sync(struct ipct *t)
{
	static int k;
	char sentinel[PATH_MAX], line[PATH_MAX + 32];
	cf_fx_fmt(sentinel, sizeof sentinel, "%s/tmux-sync-%d", t->fx.root, k++);
	cf_fx_fmt(line, sizeof line, "echo done > '%s'", sentinel);
	tmux_type(t, line);
	for (int i = 0; i < 500 && access(sentinel, F_OK) != 0; i++)
		usleep(10000);
	cr_assert_eq(access(sentinel, F_OK), 0, "the outside tmux shell did not run a line in 5 s");
	unlink(sentinel);
}

void ipct_attack_tmux(struct ipct *t, enum ipct_way way)
{
	cf_test_require_tool("tmux");
	struct cf_fx_out o;
	cf_fx_fmt(t->tmux, sizeof t->tmux, "%s/tmux.sock", t->tmp);
	tmux(t, &o, CF_ARGV("tmux", "-S", t->tmux, "-f", "/dev/null", "new-session", "-d", "-s", "cf",
			    "-x", "80", "-y", "24", "exec timeout 120 /bin/sh"));
	cr_assert_eq(o.status, 0, "the outside tmux server did not start: " SHOW, SHOW_ARGS(o));
	cf_fx_out_free(&o);

	/* Control: unfenced, the outside shell reads the key for its client. */
	char got[PATH_MAX], line[PATH_MAX * 3];
	cf_fx_fmt(got, sizeof got, "%s/control", t->tmp);
	cf_fx_fmt(line, sizeof line, "cat '%s' > '%s'", t->key, got);
	tmux_type(t, line);
	tmux_sync(t);
	char *c = cf_fx_slurp(got);
	cr_assert(c && strstr(c, t->fx.tag), "control: the outside tmux shell did not read the key");
	free(c);
	unlink(got);

	/* The attack, fenced: make the outside shell copy the key to /tmp. */
	char script[PATH_MAX * 8];
	cf_fx_fmt(got, sizeof got, "%s/x", t->tmp);
	cf_fx_fmt(script, sizeof script,
		  "%s"
		  "timeout 5 tmux -S '%s' send-keys -t cf \"cat ~/.ssh/id_ed25519 > '%s'\" Enter; "
		  "echo \"TMUX rc=$?\"; cat '%s'",
		  fenced_probe(t), t->tmux, got, got);
	ipct_fenced(&o, t, way, NULL, NULL, CF_ARGV("/bin/sh", "-c", script));
	dump("tmux send-keys to an outside server", way, &o);
	tmux_sync(t);
	expect_fenced(&o, way);
	cr_expect(!has_exact_line(o.out, "TMUX rc=0"), "%s: tmux send-keys reached the server\n" SHOW,
		  ipct_way_name(way), SHOW_ARGS(o));
	cr_expect(strstr(o.err, "Permission denied"), "%s: tmux was not refused with EACCES\n" SHOW,
		  ipct_way_name(way), SHOW_ARGS(o));
	cr_expect_neq(access(got, F_OK), 0, "%s: the outside shell ran the attacker's line",
		      ipct_way_name(way));
	expect_no_marker(t, &o);
	expect_logged(t, way, "ipc_denied", "socket", t->tmux);
	cf_fx_out_free(&o);
}

/* ---- metadata ---- */

struct meta {
	mode_t mode;
	uid_t uid;
	gid_t gid;
	struct timespec mtime, ctime;
	int flags; /* -1: could not be read */
	int xattrs; /* bit i: xnames[i] is set */
};

/* Set by setfattr, setxattr, fsetxattr, setxattr on /proc/self/fd/N, setxattrat,
 * io_uring; removed by removexattr and removexattrat. */
static const char *const xnames[] = {"user.x",    "user.cfx",  "user.cfxf",   "user.cfxp",
				     "user.cfkeep", "user.cfxa", "user.cfxu", "user.cfkeep2"};
#define N_XNAMES 8
#define XATTRS_SET 0x6f     /* every name but the two kept ones */
#define XATTRS_KEPT 0x90    /* user.cfkeep, user.cfkeep2 */

static void meta_get(const char *path, struct meta *m)
{
	struct stat st;
	memset(m, 0, sizeof *m);
	cr_assert(stat(path, &st) == 0, "stat %s: %s", path, strerror(errno));
	m->mode = st.st_mode;
	m->uid = st.st_uid;
	m->gid = st.st_gid;
	m->mtime = st.st_mtim;
	m->ctime = st.st_ctim;
	m->flags = -1;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd >= 0) {
		if (ioctl(fd, FS_IOC_GETFLAGS, &m->flags) != 0)
			m->flags = -1;
		close(fd);
	}
	char v[16];
	for (int i = 0; i < N_XNAMES; i++)
		if (getxattr(path, xnames[i], v, sizeof v) >= 0)
			m->xattrs |= 1 << i;
}

static bool meta_same(const struct meta *a, const struct meta *b)
{
	return a->mode == b->mode && a->uid == b->uid && a->gid == b->gid &&
	       a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec &&
	       a->ctime.tv_sec == b->ctime.tv_sec && a->ctime.tv_nsec == b->ctime.tv_nsec &&
	       a->flags == b->flags && a->xattrs == b->xattrs;
}

#define META_FMT "mode %o uid %d gid %d mtime %lld.%09ld ctime %lld.%09ld flags %#x xattrs %#x"
#define META_ARGS(m)                                                                           \
	(unsigned)(m).mode, (int)(m).uid, (int)(m).gid, (long long)(m).mtime.tv_sec,           \
		(m).mtime.tv_nsec, (long long)(m).ctime.tv_sec, (m).ctime.tv_nsec, (m).flags,  \
		(m).xattrs

/* ROOT/meta.sh: the tools a model would reach for, then cf-ipc meta for the
 * system calls, each reported on its own line. */
static const char *meta_script(const struct ipct *t)
{
	static char path[PATH_MAX];
	char text[4096];
	cf_fx_fmt(path, sizeof path, "%s/meta.sh", t->fx.root);
	cf_fx_fmt(text, sizeof text,
		  "# meta.sh LABEL=PATH...\n"
		  "%s\n"
		  "for a in \"$@\"; do\n"
		  "  l=${a%%%%=*}; p=${a#*=}\n"
		  "  chmod 0741 \"$p\"; echo \"TOOL chmod $l rc=$?\"\n"
		  "  chown \"$(id -u):$(id -g)\" \"$p\"; echo \"TOOL chown $l rc=$?\"\n"
		  "  touch -d '2001-02-03 04:05:06' \"$p\"; echo \"TOOL touch $l rc=$?\"\n"
		  "  setfattr -n user.x -v 1 \"$p\"; echo \"TOOL setfattr $l rc=$?\"\n"
		  "  chattr +A \"$p\"; echo \"TOOL chattr $l rc=$?\"\n"
		  "done\n"
		  "exec '%s' meta \"$@\"\n",
		  fenced_probe(t), CF_IPC);
	cf_fx_write(path, text);
	return path;
}

struct target {
	const char *label;
	char path[PATH_MAX]; /* what is passed */
	char real[PATH_MAX]; /* what it names */
	struct meta before;
};

static void require_meta_tools(void)
{
	cf_test_require_tool("setfattr");
	cf_test_require_tool("chattr");
}

static int meta_run(struct ipct *t, enum ipct_way way, struct target *tg, int n,
		    struct cf_fx_out *o)
{
	struct list av = {0};
	add(&av, "/bin/sh");
	add(&av, meta_script(t));
	for (int i = 0; i < n; i++) {
		cr_assert(setxattr(tg[i].real, "user.cfkeep", "1", 1, 0) == 0 &&
				  setxattr(tg[i].real, "user.cfkeep2", "1", 1, 0) == 0,
			  "setxattr %s: %s", tg[i].real, strerror(errno));
		addf(&av, "%s=%s", tg[i].label, tg[i].path);
	}
	for (int i = 0; i < n; i++)
		meta_get(tg[i].real, &tg[i].before);
	ipct_fenced(o, t, way, NULL, NULL, (char *const *)av.v);
	return n;
}

/* The lines of OUT that start with KIND and name LABEL as their third word. */
static size_t lines_for(const char *out, const char *kind, const char *label,
			bool (*bad)(const char *call, const char *result), char *why, size_t why_n)
{
	size_t n = 0, klen = strlen(kind), llen = strlen(label);
	why[0] = '\0';
	for (const char *p = out; p && *p;) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		const char *call = p + klen + 1;
		const char *sp = memchr(call, ' ', len > klen + 1 ? len - klen - 1 : 0);
		if (len > klen + 1 && strncmp(p, kind, klen) == 0 && p[klen] == ' ' && sp &&
		    strncmp(sp + 1, label, llen) == 0 && sp[1 + llen] == ' ') {
			char line[512];
			snprintf(line, sizeof line, "%.*s", (int)len, p);
			n++;
			char cname[64];
			snprintf(cname, sizeof cname, "%.*s", (int)(sp - call), call);
			if (bad(cname, sp + 2 + llen) && strlen(why) + strlen(line) + 2 < why_n) {
				strcat(why, line);
				strcat(why, "\n");
			}
		}
		p = e ? e + 1 : NULL;
	}
	return n;
}

static bool word_is(const char *rest, const char *w)
{
	size_t n = strlen(w);
	return strncmp(rest, w, n) == 0 && (rest[n] == '\n' || rest[n] == '\0');
}

/* Whether this kernel has the system call NR (setxattrat 463, removexattrat
 * 466: Linux 6.13; Debian 12's 6.1 answers ENOSYS), asked outside any fence. */
static bool kernel_has(long nr)
{
	return syscall(nr, -1, "", 0, NULL, 0) < 0 ? errno != ENOSYS : true;
}

/* System calls newer than some kernels the suite may meet: ENOSYS there. */
static bool newer_call(const char *call)
{
	return !strcmp(call, "fchmodat2_empty") || !strcmp(call, "setxattrat") ||
	       !strcmp(call, "removexattrat") || !strcmp(call, "file_setattr");
}

static bool tool_bad_if_ok(const char *call, const char *rest)
{
	(void)call;
	return word_is(rest, "rc=0");
}

static bool tool_bad_if_failed(const char *call, const char *rest)
{
	(void)call;
	return !word_is(rest, "rc=0");
}

/* Outside: a refusal is EACCES, or EPERM where the kernel's own answer would
 * be that. io_uring may be refused as a whole ("setup-..."). */
/* The run's metadata changes are refused by read-only mounts (the mount
 * namespace of the fenced tree): EROFS, and no metadata_denied line. */
static bool by_mounts;

static bool meta_bad_if_not_refused(const char *call, const char *rest)
{
	if (word_is(rest, "EACCES") || word_is(rest, "EPERM") || strncmp(rest, "setup-", 6) == 0 ||
	    (by_mounts && word_is(rest, "EROFS")))
		return false;
	return !(newer_call(call) && word_is(rest, "ENOSYS"));
}

/* Inside: every call works (io_uring may be refused as a whole). */
static bool meta_bad_if_failed(const char *call, const char *rest)
{
	if (word_is(rest, "ok") || strncmp(rest, "setup-", 6) == 0)
		return false;
	return !(newer_call(call) && word_is(rest, "ENOSYS"));
}

#define N_TOOLS 5
#define N_META_MIN 6 /* chmod chown utimensat setxattr removexattr + open or the fd forms */

void ipct_meta_outside(struct ipct *t, enum ipct_way way)
{
	require_meta_tools();
	struct target tg[6] = {{.label = "key"}, {.label = "home"}, {.label = "ssh"},
			       {.label = "notes"}, {.label = "outside"}, {.label = "keylink"}};
	cf_fx_fmt(tg[0].path, PATH_MAX, "%s", t->key);
	cf_fx_fmt(tg[1].path, PATH_MAX, "%s", t->fx.home);
	cf_fx_fmt(tg[2].path, PATH_MAX, "%s/.ssh", t->fx.home);
	cf_fx_fmt(tg[3].path, PATH_MAX, "%s/notes.txt", t->fx.home); /* readable, not writable */
	cf_fx_fmt(tg[4].path, PATH_MAX, "%s", t->plain);             /* outside the home */
	cf_fx_fmt(tg[5].path, PATH_MAX, "%s/keylink", t->fx.ws);     /* a symlink in the workspace */
	cr_assert(symlink(t->key, tg[5].path) == 0);
	for (int i = 0; i < 6; i++)
		cf_fx_fmt(tg[i].real, PATH_MAX, "%s", i == 5 ? t->key : tg[i].path);

	struct cf_fx_out o;
	meta_run(t, way, tg, 6, &o);
	dump("metadata changes outside the writable locations", way, &o);
	expect_fenced(&o, way);
	by_mounts = ipct_log_count(t, "sandbox_status", "\"metadata\":\"mounts\"") > 0;
	cr_expect(!t->no_userns || !by_mounts, "read-only mounts with user namespaces off");
	char why[4096];
	for (int i = 0; i < 6; i++) {
		struct meta after;
		meta_get(tg[i].real, &after);
		cr_expect(meta_same(&tg[i].before, &after),
			  "%s: %s (%s) changed:\nbefore " META_FMT "\nafter  " META_FMT,
			  ipct_way_name(way), tg[i].label, tg[i].real, META_ARGS(tg[i].before),
			  META_ARGS(after));
		size_t n = lines_for(o.out, "TOOL", tg[i].label, tool_bad_if_ok, why, sizeof why);
		cr_expect_eq(n, N_TOOLS, "%s: %zu TOOL lines for %s\n" SHOW, ipct_way_name(way), n,
			     tg[i].label, o.status, o.out, o.err);
		/* chattr does not follow a symlink operand: its answer there says nothing. */
		if (i != 5)
			cr_expect(!why[0], "%s: tools that changed %s:\n%s", ipct_way_name(way),
				  tg[i].label, why);
		n = lines_for(o.out, "META", tg[i].label, meta_bad_if_not_refused, why, sizeof why);
		cr_expect_geq(n, N_META_MIN, "%s: %zu META lines for %s\n" SHOW, ipct_way_name(way),
			      n, tg[i].label, o.status, o.out, o.err);
		cr_expect(!why[0], "%s: calls on %s not refused with EACCES/EPERM%s:\n%s",
			  ipct_way_name(way), tg[i].label, by_mounts ? "/EROFS" : "", why);
		if (i != 5 && !by_mounts)
			expect_logged(t, way, "metadata_denied", "path", tg[i].real);
	}
	expect_no_marker(t, &o);
	cf_fx_out_free(&o);
}

void ipct_meta_inside(struct ipct *t, enum ipct_way way)
{
	require_meta_tools();
	struct target tg[4] = {{.label = "wsfile"}, {.label = "wsdir"}, {.label = "tmpfile"},
			       {.label = "tmpdir"}};
	cf_fx_fmt(tg[0].path, PATH_MAX, "%s/build/out.bin", t->fx.ws);
	cf_fx_fmt(tg[1].path, PATH_MAX, "%s/build", t->fx.ws);
	cf_fx_fmt(tg[2].path, PATH_MAX, "%s/scratch/f.txt", t->tmp);
	cf_fx_fmt(tg[3].path, PATH_MAX, "%s/scratch", t->tmp);
	cf_fx_write(tg[0].path, "out\n");
	cf_fx_write(tg[2].path, "scratch\n");
	for (int i = 0; i < 4; i++)
		cf_fx_fmt(tg[i].real, PATH_MAX, "%s", tg[i].path);

	struct cf_fx_out o;
	meta_run(t, way, tg, 4, &o);
	dump("metadata changes inside the writable locations", way, &o);
	expect_fenced(&o, way);
	cr_expect_eq(o.status, 0, "%s: " SHOW, ipct_way_name(way), o.status, o.out, o.err);
	char why[4096];
	for (int i = 0; i < 4; i++) {
		size_t n = lines_for(o.out, "TOOL", tg[i].label, tool_bad_if_failed, why, sizeof why);
		cr_expect_eq(n, N_TOOLS, "%s: %zu TOOL lines for %s", ipct_way_name(way), n, tg[i].label);
		cr_expect(!why[0], "%s: tools that failed on %s:\n%s\n--- stderr\n%s", ipct_way_name(way),
			  tg[i].label, why, o.err);
		n = lines_for(o.out, "META", tg[i].label, meta_bad_if_failed, why, sizeof why);
		cr_expect_geq(n, N_META_MIN + 4, "%s: %zu META lines for %s", ipct_way_name(way), n,
			      tg[i].label);
		cr_expect(!why[0], "%s: calls that failed on %s:\n%s", ipct_way_name(way), tg[i].label,
			  why);
		struct meta after;
		meta_get(tg[i].real, &after);
		cr_expect_eq(after.mode & 07777, 0741, "%s: %s: mode %o", ipct_way_name(way),
			     tg[i].label, (unsigned)after.mode & 07777);
		cr_expect_eq(after.mtime.tv_sec, 981173106, "%s: %s: mtime %lld", ipct_way_name(way),
			     tg[i].label, (long long)after.mtime.tv_sec);
		/* user.cfxu (0x40) comes by io_uring, which the fence may refuse;
		 * user.cfxa (0x20) by setxattrat and user.cfkeep2 (0x80) goes by
		 * removexattrat, where the kernel has them. */
		int newer = (kernel_has(463) ? 0 : 0x20) | (kernel_has(466) ? 0 : 0x80);
		cr_expect_eq(after.xattrs & (XATTRS_SET | XATTRS_KEPT) & ~0x40 & ~newer,
			     XATTRS_SET & ~0x40 & ~newer,
			     "%s: %s: xattrs %#x (want user.x, user.cfx, user.cfxf, user.cfxp, "
			     "user.cfxa set, user.cfkeep and user.cfkeep2 removed)",
			     ipct_way_name(way), tg[i].label, after.xattrs);
		cr_expect(after.flags >= 0 && (after.flags & FS_NOATIME_FL), "%s: %s: flags %#x",
			  ipct_way_name(way), tg[i].label, after.flags);
	}
	cr_expect_eq(ipct_log_count(t, "metadata_denied", NULL), 0,
		     "%s: metadata_denied logged for a change inside", ipct_way_name(way));
	cf_fx_out_free(&o);
}

void ipct_tar_inside(struct ipct *t, enum ipct_way way)
{
	cf_test_require_tool("tar");
	struct {
		const char *rel;
		mode_t mode;
		time_t mtime;
		bool dir;
	} f[] = {{"tool.sh", 0751, 981173106, false},
		 {"sub/b.txt", 0600, 1012345678, false},
		 {"sub", 0710, 1023456789, true}}; /* the directory last: its time after its files */
	char src[PATH_MAX], tarball[PATH_MAX], dest[PATH_MAX];
	cf_fx_fmt(src, sizeof src, "%s/tarsrc", t->fx.root);
	cf_fx_fmt(tarball, sizeof tarball, "%s/a.tar", t->fx.root);
	cf_fx_fmt(dest, sizeof dest, "%s/unpacked", t->fx.ws);
	cf_fx_mkdirs(dest);
	for (size_t i = 0; i < 3; i++) {
		const char *p = cf_fx_at(src, f[i].rel);
		if (f[i].dir)
			cf_fx_mkdirs(p);
		else
			cf_fx_write(p, "x\n");
		struct timespec ts[2] = {{f[i].mtime, 0}, {f[i].mtime, 0}};
		cr_assert(chmod(p, f[i].mode) == 0 && utimensat(AT_FDCWD, p, ts, 0) == 0);
	}
	struct cf_fx_out o;
	cf_fx_run(&o, NULL, NULL, NULL, CF_ARGV("tar", "-cf", tarball, "-C", src, "."));
	cr_assert_eq(o.status, 0, "tar -c: " SHOW, SHOW_ARGS(o));
	cf_fx_out_free(&o);

	ipct_fenced(&o, t, way, NULL, NULL, CF_ARGV("/bin/tar", "-xpf", tarball, "-C", dest));
	dump("tar -xpf into the workspace", way, &o);
	cr_expect_eq(o.status, 0, "%s: tar -xpf: " SHOW, ipct_way_name(way), o.status, o.out, o.err);
	for (size_t i = 0; i < 3; i++) {
		struct stat st;
		const char *p = cf_fx_at(dest, f[i].rel);
		if (stat(p, &st) != 0) {
			cr_expect(0, "%s: %s was not unpacked", ipct_way_name(way), p);
			continue;
		}
		cr_expect_eq(st.st_mode & 07777, f[i].mode, "%s: %s: mode %o, want %o",
			     ipct_way_name(way), f[i].rel, (unsigned)st.st_mode & 07777,
			     (unsigned)f[i].mode);
		cr_expect_eq(st.st_mtime, f[i].mtime, "%s: %s: mtime %lld, want %lld",
			     ipct_way_name(way), f[i].rel, (long long)st.st_mtime,
			     (long long)f[i].mtime);
	}
	cr_expect_eq(ipct_log_count(t, "metadata_denied", NULL), 0);
	cf_fx_out_free(&o);
}

/* ---- inside the fence ---- */

void ipct_inside_sockets(struct ipct *t, enum ipct_way way)
{
	cf_test_require_tool(PYTHON);
	static const char *const cases[] = {"unix_workspace",  "unix_tmp",        "unix_abstract",
					    "unix_dgram_workspace", "socketpair", "tcp_loopback",
					    "forkserver_pool", "forkserver_manager",
					    "dgram_pair_stdin_closed"};
	struct cf_fx_out o;
	char secs[16];
	cf_fx_fmt(secs, sizeof secs, "%d", 30 * CF_TIMEOUT_SCALE);
	ipct_fenced(&o, t, way, NULL, NULL,
		    CF_ARGV(PYTHON, CF_IPC_INSIDE_PY, t->fx.ws, t->tmp, secs));
	dump("python: sockets inside the fence", way, &o);
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		cr_expect(has_line_of(o.out, "INSIDE", cases[i], "ok"), "%s: %s did not work\n" SHOW,
			  ipct_way_name(way), cases[i], o.status, o.out, o.err);
	cr_expect_eq(o.status, 0, "%s: " SHOW, ipct_way_name(way), o.status, o.out, o.err);
	cr_expect_eq(ipct_log_count(t, "ipc_denied", NULL), 0, "%s: ipc_denied for a socket inside",
		     ipct_way_name(way));
	cf_fx_out_free(&o);
}

void ipct_server_then_client(struct ipct *t, enum ipct_way way)
{
	char ws_sock[PATH_MAX], ws_count[PATH_MAX], tmp_sock[PATH_MAX], tmp_count[PATH_MAX];
	char file[PATH_MAX];
	cf_fx_fmt(ws_sock, sizeof ws_sock, "%s/dev.sock", t->fx.ws);
	cf_fx_fmt(ws_count, sizeof ws_count, "%s/dev.count", t->fx.ws);
	cf_fx_fmt(tmp_sock, sizeof tmp_sock, "%s/dev.sock", t->tmp);
	cf_fx_fmt(tmp_count, sizeof tmp_count, "%s/dev.count", t->tmp);
	cf_fx_fmt(file, sizeof file, "%s/allowed.txt", t->fx.ws);
	char abs_sock[64], abs_count[PATH_MAX], dg_sock[64], dg_count[PATH_MAX];
	cf_fx_fmt(abs_sock, sizeof abs_sock, "%s-dev", t->abs);
	cf_fx_fmt(abs_count, sizeof abs_count, "%s/abs.count", t->fx.ws);
	cf_fx_fmt(dg_sock, sizeof dg_sock, "%s-devd", t->abs);
	cf_fx_fmt(dg_count, sizeof dg_count, "%s/dgram.count", t->fx.ws);
	struct cf_fx_out o;
	/* Eight commands of one fenced tree: four servers go to the background
	 * (the last on an abstract datagram socket), then four later commands
	 * reach them. */
	ipct_fenced(&o, t, way, NULL, NULL,
		    CF_ARGV(CF_IPCSERVE, "-d", ws_sock, ws_count, ";;", CF_IPCSERVE, "-d", tmp_sock,
			    tmp_count, ";;", CF_IPCSERVE, "-d", abs_sock, abs_count, ";;", CF_IPCSERVE,
			    "-d", "-g", dg_sock, dg_count, ";;", CF_IPC, "connect", ws_sock, file, ";;",
			    CF_IPC, "connect", tmp_sock, file, ";;", CF_IPC, "connect", abs_sock, file,
			    ";;", CF_IPC, "dgram", dg_sock, file));
	dump("a server of one child reached by a later one", way, &o);
	cr_expect_eq(count_lines(o.out, "ready "), 4, "%s: the servers did not start\n" SHOW,
		     ipct_way_name(way), o.status, o.out, o.err);
	expect_connect(&o, way, ws_sock, "ok");
	expect_connect(&o, way, tmp_sock, "ok");
	expect_connect(&o, way, abs_sock, "ok");
	cr_expect(has_line_of(o.out, "DGRAM", dg_sock, "ok"), "%s: sendto %s inside\n" SHOW,
		  ipct_way_name(way), dg_sock, o.status, o.out, o.err);
	cr_expect_eq(count_lines(o.out, "WORKSPACE-FILE-OK"), 4, "%s: the answers\n" SHOW,
		     ipct_way_name(way), o.status, o.out, o.err);
	cr_expect_eq(ipct_accepts(ws_count), 1);
	cr_expect_eq(ipct_accepts(tmp_count), 1);
	cr_expect_eq(ipct_accepts(abs_count), 1);
	cr_expect_eq(ipct_accepts(dg_count), 1);
	cr_expect_eq(ipct_log_count(t, "ipc_denied", NULL), 0, "%s: ipc_denied for a socket inside",
		     ipct_way_name(way));
	cf_fx_out_free(&o);
}

/* ---- what the user allows ---- */

/* Fenced with ALLOW and ENV: connect to each of SOCKS asking for the plain
 * file; want ok for those with OK[i], EACCES for the others. */
static void connect_each(struct ipct *t, enum ipct_way way, const struct ipct_allow *allow,
			 const char *const *env, const char *const *socks, const char *const *counts,
			 const bool *ok, int n)
{
	char script[PATH_MAX * 8];
	int k = snprintf(script, sizeof script, "%s", fenced_probe(t));
	for (int i = 0; i < n; i++) {
		cf_fx_write(counts[i], "");
		k += snprintf(script + k, sizeof script - (size_t)k, "'%s' connect '%s' '%s'; ", CF_IPC,
			      socks[i], t->plain);
	}
	cr_assert_lt((size_t)k, sizeof script);
	unlink(t->log);
	struct cf_fx_out o;
	ipct_fenced(&o, t, way, allow, env, CF_ARGV("/bin/sh", "-c", script));
	dump("allowed and other sockets", way, &o);
	expect_fenced(&o, way);
	cr_expect(!strstr(o.err, "unknown option") && !strstr(o.err, "unrecognized"),
		  "%s: the options are not known yet\n" SHOW, ipct_way_name(way), o.status, o.out,
		  o.err);
	for (int i = 0; i < n; i++) {
		expect_connect(&o, way, socks[i], ok[i] ? "ok" : "EACCES");
		cr_expect_eq(ipct_accepts(counts[i]), ok[i] ? 1u : 0u, "%s: %s accepted %zu times",
			     ipct_way_name(way), socks[i], ipct_accepts(counts[i]));
		char needle[PATH_MAX + 16];
		cf_fx_fmt(needle, sizeof needle, "\"socket\":\"%s\"", socks[i]);
		if (ok[i])
			cr_expect_eq(ipct_log_count(t, "ipc_denied", needle), 0,
				     "%s: an allowed socket was logged as denied: %s",
				     ipct_way_name(way), socks[i]);
		else
			expect_logged(t, way, "ipc_denied", "socket", socks[i]);
	}
	size_t want = 0;
	for (int i = 0; i < n; i++)
		want += ok[i];
	cr_expect_eq(count_lines(o.out, IPCT_PLAIN_TEXT), want, "%s: %zu answers, want %zu\n" SHOW,
		     ipct_way_name(way), count_lines(o.out, IPCT_PLAIN_TEXT), want, o.status, o.out,
		     o.err);
	cf_fx_out_free(&o);
}

void ipct_allow_socket(struct ipct *t, enum ipct_way way, bool by_env)
{
	char a[PATH_MAX], b[PATH_MAX], aa[64], ab[64], counts[4][PATH_MAX];
	cf_fx_fmt(a, sizeof a, "%s/a.sock", t->tmp);
	cf_fx_fmt(b, sizeof b, "%s/b.sock", t->tmp); /* same directory: stays denied */
	cf_fx_fmt(aa, sizeof aa, "%s-a", t->abs);
	cf_fx_fmt(ab, sizeof ab, "%s-b", t->abs);
	const char *socks[4] = {a, b, aa, ab};
	for (int i = 0; i < 4; i++)
		ipct_serve(t, socks[i], counts[i]);
	const char *cs[4] = {counts[0], counts[1], counts[2], counts[3]};

	/* Nothing is allowed by default. */
	connect_each(t, way, NULL, NULL, socks, cs, (const bool[]){false, false, false, false}, 4);
	struct ipct_allow allow = {.sockets = {a, aa}, .by_env = by_env};
	connect_each(t, way, &allow, NULL, socks, cs, (const bool[]){true, false, true, false}, 4);
}

void ipct_ssh_agent(struct ipct *t, enum ipct_way way, bool by_env)
{
	char agent[PATH_MAX], other[PATH_MAX], counts[2][PATH_MAX], env[PATH_MAX + 16];
	cf_fx_fmt(agent, sizeof agent, "%s/agent.sock", t->tmp);
	cf_fx_fmt(other, sizeof other, "%s/other.sock", t->tmp);
	ipct_serve(t, agent, counts[0]);
	ipct_serve(t, other, counts[1]);
	cf_fx_fmt(env, sizeof env, "SSH_AUTH_SOCK=%s", agent);
	const char *socks[2] = {agent, other}, *cs[2] = {counts[0], counts[1]};
	const char *extra[] = {env, NULL};

	/* SSH_AUTH_SOCK alone allows nothing. */
	connect_each(t, way, NULL, extra, socks, cs, (const bool[]){false, false}, 2);
	struct ipct_allow allow = {.ssh_agent = true, .by_env = by_env};
	connect_each(t, way, &allow, extra, socks, cs, (const bool[]){true, false}, 2);
}

/* The allowed socket swapped under the fence: a fenced command moves the
 * agent's socket aside and hard-links another outside socket in its place
 * (both in /tmp, which it may write). The supervisor judges the identity the
 * agent's socket had when the tree started, not what the path names now. */
void ipct_swapped_allowed_socket(struct ipct *t, enum ipct_way way)
{
	char agent[PATH_MAX], other[PATH_MAX], counts[2][PATH_MAX], env[PATH_MAX + 16];
	char script[PATH_MAX * 8];
	cf_fx_fmt(agent, sizeof agent, "%s/agent.sock", t->tmp);
	cf_fx_fmt(other, sizeof other, "%s/other.sock", t->tmp);
	ipct_serve(t, agent, counts[0]);
	ipct_serve(t, other, counts[1]);
	cf_fx_write(counts[0], "");
	cf_fx_write(counts[1], "");
	cf_fx_fmt(env, sizeof env, "SSH_AUTH_SOCK=%s", agent);
	const char *extra[] = {env, NULL};
	int k = snprintf(script, sizeof script,
			 "%s mv '%s' '%s.old' && ln '%s' '%s' && echo SWAPPED; '%s' connect '%s' '%s'; ",
			 fenced_probe(t), agent, agent, other, agent, CF_IPC, agent, t->plain);
	cr_assert_lt((size_t)k, sizeof script);
	unlink(t->log);
	struct ipct_allow allow = {.ssh_agent = true};
	struct cf_fx_out o;
	ipct_fenced(&o, t, way, &allow, extra, CF_ARGV("/bin/sh", "-c", script));
	dump("swapped agent socket", way, &o);
	expect_fenced(&o, way);
	cr_expect(strstr(o.out, "SWAPPED"), "%s: the swap itself failed\n" SHOW, ipct_way_name(way),
		  o.status, o.out, o.err);
	expect_connect(&o, way, agent, "EACCES");
	cr_expect_eq(ipct_accepts(counts[1]), 0u, "%s: the other socket accepted %zu times through "
		     "the swapped agent path", ipct_way_name(way), ipct_accepts(counts[1]));
	cf_fx_out_free(&o);
}

/* ---- the supervisor taken over (issue 18) ---- */

/* The impostor outside: as soon as the supervisor's name is free, bind it
 * (what the attack's starved binders may win), take every listener handed
 * over and count it. */
struct outside_impostor {
	char dir[PATH_MAX];
	volatile int stop, bound, got;
	pthread_t t;
};

static void *outside_impostor(void *arg)
{
	struct outside_impostor *im = arg;
	char path[PATH_MAX + 16], name[256] = "";
	snprintf(path, sizeof path, "%s/sup-name", im->dir);
	while (!im->stop && !name[0]) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? read(fd, name, sizeof name - 1) : 0;
		if (fd >= 0)
			close(fd);
		name[n > 0 ? n : 0] = '\0';
		if (!name[0])
			usleep(1000);
	}
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t n = strlen(name);
	memcpy(sa.sun_path + 1, name, n < sizeof sa.sun_path - 1 ? n : sizeof sa.sun_path - 2);
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
	int ls = -1;
	while (!im->stop && ls < 0) {
		int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		if (s >= 0 && bind(s, (struct sockaddr *)&sa, len) == 0 && listen(s, 64) == 0)
			ls = s;
		else if (s >= 0)
			close(s);
	}
	im->bound = ls >= 0;
	while (!im->stop && ls >= 0) {
		struct pollfd p = {ls, POLLIN, 0};
		if (poll(&p, 1, 20) <= 0)
			continue;
		int c = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
		char buf[65536];
		union {
			struct cmsghdr h;
			char b[CMSG_SPACE(sizeof(int))];
		} cm;
		struct iovec iov = {buf, sizeof buf};
		struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.b,
				   .msg_controllen = sizeof cm.b};
		if (c >= 0 && recvmsg(c, &m, MSG_CMSG_CLOEXEC) > 0) {
			struct cmsghdr *h = CMSG_FIRSTHDR(&m);
			if (h && h->cmsg_type == SCM_RIGHTS) {
				int fd;
				memcpy(&fd, CMSG_DATA(h), sizeof fd);
				im->got++;
				close(fd);
			}
			int zero = 0;
			(void)!send(c, &zero, sizeof zero, MSG_NOSIGNAL);
		}
		if (c >= 0)
			close(c);
	}
	if (ls >= 0)
		close(ls);
	return NULL;
}

static size_t count_in(const char *text, const char *needle)
{
	size_t n = 0;
	for (const char *p = text; p && (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

void ipct_takeover(struct ipct *t, enum ipct_way way)
{
	char sock[PATH_MAX], count[PATH_MAX], target[PATH_MAX], arg[PATH_MAX + 8], got[PATH_MAX];
	struct outside_impostor im = {0};
	struct stat before, after;
	cf_fx_fmt(sock, sizeof sock, "%s/deputy.sock", t->tmp);
	cf_fx_fmt(target, sizeof target, "%s/.bashrc", t->fx.home);
	cf_fx_fmt(im.dir, sizeof im.dir, "%s/takeover", t->fx.ws);
	cf_fx_fmt(arg, sizeof arg, "out=%s", target);
	cf_fx_fmt(got, sizeof got, "%s/impostor-got", im.dir);
	cf_fx_mkdirs(im.dir);
	cf_fx_write(target, "# not a secret, outside\n");
	cr_assert(stat(target, &before) == 0);
	ipct_serve(t, sock, count);
	control(t, sock, count);
	cr_assert(pthread_create(&im.t, NULL, outside_impostor, &im) == 0);
	struct cf_fx_out o;
	ipct_fenced(&o, t, way, NULL, NULL,
		    CF_ARGV(CF_IPC, "takeover", im.dir, ";;", CF_IPC, "connect", sock, (char *)t->key,
			    ";;", CF_IPC, "meta", arg, ";;", CF_IPC, "connect", sock, (char *)t->key));
	im.stop = 1;
	pthread_join(im.t, NULL);
	usleep(100000);
	dump("the supervisor taken over", way, &o);
	cr_assert(strstr(o.out, "TAKEOVER killed="), "%s: the attack did not run: " SHOW,
		  ipct_way_name(way), SHOW_ARGS(o));
	char *fenced_got = cf_fx_slurp(got);
	cr_expect(im.bound || strstr(o.out, "bound=1"),
		  "%s: nobody took the name over: the test did not test it", ipct_way_name(way));
	cr_expect_eq(im.got, 0, "%s: the outside impostor received %d listeners", ipct_way_name(way),
		     im.got);
	cr_expect(!fenced_got || !*fenced_got, "%s: the fenced impostor received listeners: %s",
		  ipct_way_name(way), fenced_got);
	free(fenced_got);
	cr_expect(!strstr(o.out, "CONNECT ") && !strstr(o.out, "META "),
		  "%s: a command ran after the supervisor was killed: " SHOW, ipct_way_name(way),
		  SHOW_ARGS(o));
	cr_expect_eq(ipct_accepts(count), 0, "%s: the outside deputy accepted %zu times",
		     ipct_way_name(way), ipct_accepts(count));
	cr_assert(stat(target, &after) == 0);
	cr_expect(before.st_mode == after.st_mode && before.st_ctim.tv_sec == after.st_ctim.tv_sec &&
			  before.st_ctim.tv_nsec == after.st_ctim.tv_nsec,
		  "%s: the metadata of %s changed", ipct_way_name(way), target);
	cr_expect_eq(count_in(o.err, "credfence: the IPC supervisor of this harness"), 1,
		     "%s: the harness did not say once that its supervisor ended: " SHOW,
		     ipct_way_name(way), SHOW_ARGS(o));
	cr_expect(strstr(o.err, "the IPC supervisor has ended; nothing more can be fenced under it"),
		  "%s: " SHOW, ipct_way_name(way), SHOW_ARGS(o));
	cr_expect_eq(ipct_log_count(t, "supervisor_ended", NULL), 1, "%s: supervisor_ended lines",
		     ipct_way_name(way));
	expect_no_marker(t, &o);
	cf_fx_out_free(&o);
}
