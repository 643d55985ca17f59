/* The secret environment variables (secret_env.h). Each known name and value
 * prefix says where it comes from: the tool's own documentation of the
 * variable it reads, or of the token format it issues. */
#include "secret_env.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define KNOWN(name, holds, source) { name, sizeof name - 1, holds, source }
#define ENDS(w, holds) { "*" w, w, sizeof w - 1, CF_ENV_ENDS, holds, false }
#define STARTS(w, holds) { w "*", w, sizeof w - 1, CF_ENV_STARTS, holds, false }
#define CONTAINS(w, holds) { "*" w "*", w, sizeof w - 1, CF_ENV_CONTAINS, holds, false }
#define NOT_SECRET(w, holds) { w "*", w, sizeof w - 1, CF_ENV_STARTS, holds, true }
#define TOKEN(prefix, tail, holds, source) { prefix, tail, false, NULL, holds, source }
#define KEY_ID(prefix, tail, holds, source) { prefix, tail, true, NULL, holds, source }
#define HOLDING(prefix, contains, holds, source) { prefix, 0, false, contains, holds, source }

#define GH_ENV "https://cli.github.com/manual/gh_help_environment"
#define AWS_ENV "https://docs.aws.amazon.com/cli/latest/userguide/cli-configure-envvars.html"
#define AZ_ENV "https://learn.microsoft.com/en-us/python/api/azure-identity/azure.identity.environmentcredential"
#define GL_CI "https://docs.gitlab.com/ci/variables/predefined_variables/"
#define HF_ENV "https://huggingface.co/docs/huggingface_hub/package_reference/environment_variables"
#define CC_ENV "https://docs.anthropic.com/en/docs/claude-code/settings#environment-variables"
#define GH_FMT "https://github.blog/changelog/2021-03-31-authentication-token-format-updates-are-generally-available/"

