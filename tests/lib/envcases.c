#include "envcases.h"

#include <stdarg.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env_shapes.h"
#include "secret_env.h"

#define SAFE(n) { n, true }
#define KEEP(n) { n, false }

const struct cf_env_ordinary cf_env_ordinary[] = {
	KEEP("PATH"), KEEP("HOME"), KEEP("LANG"), SAFE("TERM"), SAFE("SHELL"), SAFE("USER"),
	SAFE("LOGNAME"), SAFE("EDITOR"), SAFE("VISUAL"), SAFE("PAGER"), SAFE("LESS"),
	SAFE("MANPATH"), SAFE("TZ"), SAFE("DISPLAY"), SAFE("WAYLAND_DISPLAY"),
	SAFE("XDG_RUNTIME_DIR"), SAFE("XDG_SESSION_TYPE"), SAFE("DBUS_SESSION_BUS_ADDRESS"),
	SAFE("SSH_AUTH_SOCK"), SAFE("SSH_AGENT_PID"), SAFE("SSH_CONNECTION"), SAFE("SSH_TTY"),
	SAFE("GPG_TTY"), SAFE("COLORTERM"), SAFE("TERM_PROGRAM"), SAFE("HOSTNAME"),
	SAFE("LS_COLORS"), SAFE("GOPATH"), SAFE("GOROOT"), SAFE("GOFLAGS"), SAFE("GOPROXY"),
	SAFE("GOPRIVATE"), SAFE("RUST_BACKTRACE"), SAFE("RUST_LOG"), SAFE("RUSTFLAGS"),
	SAFE("PYTHONDONTWRITEBYTECODE"), SAFE("PYTHONUNBUFFERED"), SAFE("VIRTUAL_ENV"),
	SAFE("PIP_INDEX_URL"), SAFE("CONDA_PREFIX"), SAFE("NODE_ENV"), SAFE("NPM_CONFIG_REGISTRY"),
	SAFE("NVM_DIR"), SAFE("JAVA_HOME"), SAFE("MAVEN_OPTS"), SAFE("GRADLE_USER_HOME"),
	SAFE("CC"), SAFE("CXX"), SAFE("CFLAGS"), SAFE("LDFLAGS"), SAFE("PKG_CONFIG_PATH"),
	SAFE("CMAKE_BUILD_TYPE"), SAFE("MAKEFLAGS"), SAFE("DOCKER_HOST"), SAFE("AWS_REGION"),
	SAFE("AWS_PROFILE"), SAFE("AWS_DEFAULT_REGION"), SAFE("GOOGLE_CLOUD_PROJECT"),
	SAFE("GIT_AUTHOR_NAME"), SAFE("GIT_AUTHOR_EMAIL"), SAFE("GIT_EDITOR"), SAFE("GIT_ASKPASS"),
	SAFE("SSH_ASKPASS"), SAFE("HISTSIZE"), SAFE("HISTCONTROL"), SAFE("TOKENIZERS_PARALLELISM"),
	SAFE("HF_HOME"), SAFE("TRANSFORMERS_CACHE"), SAFE("CUDA_VISIBLE_DEVICES"),
	SAFE("OMP_NUM_THREADS"), SAFE("GITHUB_ACTIONS"), SAFE("GITHUB_WORKSPACE"), SAFE("GITHUB_REF"),
	SAFE("GITHUB_SHA"), SAFE("GITHUB_REPOSITORY"), SAFE("ANTHROPIC_BASE_URL"),
	SAFE("ANTHROPIC_MODEL"), SAFE("OPENAI_BASE_URL"), SAFE("KEYTIMEOUT"), SAFE("PGHOST"),
	SAFE("PGUSER"), SAFE("PGDATABASE"), SAFE("MYSQL_HOST"), SAFE("VAULT_ADDR"),
	SAFE("CREDFENCE_UNUSED_TOKEN"), SAFE("TOKEN_FILE_DIR"), SAFE("SECRETS_DIR"),
	KEEP("CI"), KEEP("LC_ALL"), KEEP("TMPDIR"), KEEP("LD_LIBRARY_PATH"), KEEP("XDG_CONFIG_HOME"),
	KEEP("XDG_DATA_HOME"), KEEP("XDG_CACHE_HOME"), KEEP("PYTHONPATH"), KEEP("NODE_OPTIONS"),
	KEEP("PASSWORD_STORE_DIR"), KEEP("PASSWORD_STORE_KEY"), KEEP("GNUPGHOME"), KEEP("KUBECONFIG"),
	KEEP("DOCKER_CONFIG"), KEEP("AWS_SHARED_CREDENTIALS_FILE"), KEEP("AWS_CONFIG_FILE"),
	KEEP("NPM_CONFIG_USERCONFIG"), KEEP("PGPASSFILE"), KEEP("CARGO_HOME"), KEEP("RUSTUP_HOME"),
	KEEP("CREDFENCE_WORKSPACE"), KEEP("CREDFENCE_LOG"), KEEP("LD_PRELOAD"),
};

