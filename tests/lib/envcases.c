#include "envcases.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static void add(struct cf_envcase *c, size_t *n, const char *why, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void add(struct cf_envcase *c, size_t *n, const char *why, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&c[*n].entry, fmt, ap) < 0)
		abort();
	va_end(ap);
	c[(*n)++].why = why;
}

/* PATTERN with each '*' replaced by WITH. */
static void sample(char *out, size_t cap, const char *pattern, const char *with, bool lower)
{
	size_t k = 0;
	for (const char *p = pattern; *p && k + 8 < cap; p++) {
		if (*p == '*') {
			for (const char *w = with; *w && k + 1 < cap; w++)
				out[k++] = *w;
		} else {
			out[k++] = lower && *p >= 'A' && *p <= 'Z' ? (char)(*p - 'A' + 'a') : *p;
		}
	}
	out[k] = '\0';
}

struct cf_envcase *cf_envcases_secrets(const char *tag, size_t *n)
{
	size_t cap = cf_env_name_count + 2 * cf_env_pattern_count + cf_env_value_count + 2;
	struct cf_envcase *c = calloc(cap, sizeof *c);
	char hex[32], up[32], name[128];
	if (!c)
		abort();
	*n = 0;
	snprintf(hex, sizeof hex, "%s", tag + strlen("CFMARK-"));
	size_t h = 0;
	for (; hex[h]; h++)
		up[h] = hex[h] >= 'a' && hex[h] <= 'f' ? (char)(hex[h] - 'a' + 'A') : hex[h];
	up[h] = '\0';
	for (size_t i = 0; i < cf_env_name_count; i++)
		add(c, n, "known name", "%s=fake-%s-name%zu-x", cf_env_name_table[i].name, tag, i);
	for (size_t i = 0; i < cf_env_pattern_count; i++) {
		if (cf_env_pattern_table[i].not_secret)
			continue;
		sample(name, sizeof name, cf_env_pattern_table[i].pattern, "Cfx", false);
		add(c, n, cf_env_pattern_table[i].pattern, "%s=fake-%s-pattern%zu-x", name, tag, i);
		sample(name, sizeof name, cf_env_pattern_table[i].pattern, "cfy", true);
		add(c, n, cf_env_pattern_table[i].pattern, "%s=fake-%s-lower%zu-x", name, tag, i);
	}
	for (size_t i = 0; i < cf_env_value_count; i++) {
		const struct cf_env_value_row *r = &cf_env_value_table[i];
		if (r->contains)
			add(c, n, r->prefix, "MY_VAR_%zu=%sOPENSSH PRIVATE KEY-----\nb3Blbn%s\n"
					   "-----END OPENSSH PRIVATE KEY-----\n", i, r->prefix, tag);
		else if (r->upper) /* exactly min_tail upper case letters and digits */
			add(c, n, r->prefix, "MY_VAR_%zu=%s%.*s%.*s", i, r->prefix, (int)r->min_tail, up,
			    (int)(r->min_tail > strlen(up) ? r->min_tail - strlen(up) : 0),
			    "QZ7XQZ7XQZ7XQZ7XQZ7X");
		else
			add(c, n, r->prefix, "MY_VAR_%zu=%s%s%.*s", i, r->prefix, tag,
			    (int)(r->min_tail > strlen(tag) ? r->min_tail - strlen(tag) : 0),
			    "Zq0Zq0Zq0Zq0Zq0Zq0Zq0Zq0Zq0Zq0Zq0Zq0Zq0Zq0Zq0Zq0");
	}
	/* A URL with a password, under an innocent name. */
	add(c, n, "URL with a password", "MY_DB_URL=postgres://app:%s-pw@db.internal:5432/app", tag);
	return c;
}

void cf_envcases_free(struct cf_envcase *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(c[i].entry);
	free(c);
}