const struct cf_env_name_row cf_env_name_table[] = {
	/* Model providers: the key an agent session is started with. */
	KNOWN("ANTHROPIC_API_KEY", "Anthropic API key", CC_ENV),
	KNOWN("ANTHROPIC_AUTH_TOKEN", "Anthropic bearer token", CC_ENV),
	KNOWN("CLAUDE_CODE_OAUTH_TOKEN", "Claude Code login token (claude setup-token)", CC_ENV),
	KNOWN("OPENAI_API_KEY", "OpenAI API key",
	      "https://platform.openai.com/docs/api-reference/authentication"),
	KNOWN("CODEX_API_KEY", "Codex API key",
	      "https://developers.openai.com/codex/config-file/environment-variables"),
	KNOWN("GEMINI_API_KEY", "Gemini API key", "https://ai.google.dev/gemini-api/docs/api-key"),
	KNOWN("GOOGLE_API_KEY", "Google API key (Gemini)", "https://ai.google.dev/gemini-api/docs/api-key"),
	KNOWN("HF_TOKEN", "Hugging Face token", HF_ENV),
	KNOWN("HUGGING_FACE_HUB_TOKEN", "Hugging Face token (older name)", HF_ENV),
	/* Forges and CI. */
	KNOWN("GITHUB_TOKEN", "GitHub token", GH_ENV),
	KNOWN("GH_TOKEN", "GitHub token", GH_ENV),
	KNOWN("GH_ENTERPRISE_TOKEN", "GitHub Enterprise token", GH_ENV),
	KNOWN("GITHUB_ENTERPRISE_TOKEN", "GitHub Enterprise token", GH_ENV),
	KNOWN("GITLAB_TOKEN", "GitLab token (glab)",
	      "https://gitlab.com/gitlab-org/cli/-/blob/main/README.md#environment-variables"),
	KNOWN("CI_JOB_TOKEN", "GitLab CI job token", GL_CI),
	KNOWN("CI_REGISTRY_PASSWORD", "GitLab CI registry password", GL_CI),
	KNOWN("CI_DEPLOY_PASSWORD", "GitLab CI deploy token password", GL_CI),
	KNOWN("ACTIONS_RUNTIME_TOKEN", "GitHub Actions runtime token",
	      "https://github.com/actions/toolkit/tree/main/packages/artifact"),
	KNOWN("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "GitHub Actions OIDC request token",
	      "https://docs.github.com/en/actions/security-for-github-actions/security-hardening-your-deployments/about-security-hardening-with-openid-connect"),
	/* Clouds. */
	KNOWN("AWS_ACCESS_KEY_ID", "AWS access key id (half of a key pair)", AWS_ENV),
	KNOWN("AWS_SECRET_ACCESS_KEY", "AWS secret access key", AWS_ENV),
	KNOWN("AWS_SESSION_TOKEN", "AWS session token", AWS_ENV),
	KNOWN("AWS_SECURITY_TOKEN", "AWS session token (boto's older name)",
	      "https://boto3.amazonaws.com/v1/documentation/api/latest/guide/credentials.html"),
	KNOWN("AZURE_CLIENT_SECRET", "Azure service principal secret", AZ_ENV),
	KNOWN("AZURE_CLIENT_CERTIFICATE_PASSWORD", "Azure certificate password", AZ_ENV),
	KNOWN("GOOGLE_APPLICATION_CREDENTIALS", "Google service account key file",
	      "https://cloud.google.com/docs/authentication/application-default-credentials"),
	KNOWN("DIGITALOCEAN_ACCESS_TOKEN", "DigitalOcean token",
	      "https://docs.digitalocean.com/reference/doctl/reference/"),
	KNOWN("CLOUDFLARE_API_TOKEN", "Cloudflare token",
	      "https://developers.cloudflare.com/workers/wrangler/system-environment-variables/"),
	KNOWN("HEROKU_API_KEY", "Heroku API key",
	      "https://devcenter.heroku.com/articles/authentication"),
	/* Registries and package uploads. */
	KNOWN("NPM_TOKEN", "npm registry token",
	      "https://docs.npmjs.com/using-private-packages-in-a-ci-cd-workflow"),
	KNOWN("NODE_AUTH_TOKEN", "npm registry token (actions/setup-node)",
	      "https://github.com/actions/setup-node/blob/main/docs/advanced-usage.md"),
	KNOWN("TWINE_PASSWORD", "PyPI upload token (twine)",
	      "https://twine.readthedocs.io/en/stable/#environment-variables"),
	KNOWN("CARGO_REGISTRY_TOKEN", "crates.io token",
	      "https://doc.rust-lang.org/cargo/reference/config.html#registrytoken"),
	KNOWN("DOCKER_PASSWORD", "Docker registry password (CI convention)",
	      "https://docs.docker.com/reference/cli/docker/login/"),
	KNOWN("DOCKER_AUTH_CONFIG", "Docker registry credentials (GitLab Runner)",
	      "https://docs.gitlab.com/ci/docker/using_docker_images/"),
	KNOWN("GEM_HOST_API_KEY", "RubyGems API key",
	      "https://guides.rubygems.org/command-reference/#gem-push"),
	/* Databases, vaults, chat, payments. */
	KNOWN("PGPASSWORD", "PostgreSQL password",
	      "https://www.postgresql.org/docs/current/libpq-envars.html"),
	KNOWN("MYSQL_PWD", "MySQL password",
	      "https://dev.mysql.com/doc/refman/8.0/en/environment-variables.html"),
	KNOWN("REDISCLI_AUTH", "Redis password (redis-cli)", "https://redis.io/docs/latest/develop/tools/cli/"),
	KNOWN("VAULT_TOKEN", "HashiCorp Vault token",
	      "https://developer.hashicorp.com/vault/docs/commands#vault_token"),
	KNOWN("BW_SESSION", "Bitwarden CLI session key",
	      "https://bitwarden.com/help/cli/#using-a-session-key"),
	KNOWN("OP_SERVICE_ACCOUNT_TOKEN", "1Password service account token",
	      "https://developer.1password.com/docs/service-accounts/use-with-1password-cli/"),
	KNOWN("SLACK_TOKEN", "Slack token", "https://api.slack.com/authentication/token-types"),
	KNOWN("SLACK_BOT_TOKEN", "Slack bot token", "https://api.slack.com/authentication/token-types"),
	KNOWN("STRIPE_API_KEY", "Stripe secret key (Stripe CLI)", "https://docs.stripe.com/cli/api_keys"),
	KNOWN("STRIPE_SECRET_KEY", "Stripe secret key", "https://docs.stripe.com/keys"),
	KNOWN("NGROK_AUTHTOKEN", "ngrok token", "https://ngrok.com/docs/agent/config/"),
	KNOWN("KAGGLE_KEY", "Kaggle API key", "https://github.com/Kaggle/kaggle-api#api-credentials"),
	KNOWN("SENTRY_AUTH_TOKEN", "Sentry token", "https://docs.sentry.io/cli/configuration/"),
	/* Web frameworks' signing keys, read from the environment by convention. */
	KNOWN("SECRET_KEY", "application signing key (Django, Flask)",
	      "https://docs.djangoproject.com/en/stable/ref/settings/#secret-key"),
	KNOWN("SECRET_KEY_BASE", "application signing key (Rails)",
	      "https://guides.rubyonrails.org/security.html#custom-credentials"),
	/* Bare generic names. */
	KNOWN("API_KEY", "an API key", "generic name"),
	KNOWN("APIKEY", "an API key", "generic name"),
	KNOWN("TOKEN", "a token", "generic name"),
	KNOWN("SECRET", "a secret", "generic name"),
};