const size_t cf_env_ordinary_count = sizeof cf_env_ordinary / sizeof *cf_env_ordinary;

const char *cf_env_ordinary_entry(const char *name)
{
	static char ring[4][256];
	static unsigned k;
	char *b = ring[k++ % 4];
	snprintf(b, sizeof ring[0], "%s=cf-ordinary-%s", name, name);
	return b;
}

/* A growing array of cases. */
struct cases {
	struct cf_envcase *v;
	size_t n, cap;
};

static void add(struct cases *c, const char *why, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void add(struct cases *c, const char *why, const char *fmt, ...)
{
	va_list ap;
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 256;
		c->v = realloc(c->v, c->cap * sizeof *c->v);
		if (!c->v)
			abort();
	}
	va_start(ap, fmt);
	if (vasprintf(&c->v[c->n].entry, fmt, ap) < 0)
		abort();
	va_end(ap);
	c->v[c->n++].why = why;
}

/* The characters of class CLS, in byte order, into OUT. */
static size_t alphabet(char cls, char *out)
{
	size_t n = 0;
	for (unsigned c = 32; c < 127; c++)
		if (cf_env_shape_in_class(cls, (unsigned char)c))
			out[n++] = (char)c;
	out[n] = '\0';
	return n;
}

static unsigned hexval(char c)
{
	return isdigit((unsigned char)c) ? (unsigned)(c - '0') : (unsigned)(tolower((unsigned char)c) - 'a' + 10);
}

/* N characters of class CLS from the hex digits of TAG and SALT: each
 * fixture's differ. */
static size_t fill(char cls, unsigned count, const char *tag, unsigned salt, char *out, size_t cap)
{
	char alpha[128];
	size_t an = alphabet(cls, alpha);
	const char *hex = strchr(tag, '-') ? strchr(tag, '-') + 1 : tag;
	size_t hn = strlen(hex), k = 0;
	if (!an || !hn)
		abort();
	for (; k < count && k + 1 < cap; k++)
		out[k] = alpha[(hexval(hex[(k + salt) % hn]) * 7 + k * 13 + salt * 5) % an];
	return k;
}

void cf_envcases_shape_value(const char *shape, const char *tag, unsigned salt, char *out, size_t cap)
{
	size_t k = 0;
	for (const char *p = shape; *p && k + 1 < cap;) {
		if (*p != '{') {
			out[k++] = *p++;
			continue;
		}
		char cls = p[1];
		unsigned min = (unsigned)strtoul(p + 2, (char **)&p, 10);
		if (*p == ',')
			(void)strtoul(p + 1, (char **)&p, 10);
		p++; /* '}' */
		if (*p == '?') { /* a lazy run: one character, the class's first */
			p++;
			char alpha[128];
			alphabet(cls, alpha);
			out[k++] = alpha[0];
			continue;
		}
		k += fill(cls, min, tag, salt + (unsigned)k, out + k, cap - k);
	}
	out[k] = '\0';
}

/* SRC with {TAG}, {cN}, \n and \\ expanded, malloc'd. */
static char *expand(const char *src, const char *tag, unsigned salt)
{
	size_t cap = strlen(src) * 4 + 4096, k = 0;
	char *out = malloc(cap);
	if (!out)
		abort();
	for (const char *p = src; *p && k + 256 < cap;) {
		if (strncmp(p, "{TAG}", 5) == 0) {
			k += (size_t)snprintf(out + k, cap - k, "%s", tag);
			p += 5;
			continue;
		}
		if (p[0] == '{' && p[1] && isdigit((unsigned char)p[2])) {
			char *end;
			unsigned long n = strtoul(p + 2, &end, 10);
			char alpha[128];
			if (*end == '}' && n < 200 && alphabet(p[1], alpha)) {
				k += fill(p[1], (unsigned)n, tag, salt + (unsigned)k, out + k, cap - k);
				p = end + 1;
				continue;
			}
		}
		if (p[0] == '\\' && (p[1] == 'n' || p[1] == '\\')) {
			out[k++] = p[1] == 'n' ? '\n' : '\\';
			p += 2;
			continue;
		}
		out[k++] = *p++;
	}
	out[k] = '\0';
	return out;
}

/* Each corpus line of KIND ("withheld", "passes", "unit"), expanded. */
static void corpus(struct cases *c, const char *tag, const char *kind, const char *why)
{
	const char *src = getenv("CREDFENCE_SOURCE");
	char path[4096];
	if (!src) {
		fprintf(stderr, "envcases: CREDFENCE_SOURCE is not set; run with meson test\n");
		abort();
	}
	snprintf(path, sizeof path, "%s/tests/corpus/env-secrets.txt", src);
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "envcases: can not read %s\n", path);
		abort();
	}
	char *line = NULL;
	size_t cap = 0, kl = strlen(kind);
	unsigned salt = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, f)) > 0) {
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		salt++;
		if (strncmp(line, kind, kl) != 0 || line[kl] != ' ')
			continue;
		char *e = expand(line + kl + 1, tag, salt);
		add(c, why, "%s", e);
		free(e);
	}
	free(line);
	fclose(f);
}

/* The name PATTERN with each '*' replaced by WITH, in lower case if LOWER. */
static void sample(char *out, size_t cap, const char *pattern, const char *with, bool lower)
{
	size_t k = 0;
	for (const char *p = pattern; *p && k + 8 < cap; p++) {
		if (*p == '*') {
			for (const char *w = with; *w && k + 1 < cap; w++)
				out[k++] = *w;
		} else {
			out[k++] = lower ? (char)tolower((unsigned char)*p) : *p;
		}
	}
	out[k] = '\0';
}

/* WORD in lower case, or capitalized (Key), into OUT. */
static const char *cased(const char *word, bool capital, char *out, size_t cap)
{
	size_t k = 0;
	for (; word[k] && k + 1 < cap; k++)
		out[k] = (char)(capital && k == 0 ? toupper((unsigned char)word[k])
						  : tolower((unsigned char)word[k]));
	out[k] = '\0';
	return out;
}