const size_t cf_env_name_count = sizeof cf_env_name_table / sizeof *cf_env_name_table;

const struct cf_env_pattern_row cf_env_pattern_table[] = {
	/* What is ours, and names a pattern would catch that hold no secret:
	 * pass(1)'s settings (its store is in the secret file table). */
	NOT_SECRET("CREDFENCE_", "credfence's own options"),
	NOT_SECRET("PASSWORD_STORE_", "pass(1) settings: directories, key ids, timeouts"),
	/* Codex withholds *KEY*, *SECRET* and *TOKEN* (shell_environment_policy);
	 * these are narrower, so that TOKENIZERS_PARALLELISM, KEYTIMEOUT and
	 * SSH_AUTH_SOCK pass. */
	ENDS("_TOKEN", "a token"),
	ENDS("_SECRET", "a secret"),
	CONTAINS("_SECRET_", "a secret"),
	CONTAINS("PASSWORD", "a password"),
	ENDS("_PASSWD", "a password"),
	ENDS("_API_KEY", "an API key"),
	ENDS("_APIKEY", "an API key"),
	CONTAINS("_ACCESS_KEY", "an access key"),
	CONTAINS("_PRIVATE_KEY", "a private key"),
	ENDS("_CREDENTIALS", "credentials"),
	/* Terraform: TF_TOKEN_<host> (developer.hashicorp.com/terraform/cli/config/
	 * config-file#environment-variable-credentials); 1Password CLI v1:
	 * OP_SESSION_<account>. */
	STARTS("TF_TOKEN_", "Terraform registry token"),
	STARTS("OP_SESSION_", "1Password CLI session token"),
};

const size_t cf_env_pattern_count = sizeof cf_env_pattern_table / sizeof *cf_env_pattern_table;