/* Names that hold the word row R's word, each a way its rule must catch. */
static void word_cases(struct cases *c, const struct cf_env_word_row *r, const char *tag, size_t i)
{
	char a[64], b[64], la[64], lb[64], ca[64], cb[64];
	const char *why = r->word;
	if (r->at == CF_WORD_PAIR) {
		const char *sp = strchr(r->word, ' ');
		snprintf(a, sizeof a, "%.*s", (int)(sp - r->word), r->word);
		snprintf(b, sizeof b, "%s", sp + 1);
		cased(a, false, la, sizeof la), cased(b, false, lb, sizeof lb);
		cased(a, true, ca, sizeof ca), cased(b, true, cb, sizeof cb);
		add(c, why, "CFX_%s_%s=fake-%s-word%zu-a", a, b, tag, i);
		add(c, why, "cfy_%s_%s=fake-%s-word%zu-b", la, lb, tag, i);
		add(c, why, "CFX_%s%s=fake-%s-word%zu-c", a, b, tag, i);
		add(c, why, "cfx%s%s=fake-%s-word%zu-d", ca, cb, tag, i);
		add(c, why, "CFX_%s_%s_PROD=fake-%s-word%zu-e", a, b, tag, i);
		if (r->plural)
			add(c, why, "CFX_%s_%sS=fake-%s-word%zu-f", a, b, tag, i);
		return;
	}
	cased(r->word, false, la, sizeof la), cased(r->word, true, ca, sizeof ca);
	add(c, why, "CFX_%s=fake-%s-word%zu-a", r->word, tag, i);
	add(c, why, "cfy_%s=fake-%s-word%zu-b", la, tag, i);
	add(c, why, "cfx%s=fake-%s-word%zu-c", ca, tag, i);
	add(c, why, "CFX_%s_2=fake-%s-word%zu-d", r->word, tag, i);
	if (!r->last)
		add(c, why, "CFX_%s_PROD=fake-%s-word%zu-e", r->word, tag, i);
	if (r->at == CF_WORD_HOLDS)
		add(c, why, "CFX%sCFX=fake-%s-word%zu-f", r->word, tag, i);
	if (r->at == CF_WORD_ENDS)
		add(c, why, "cfxauth%s=fake-%s-word%zu-f", la, tag, i);
	if (r->plural)
		add(c, why, "CFX_%sS=fake-%s-word%zu-f", r->word, tag, i);
}

/* The known names and the value shapes first: the tests look for some of
 * their names in the log's env_withheld line, whose list is cut at its
 * buffer's end. */
struct cf_envcase *cf_envcases_secrets(const char *tag, size_t *n)
{
	struct cases c = {NULL, 0, 0};
	char name[128], value[1024];
	for (size_t i = 0; i < cf_env_name_count; i++)
		add(&c, "known name", "%s=fake-%s-name%zu-x", cf_env_name_table[i].name, tag, i);
	for (size_t i = 0; i < cf_env_shape_count + cf_env_shape_lead_count; i++) {
		const struct cf_env_shape_row *r = i < cf_env_shape_count
							   ? &cf_env_shape_table[i]
							   : &cf_env_shape_lead_table[i - cf_env_shape_count].row;
		cf_envcases_shape_value(r->shape, tag, (unsigned)i, value, sizeof value);
		add(&c, r->shape, "MY_VAR_%zu=%s", i, value);
		cf_envcases_shape_value(r->shape, tag, (unsigned)i + 1000, value, sizeof value);
		add(&c, r->shape, "MY_NOTE_%zu=see: %s (rotated)", i, value);
	}
	for (size_t i = 0; i < cf_env_pattern_count; i++) {
		if (cf_env_pattern_table[i].not_secret)
			continue;
		sample(name, sizeof name, cf_env_pattern_table[i].pattern, "Cfx", false);
		add(&c, cf_env_pattern_table[i].pattern, "%s=fake-%s-pattern%zu-x", name, tag, i);
		sample(name, sizeof name, cf_env_pattern_table[i].pattern, "cfy", true);
		add(&c, cf_env_pattern_table[i].pattern, "%s=fake-%s-lower%zu-x", name, tag, i);
	}
	for (size_t i = 0; i < cf_env_word_count; i++)
		if (!cf_env_word_table[i].param)
			word_cases(&c, &cf_env_word_table[i], tag, i);
	corpus(&c, tag, "withheld", "corpus");
	*n = c.n;
	return c.v;
}

struct cf_envcase *cf_envcases_passing(const char *tag, bool unit, size_t *n)
{
	struct cases c = {NULL, 0, 0};
	corpus(&c, tag, "passes", "passes");
	if (unit)
		corpus(&c, tag, "unit", "unit");
	*n = c.n;
	return c.v;
}

void cf_envcases_free(struct cf_envcase *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(c[i].entry);
	free(c);
}