const struct cf_env_value_row cf_env_value_table[] = {
	TOKEN("ghp_", 30, "GitHub personal access token", GH_FMT),
	TOKEN("gho_", 30, "GitHub OAuth token", GH_FMT),
	TOKEN("ghu_", 30, "GitHub App user token", GH_FMT),
	TOKEN("ghs_", 30, "GitHub App installation token", GH_FMT),
	TOKEN("ghr_", 30, "GitHub App refresh token", GH_FMT),
	TOKEN("github_pat_", 30, "GitHub fine-grained token",
	      "https://github.blog/security/application-security/introducing-fine-grained-personal-access-tokens-for-github/"),
	TOKEN("glpat-", 20, "GitLab personal access token",
	      "https://docs.gitlab.com/security/tokens/#token-prefixes"),
	TOKEN("gldt-", 20, "GitLab deploy token", "https://docs.gitlab.com/security/tokens/#token-prefixes"),
	TOKEN("sk-ant-", 20, "Anthropic API key", "https://docs.anthropic.com/en/api/overview"),
	TOKEN("sk-proj-", 20, "OpenAI project API key",
	      "https://platform.openai.com/docs/api-reference/authentication"),
	TOKEN("sk-svcacct-", 20, "OpenAI service account key",
	      "https://platform.openai.com/docs/api-reference/authentication"),
	TOKEN("xoxb-", 20, "Slack bot token", "https://api.slack.com/authentication/token-types"),
	TOKEN("xoxp-", 20, "Slack user token", "https://api.slack.com/authentication/token-types"),
	TOKEN("xapp-", 20, "Slack app token", "https://api.slack.com/authentication/token-types"),
	TOKEN("hf_", 30, "Hugging Face token", "https://huggingface.co/docs/hub/security-tokens"),
	TOKEN("npm_", 30, "npm access token",
	      "https://github.blog/changelog/2021-09-23-npm-has-a-new-access-token-format/"),
	TOKEN("pypi-", 50, "PyPI API token", "https://pypi.org/help/#apitoken"),
	TOKEN("sk_live_", 20, "Stripe secret key", "https://docs.stripe.com/keys"),
	TOKEN("rk_live_", 20, "Stripe restricted key", "https://docs.stripe.com/keys"),
	KEY_ID("AKIA", 16, "AWS access key id",
	       "https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html#identifiers-unique-ids"),
	KEY_ID("ASIA", 16, "AWS temporary access key id",
	       "https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html#identifiers-unique-ids"),
	TOKEN("AIza", 35, "Google API key", "https://cloud.google.com/docs/authentication/api-keys"),
	HOLDING("-----BEGIN ", "PRIVATE KEY-----", "PEM private key", "RFC 7468"),
};

const size_t cf_env_value_count = sizeof cf_env_value_table / sizeof *cf_env_value_table;

/* ---- between fork and exec from here on: no allocation, no libc state ---- */

static char upper(char c)
{
	return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
}

size_t cf_env_name_len(const char *entry)
{
	size_t n = 0;
	while (entry[n] && entry[n] != '=')
		n++;
	return n;
}

/* PATTERN[0, K) against NAME at AT, letters of either case. */
static bool same_at(const char *pattern, size_t k, const char *name, size_t at)
{
	for (size_t i = 0; i < k; i++)
		if (upper(pattern[i]) != upper(name[at + i]))
			return false;
	return true;
}

/* The general '*' glob, iteratively: on a mismatch, the last '*' takes one
 * more character. */
static bool glob_any(const char *pattern, const char *name, size_t len)
{
	const char *p = pattern, *star = NULL;
	size_t i = 0, mark = 0;
	while (i < len) {
		if (*p == '*') {
			star = p++;
			mark = i;
		} else if (*p && upper(*p) == upper(name[i])) {
			p++, i++;
		} else if (star) {
			p = star + 1;
			i = ++mark;
		} else {
			return false;
		}
	}
	while (*p == '*')
		p++;
	return *p == '\0';
}

/* The tables' patterns are WORD, *WORD, WORD* or *WORD*: a comparison at
 * the end, at the start, or a search, each linear (this runs for every
 * variable of every launch); a pattern with a '*' inside takes the general
 * way. */
bool cf_env_glob(const char *pattern, const char *name, size_t len)
{
	bool lead = pattern[0] == '*';
	const char *core = pattern + lead;
	size_t k = 0;
	while (core[k] && core[k] != '*')
		k++;
	bool trail = core[k] == '*' && core[k + 1] == '\0';
	if ((core[k] && !trail) || k == 0)
		return glob_any(pattern, name, len);
	if (k > len)
		return false;
	if (!lead)
		return same_at(core, k, name, 0) && (trail || k == len);
	if (!trail)
		return same_at(core, k, name, len - k);
	for (size_t at = 0; at + k <= len; at++)
		if (upper(name[at]) == upper(core[0]) && same_at(core, k, name, at))
			return true;
	return false;
}

static bool name_is(const char *want, const char *name, size_t len)
{
	size_t i = 0;
	for (; i < len; i++)
		if (!want[i] || upper(want[i]) != upper(name[i]))
			return false;
	return want[i] == '\0';
}

static bool token_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
	       c == '-';
}

/* ROW's token at V: its prefix, then its tail up to the next character that
 * is not a token's (or the end). */
static bool token_at(const struct cf_env_value_row *row, const char *v)
{
	const char *p = row->prefix;
	while (*p && *v == *p)
		p++, v++;
	if (*p)
		return false;
	if (row->contains) {
		for (; *v; v++) {
			const char *a = v, *b = row->contains;
			while (*b && *a == *b)
				a++, b++;
			if (!*b)
				return true;
		}
		return false;
	}
	size_t n = 0;
	if (row->upper) {
		while ((v[n] >= 'A' && v[n] <= 'Z') || (v[n] >= '0' && v[n] <= '9'))
			n++;
		return n == row->min_tail && !token_char(v[n]);
	}
	while (token_char(v[n]))
		n++;
	return n >= row->min_tail;
}

/* A URL whose user part has a password, anywhere in V: "scheme://" then
 * "user:password@" before the host (postgres://app:pw@db/x, a git remote
 * with a token as its password, redis://:pw@cache). The user part ends at
 * '@'; a '/', '?', '#' or a space first means there is none. */
static bool value_holds_url_password(const char *v)
{
	for (size_t i = 0; v[i]; i++) {
		if (v[i] != ':' || v[i + 1] != '/' || v[i + 2] != '/')
			continue;
		const char *u = v + i + 3, *colon = NULL;
		for (; *u && *u != '@' && *u != '/' && *u != '?' && *u != '#' && *u != ' '; u++)
			if (*u == ':' && !colon)
				colon = u;
		if (*u == '@' && colon && colon + 1 < u)
			return true;
	}
	return false;
}

/* The first characters of the table's prefixes (a test checks it). */
static bool may_start_token(char c)
{
	switch (c) {
	case 'g': case 's': case 'x': case 'h': case 'n': case 'p': case 'r': case 'A': case '-':
		return true;
	default:
		return false;
	}
}

bool cf_env_may_start_token(char c)
{
	return may_start_token(c);
}

/* Whether a token of the table starts anywhere in V where a token can start
 * (at the start, or after a character no token holds): a value that is a
 * token, and one that holds it (https://x:ghp_...@github.com/, "Bearer
 * sk-ant-..."). One pass; the first characters of the prefixes are few. */
static bool value_holds_token(const char *v)
{
	for (size_t i = 0; v[i]; i++) {
		if ((i && token_char(v[i - 1])) || !may_start_token(v[i]))
			continue;
		for (size_t r = 0; r < cf_env_value_count; r++)
			if (v[i] == cf_env_value_table[r].prefix[0] && token_at(&cf_env_value_table[r], v + i))
				return true;
	}
	return false;
}

/* A table pattern against the name U (LEN bytes), letters of either case. */
static bool shape_matches(const struct cf_env_pattern_row *row, const char *u, size_t len)
{
	size_t k = row->len;
	if (k > len)
		return false;
	switch (row->shape) {
	case CF_ENV_ENDS:
		return same_at(row->word, k, u, len - k);
	case CF_ENV_STARTS:
		return same_at(row->word, k, u, 0);
	default:
		for (size_t at = 0; at + k <= len; at++)
			if (upper(u[at]) == row->word[0] && same_at(row->word, k, u, at))
				return true;
		return false;
	}
}

/* Every known name and every withholding pattern holds one of KEY, TOKEN
 * (a K), PASSW, PWD (a W), SECRET, CREDENTIALS (CRE), SESSION (SESS), AUTH
 * (tests/common/test_secret_env.c checks it of the tables): a name with none
 * of them is no known name and matches no pattern. One pass, most ordinary
 * names stop here. */
static bool may_be_named_secret(const char *u, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		switch (upper(u[i])) {
		case 'K':
		case 'W':
			return true;
		case 'C':
			if (i + 2 < n && upper(u[i + 1]) == 'R' && upper(u[i + 2]) == 'E')
				return true;
			break;
		case 'S':
			if (i + 3 < n && upper(u[i + 1]) == 'E' && upper(u[i + 2]) == 'S' &&
			    upper(u[i + 3]) == 'S')
				return true;
			break;
		case 'A':
			if (i + 3 < n && upper(u[i + 1]) == 'U' && upper(u[i + 2]) == 'T' &&
			    upper(u[i + 3]) == 'H')
				return true;
			break;
		default:
			break;
		}
	}
	return false;
}

bool cf_env_name_may_be_secret(const char *name)
{
	return may_be_named_secret(name, cf_env_name_len(name));
}

/* This runs for every variable of every launch: a name without the words
 * skips the name tables, each known name is compared only when its length is
 * the name's, each table pattern is one comparison or one search. Names of
 * any length, compared in place. */
enum cf_env_why cf_env_secret(const char *entry, const struct cf_env_rules *r)
{
	size_t len = cf_env_name_len(entry);
	const char *value = entry[len] ? entry + len + 1 : "";
	for (size_t i = 0; r && i < r->n_keep; i++)
		if (name_is(r->keep[i], entry, len))
			return CF_ENV_PASS;
	for (size_t i = 0; i < cf_env_pattern_count; i++)
		if (cf_env_pattern_table[i].not_secret && shape_matches(&cf_env_pattern_table[i], entry, len))
			return CF_ENV_PASS;
	for (size_t i = 0; r && i < r->n_deny; i++)
		if (cf_env_glob(r->deny[i], entry, len))
			return CF_ENV_USER;
	bool named = may_be_named_secret(entry, len);
	for (size_t i = 0; named && i < cf_env_name_count; i++)
		if (cf_env_name_table[i].len == len && same_at(cf_env_name_table[i].name, len, entry, 0))
			return CF_ENV_NAME;
	for (size_t i = 0; named && i < cf_env_pattern_count; i++)
		if (!cf_env_pattern_table[i].not_secret &&
		    shape_matches(&cf_env_pattern_table[i], entry, len))
			return CF_ENV_PATTERN;
	if (value_holds_token(value))
		return CF_ENV_VALUE;
	return value_holds_url_password(value) ? CF_ENV_URL : CF_ENV_PASS;
}

const char *cf_env_why_word(enum cf_env_why why)
{
	switch (why) {
	case CF_ENV_NAME:
		return "known name";
	case CF_ENV_PATTERN:
		return "name pattern";
	case CF_ENV_URL:
		return "value holds a URL with a password";
	case CF_ENV_VALUE:
		return "value looks like a token";
	case CF_ENV_USER:
		return "--deny-env";
	default:
		return "passes";
	}
}

/* ---- normal context ---- */

bool cf_env_rule_valid(const char *s, bool pattern)
{
	bool word = false;
	if (!s || !*s)
		return false;
	for (const char *p = s; *p; p++) {
		if (*p == '*' && pattern)
			continue;
		if (!token_char(*p) || *p == '-')
			return false;
		word = true;
	}
	return word;
}

int cf_env_move_secrets(char **env, const struct cf_env_rules *r, unsigned long lo,
			unsigned long hi)
{
	for (size_t i = 0; env && env[i]; i++) {
		unsigned long at = (unsigned long)env[i];
		if (at < lo || at >= hi || cf_env_secret(env[i], r) == CF_ENV_PASS)
			continue;
		char *copy = strdup(env[i]);
		if (!copy)
			return -ENOMEM;
		char *old = env[i];
		env[i] = copy;
		memset(old, 0, strlen(old));
	}
	return 0;
}

size_t cf_env_drop_secrets(char **env, const struct cf_env_rules *r, unsigned long lo,
			   unsigned long hi)
{
	size_t k = 0, dropped = 0;
	for (size_t i = 0; env && env[i]; i++) {
		char *e = env[i];
		if (cf_env_secret(e, r) == CF_ENV_PASS) {
			env[k++] = e;
			continue;
		}
		dropped++;
		unsigned long at = (unsigned long)e;
		if (at >= lo && at < hi)
			memset(e, 0, strlen(e));
	}
	if (env)
		env[k] = NULL;
	return dropped;
}
