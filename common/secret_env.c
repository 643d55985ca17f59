/* The secret environment variables (secret_env.h). Each known name, name
 * word and keep row says where it comes from: the tool's own documentation
 * of the variable it reads, or the public rule set that names it. The value
 * shapes are in env_shapes.c. */
#include "env_memo.h"
#include "secret_env.h"
#include "env_shapes.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define KNOWN(name, holds, source) { name, sizeof name - 1, holds, source }
#define STARTS(w, holds) { w "*", w, sizeof w - 1, holds, false }
#define NOT_SECRET(w, holds) { w "*", w, sizeof w - 1, holds, true }

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
	/* What is ours, and names the rules would catch that hold no secret. */
	NOT_SECRET("CREDFENCE_", "credfence's own options"),
	NOT_SECRET("PASSWORD_STORE_", "pass(1) settings: directories, key ids, timeouts"),
	/* git's GIT_CONFIG_COUNT, GIT_CONFIG_KEY_<n>, GIT_CONFIG_VALUE_<n>
	 * (git-config(1), ENVIRONMENT): a key's name, and git dies when one of
	 * the count is missing. */
	NOT_SECRET("GIT_CONFIG_KEY_", "git configuration key names"),
	/* Terraform: TF_TOKEN_<host> (developer.hashicorp.com/terraform/cli/config/
	 * config-file#environment-variable-credentials); 1Password CLI v1:
	 * OP_SESSION_<account>, where SESSION is not the last word. */
	STARTS("TF_TOKEN_", "Terraform registry token"),
	STARTS("OP_SESSION_", "1Password CLI session token"),
};

const size_t cf_env_pattern_count = sizeof cf_env_pattern_table / sizeof *cf_env_pattern_table;

/* The words the word rules look for, one bit each: a name holds a rule's
 * word only if it holds the rule's anchor (cf_env_anchors). */
enum {
	A_PASS = 1u << 0, A_PW = 1u << 1, A_SECRET = 1u << 2, A_TOKEN = 1u << 3,
	A_KEY = 1u << 4, A_AUTH = 1u << 5, A_PAT = 1u << 6, A_HOOK = 1u << 7,
	A_COOKIE = 1u << 8, A_SESSION = 1u << 9, A_DSN = 1u << 10, A_CONN = 1u << 11,
	A_CRED = 1u << 12, A_BEARER = 1u << 13, A_JWT = 1u << 14, A_SIG = 1u << 15,
};

/* gitleaks/gitleaks config/gitleaks.toml, rule generic-api-key: the words
 * of a name that holds a secret ("access", "auth", "api", "credential",
 * "creds", "key", "passw(or)?d", "secret", "token"). */
#define GL_GENERIC "gitleaks/gitleaks config/gitleaks.toml, rule generic-api-key (keywords)"
#define GL_RULE(id) "gitleaks/gitleaks config/gitleaks.toml, rule " id
#define W(word, at, anchor, holds, source) { word, sizeof word - 1, at, false, false, false, false, anchor, holds, source }
#define W_URL(word, at, anchor, holds, source) { word, sizeof word - 1, at, false, false, true, false, anchor, holds, source }
#define W_KEYS(word, anchor, holds, source) { word, sizeof word - 1, CF_WORD_PAIR, false, true, false, false, anchor, holds, source }
#define W_LAST(word, plural, anchor, holds, source) { word, sizeof word - 1, CF_WORD_IS, true, plural, false, false, anchor, holds, source }
#define W_PARAM(word, anchor, holds, source) { word, sizeof word - 1, CF_WORD_IS, true, false, false, true, anchor, holds, source }

const struct cf_env_word_row cf_env_word_table[] = {
	/* Anywhere in the name, with any prefix or suffix. */
	W("PASSWORD", CF_WORD_HOLDS, A_PASS, "a password", GL_GENERIC),
	W("PASSWD", CF_WORD_HOLDS, A_PASS, "a password", GL_GENERIC),
	W("PASSPHRASE", CF_WORD_HOLDS, A_PASS, "a passphrase",
	  "BORG_PASSPHRASE, https://borgbackup.readthedocs.io/en/stable/usage/general.html#environment-variables"),
	/* A word of its own: not BYPASS, ASKPASS (a program), PGPASSFILE (a path). */
	W("PASS", CF_WORD_IS, A_PASS, "a password",
	  "RABBITMQ_DEFAULT_PASS, https://hub.docker.com/_/rabbitmq; DB_PASS, SMTP_PASS (issue 35)"),
	W("PWD", CF_WORD_IS, A_PW, "a password",
	  "MYSQL_PWD, https://dev.mysql.com/doc/refman/8.0/en/environment-variables.html; "
	  GL_RULE("database-password") " (pwd)"),
	W("PW", CF_WORD_IS, A_PW, "a password", "LDAP_BIND_PW, ADMIN_PW: PWD, shortened"),
	W("SECRET", CF_WORD_HOLDS, A_SECRET, "a secret", GL_GENERIC),
	/* A word ending in TOKEN (AUTHTOKEN, ACCESSTOKEN), not TOKENIZERS or
	 * MAX_TOKENS (a count). */
	W("TOKEN", CF_WORD_ENDS, A_TOKEN, "a token", GL_GENERIC),
	W("PAT", CF_WORD_IS, A_PAT, "a personal access token",
	  "AZURE_DEVOPS_EXT_PAT, https://learn.microsoft.com/en-us/azure/devops/cli/log-in-via-pat"),
	W("CREDENTIAL", CF_WORD_HOLDS, A_CRED, "credentials", GL_GENERIC),
	W("CREDS", CF_WORD_IS, A_CRED, "credentials", GL_GENERIC),
	W_URL("WEBHOOK", CF_WORD_HOLDS, A_HOOK, "a webhook URL (its path is the secret)",
	      "https://api.slack.com/messaging/webhooks; " GL_RULE("slack-webhook-url")),
	W("COOKIE", CF_WORD_HOLDS, A_COOKIE, "a cookie (a session's credential)",
	  GL_RULE("gitlab-session-cookie")),
	W_URL("DSN", CF_WORD_IS, A_DSN, "a data source name (with its password)",
	      "GitHub secret scanning, connection strings: "
	      "https://docs.github.com/en/code-security/reference/secret-security/supported-secret-scanning-patterns"),
	W_URL("CONNECTION STRING", CF_WORD_PAIR, A_CONN, "a connection string (with its password)",
	      "AZURE_STORAGE_CONNECTION_STRING, https://learn.microsoft.com/en-us/azure/storage/common/storage-configure-connection-string"),
	W_URL("CONNECTION STRINGS", CF_WORD_PAIR, A_CONN, "connection strings (.NET ConnectionStrings__*)",
	      "https://learn.microsoft.com/en-us/aspnet/core/fundamentals/configuration/#connection-string-prefixes"),
	W_URL("CONN STR", CF_WORD_PAIR, A_CONN, "a connection string", "CONNECTION STRING, shortened"),
	W("BEARER", CF_WORD_IS, A_BEARER, "a bearer token", GL_RULE("curl-auth-header")),
	W("AUTHORIZATION", CF_WORD_IS, A_AUTH, "an Authorization header's value", GL_RULE("curl-auth-header")),
	/* KEY after a word that says which key, anywhere (API_KEY_PROD), or as
	 * one word (APIKEY, TS_AUTHKEY); and their plurals. */
	W_KEYS("API KEY", A_KEY, "an API key", GL_GENERIC),
	W_KEYS("ACCESS KEY", A_KEY, "an access key", GL_GENERIC),
	W_KEYS("SECRET KEY", A_KEY, "a secret key", GL_GENERIC),
	W_KEYS("PRIVATE KEY", A_KEY, "a private key", GL_RULE("private-key")),
	W_KEYS("PRIV KEY", A_KEY, "a private key", GL_RULE("private-key")),
	W_KEYS("MASTER KEY", A_KEY, "a master key",
	       "RAILS_MASTER_KEY, https://guides.rubyonrails.org/security.html#custom-credentials"),
	W_KEYS("SIGNING KEY", A_KEY, "a signing key", "SIGNING_KEY (issue 35); " GL_RULE("mailgun-signing-key")),
	W_KEYS("SIGN KEY", A_KEY, "a signing key", "SIGNING KEY, shortened"),
	W_KEYS("ENCRYPTION KEY", A_KEY, "an encryption key",
	       "ENCRYPTION_KEY (issue 35); " GL_RULE("flutterwave-encryption-key")),
	W_KEYS("ENCRYPT KEY", A_KEY, "an encryption key", "ENCRYPTION KEY, shortened"),
	W_KEYS("CRYPT KEY", A_KEY, "an encryption key", "ENCRYPTION KEY, shortened"),
	W_KEYS("AUTH KEY", A_KEY, "an auth key", "TS_AUTHKEY, https://tailscale.com/kb/1282/docker"),
	W_KEYS("SESSION KEY", A_KEY, "a session key", GL_GENERIC),
	W_KEYS("LICENSE KEY", A_KEY, "a license key", GL_RULE("maxmind-license-key")),
	W_KEYS("HMAC KEY", A_KEY, "an HMAC key", GL_GENERIC),
	W_KEYS("JWT KEY", A_KEY, "a JWT signing key", GL_RULE("jwt")),
	/* Yarn's npmAuthIdent: "user:password" (https://yarnpkg.com/configuration/yarnrc#npmAuthIdent). */
	W_KEYS("AUTH IDENT", A_AUTH, "user and password", "YARN_NPM_AUTH_IDENT, https://yarnpkg.com/configuration/yarnrc#npmAuthIdent"),
	W_KEYS("APP KEY", A_KEY, "an application key",
	       "Laravel's APP_KEY, https://laravel.com/docs/encryption#configuration; Datadog's DD_APP_KEY"),
	W_KEYS("DEPLOY KEY", A_KEY, "a deploy key",
	       "https://docs.github.com/en/authentication/connecting-to-github-with-ssh/managing-deploy-keys"),
	W_KEYS("ADMIN KEY", A_KEY, "an admin key", "ALGOLIA_ADMIN_KEY, " GL_RULE("algolia-api-key")),
	W_KEYS("ROLE KEY", A_KEY, "a service role key", "SUPABASE_SERVICE_ROLE_KEY, https://supabase.com/docs/guides/api/api-keys"),
	W_KEYS("ACCOUNT KEY", A_KEY, "a storage account key",
	       "Azure's AccountKey, " "trufflesecurity/trufflehog pkg/detectors/azure_storage/storage.go"),
	W_KEYS("STORAGE KEY", A_KEY, "a storage account key",
	       "AZURE_STORAGE_KEY, trufflesecurity/trufflehog pkg/detectors/azure_storage/storage.go"),
	W_KEYS("CONSUMER KEY", A_KEY, "an OAuth consumer key", GL_RULE("twitter-api-key")),
	W_KEYS("SERVER KEY", A_KEY, "a server key", GL_GENERIC),
	/* A bare KEY is no rule of its own: X_KEY is as often a key file's path
	 * (TLS_KEY=/etc/ssl/private/x.key) as a key; its value is judged (LLM_KEY
	 * holding sk-or-v1-... is withheld by its shape). */
	/* As the last word only: npm's _auth, REDISCLI_AUTH, BW_SESSION; not
	 * SSH_AUTH_SOCK, OS_AUTH_URL, SESSION_MANAGER. */
	W_LAST("AUTH", false, A_AUTH, "credentials",
	       GL_GENERIC "; npm's _auth (npm/cli 6e9f04b); REDISCLI_AUTH, https://redis.io/docs/latest/develop/tools/cli/"),
	W_LAST("SESSION", false, A_SESSION, "a session token",
	       "BW_SESSION, https://bitwarden.com/help/cli/#using-a-session-key"),
	W_LAST("JWT", false, A_JWT, "a JSON Web Token", GL_RULE("jwt")),
	/* In a value's parameters only, as their last word: a bare key
	 * (?key=AIza..., the Maps API's), and a presigned URL's signature, its
	 * credential (Azure SAS sig=, https://learn.microsoft.com/en-us/training/modules/
	 * configure-storage-security/4-identify-uri-sas-parameters; AWS
	 * X-Amz-Signature=, https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html). */
	W_PARAM("KEY", A_KEY, "a key (?key=AIza..., ?api-key=)", GL_GENERIC),
	W_PARAM("SIG", A_SIG, "a signature (a presigned URL's credential)", "Azure SAS"),
	W_PARAM("SIGNATURE", A_SIG, "a signature (a presigned URL's credential)", "AWS SigV4 query"),
};

const size_t cf_env_word_count = sizeof cf_env_word_table / sizeof *cf_env_word_table;

/* gitleaks' generic-api-key allowlist holds the same idea: key_id,
 * key_name, key_size, token_endpoint, token_url, key_file, token_file,
 * secret_name, credentials_id... (config/gitleaks.toml). */
#define D(word, why) { word, sizeof word - 1, false, why }
#define D_URL(word, why) { word, sizeof word - 1, true, why }

const struct cf_env_descriptor_row cf_env_descriptor_table[] = {
	/* where the secret is */
	D("DIR", "a directory"), D("DIRS", "directories"), D("DIRECTORY", "a directory"),
	D("FILE", "a file (DB_PASSWORD_FILE, Docker's *_FILE convention)"), D("FILES", "files"),
	D("FILENAME", "a file"), D("PATH", "a path"), D("PATHS", "paths"), D("SOCK", "a socket"),
	D("SOCKET", "a socket"), D("HOME", "a directory"), D("FD", "a descriptor"),
	D("JAR", "a cookie jar (a file)"), D("STORE", "where secrets are kept"),
	/* what gets it */
	D("CMD", "a command"), D("COMMAND", "a command"), D("HELPER", "a program"),
	D("PROGRAM", "a program"), D("PROVIDER", "what provides it"), D("BACKEND", "where it is kept"),
	D("DRIVER", "how it is kept"), D("ENGINE", "how it is kept"),
	/* a setting of it */
	D("ID", "an identifier (KEY_ID, SESSION_ID)"), D("IDS", "identifiers"), D("NAME", "a name"),
	D("NAMES", "names"), D("TYPE", "a kind"), D("KIND", "a kind"), D("MODE", "a mode"),
	D("METHOD", "a method"), D("ALGORITHM", "an algorithm"), D("ALG", "an algorithm"),
	D("FORMAT", "a format"), D("VERSION", "a version"), D("LENGTH", "a length"), D("LEN", "a length"),
	D("SIZE", "a size"), D("BITS", "a size"), D("LIMIT", "a limit"), D("TTL", "a lifetime"),
	D("TIMEOUT", "a lifetime"), D("EXPIRY", "a lifetime"), D("EXPIRES", "a lifetime"),
	D("EXPIRATION", "a lifetime"), D("LIFETIME", "a lifetime"), D("AGE", "a lifetime"),
	D("DOMAIN", "a cookie's domain"), D("SECURE", "a cookie's flag"), D("SAMESITE", "a cookie's flag"),
	D("HTTPONLY", "a cookie's flag"), D("ENABLED", "a switch"), D("ENABLE", "a switch"),
	D("DISABLED", "a switch"), D("DISABLE", "a switch"), D("REQUIRED", "a switch"),
	D("REQUIRE", "a switch"), D("HOST", "a host"), D("PORT", "a port"),
	/* where it is used: not for a secret whose value is a URL (a webhook) */
	D_URL("URL", "an endpoint (ACTIONS_ID_TOKEN_REQUEST_URL, OS_AUTH_URL)"),
	D_URL("URI", "an endpoint"), D_URL("ENDPOINT", "an endpoint"), D_URL("ADDR", "an address"),
	D_URL("ADDRESS", "an address"),
};

const size_t cf_env_descriptor_count = sizeof cf_env_descriptor_table / sizeof *cf_env_descriptor_table;

const struct cf_env_keep_row cf_env_keep_table[] = {
	{"PWD", "the shell's working directory (POSIX sh)"},
	{"DESKTOP_SESSION", "the desktop session's name (display managers)"},
	{"WT_SESSION", "Windows Terminal's session GUID (WSL)"},
	{"KONSOLE_DBUS_SESSION", "Konsole's D-Bus object path"},
	{"STARSHIP_SESSION_KEY", "the starship prompt's random session number"},
	{"NPM_CONFIG_ALWAYS_AUTH", "npm's always-auth switch (true or false)"},
};

const size_t cf_env_keep_count = sizeof cf_env_keep_table / sizeof *cf_env_keep_table;

/* ---- between fork and exec from here on: no allocation, no libc state ---- */

static char upper(char c)
{
	return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
}

static bool is_upper(char c)
{
	return c >= 'A' && c <= 'Z';
}

static bool is_lower(char c)
{
	return c >= 'a' && c <= 'z';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
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

/* The user's patterns are mostly WORD, *WORD, WORD* or *WORD*: a comparison
 * at the end, at the start, or a search, each linear; a pattern with a '*'
 * inside takes the general way. */
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

#define UP(c) ((c) >= 'a' && (c) <= 'z' ? (c) - 32 : (c))
#define UP4(b) UP(b), UP((b) + 1), UP((b) + 2), UP((b) + 3)
#define UP16(b) UP4(b), UP4((b) + 4), UP4((b) + 8), UP4((b) + 12)
#define UP64(b) UP16(b), UP16((b) + 16), UP16((b) + 32), UP16((b) + 48)
static const unsigned char upper_of[256] = {UP64(0), UP64(64), UP64(128), UP64(192)};

/* The anchors, upper case. PAT followed by H is none: every *PATH
 * variable would hold it (PAT_TOKEN, GITHUB_PAT and githubPat do). */
const struct cf_env_anchor_row cf_env_anchor_table[] = {
	{"PASS", A_PASS}, {"PAT", A_PAT}, {"PW", A_PW}, {"SESS", A_SESSION}, {"SECR", A_SECRET},
	{"SIG", A_SIG}, {"JWT", A_JWT}, {"BEAR", A_BEARER}, {"TOKE", A_TOKEN}, {"KEY", A_KEY},
	{"AUTH", A_AUTH}, {"HOOK", A_HOOK}, {"COOK", A_COOKIE}, {"CONN", A_CONN}, {"CRED", A_CRED},
	{"DSN", A_DSN},
};

const size_t cf_env_anchor_count = sizeof cf_env_anchor_table / sizeof *cf_env_anchor_table;

/* Each letter's code in cf_env_anchor_seconds, either case: A 1 to Z 26;
 * '=' and NUL (a name's end) CF_ENV_ANCHOR_END; any other byte 0. */
#define LC(c) (((c) >= 'A' && (c) <= 'Z') ? (c) - 'A' + 1 : ((c) >= 'a' && (c) <= 'z') ? (c) - 'a' + 1 \
	       : ((c) == '=' || (c) == 0) ? CF_ENV_ANCHOR_END : 0)
#define LC4(b) LC(b), LC((b) + 1), LC((b) + 2), LC((b) + 3)
#define LC16(b) LC4(b), LC4((b) + 4), LC4((b) + 8), LC4((b) + 12)
#define LC64(b) LC16(b), LC16((b) + 16), LC16((b) + 32), LC16((b) + 48)
static const unsigned char letter_code[256] = {LC64(0), LC64(64), LC64(128), LC64(192)};

/* For each anchor's first letter, a bit for each of their second letters
 * (a test checks it against cf_env_anchor_table). */
#define L2(c) (1u << ((c) - 'A' + 1))
const unsigned cf_env_anchor_seconds[CF_ENV_ANCHOR_END + 1] = {
	['A' - 'A' + 1] = L2('U'),
	['B' - 'A' + 1] = L2('E'),
	['C' - 'A' + 1] = L2('O') | L2('R'),
	['D' - 'A' + 1] = L2('S'),
	['H' - 'A' + 1] = L2('O'),
	['J' - 'A' + 1] = L2('W'),
	['K' - 'A' + 1] = L2('E'),
	['P' - 'A' + 1] = L2('A') | L2('W'),
	['S' - 'A' + 1] = L2('E') | L2('I'),
	['T' - 'A' + 1] = L2('O'),
};

/* The anchors that start at S, of a name with LEFT bytes from S (SIZE_MAX:
 * it ends at a byte that is not a letter). The first two letters start
 * one. */
static unsigned anchors_at(const char *s, size_t left)
{
	unsigned a = 0;
	unsigned char c0 = upper_of[(unsigned char)s[0]];
	for (size_t i = 0; i < cf_env_anchor_count; i++) {
		const char *w = cf_env_anchor_table[i].word;
		if ((unsigned char)w[0] != c0)
			continue;
		size_t k = 1;
		while (w[k] && k < left && upper_of[(unsigned char)s[k]] == (unsigned char)w[k])
			k++;
		if (w[k] || (cf_env_anchor_table[i].bit == A_PAT && k < left && upper_of[(unsigned char)s[k]] == 'H'))
			continue;
		a |= cf_env_anchor_table[i].bit;
	}
	return a;
}

/* One pass: a pair of letters that starts no anchor (most of them) costs a
 * look-up; the anchors are compared where one may start. */
unsigned cf_env_anchors(const char *u, size_t n)
{
	unsigned a = 0, prev = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned x = letter_code[(unsigned char)u[i]];
		if (cf_env_anchor_seconds[prev] >> x & 1)
			a |= anchors_at(u + i - 1, n - i + 1);
		prev = x;
	}
	return a;
}

/* The length of ENTRY's name in *LEN, and its anchors, in the same pass. */
static unsigned entry_anchors(const char *entry, size_t *len)
{
	unsigned a = 0, prev = 0, x;
	size_t n = 0;
	while ((x = letter_code[(unsigned char)entry[n]]) != CF_ENV_ANCHOR_END) {
		if (cf_env_anchor_seconds[prev] >> x & 1)
			a |= anchors_at(entry + n - 1, SIZE_MAX);
		prev = x;
		n++;
	}
	*len = n;
	return a;
}

/* A word of a name: [S, S + N), N less the digits that end it (0 for a
 * word of digits only). */
struct word {
	const char *s;
	size_t n;
};

static bool alnum(char c)
{
	return is_upper(c) || is_lower(c) || is_digit(c);
}

/* The word that starts at or after *AT in NAME (LEN bytes), or false. Words
 * end where a character is not a letter or digit, where a lower case letter
 * or a digit is followed by an upper case one (authToken, OAUTH2TOKEN), and
 * before the last of a run of upper case letters followed by a lower case
 * one (APIKey: API Key). */
static bool next_word(const char *name, size_t len, size_t *at, struct word *w)
{
	size_t i = *at;
	while (i < len && !alnum(name[i]))
		i++;
	if (i >= len)
		return false;
	size_t j = i + 1;
	for (; j < len && alnum(name[j]); j++) {
		char a = name[j - 1], b = name[j];
		if (is_upper(b) && (is_lower(a) || is_digit(a)))
			break;
		if (is_upper(b) && is_upper(a) && j + 1 < len && is_lower(name[j + 1]))
			break;
	}
	*at = j;
	size_t n = j - i;
	while (n && is_digit(name[i + n - 1]))
		n--;
	w->s = name + i;
	w->n = n;
	return true;
}

/* Whether word W is WANT[0, K), letters of either case (PLURAL: or it and an S). */
static bool word_is(const struct word *w, const char *want, size_t k, bool plural)
{
	if (w->n == k + 1 && plural && upper(w->s[k]) == 'S')
		return same_at(want, k, w->s, 0);
	return w->n == k && same_at(want, k, w->s, 0);
}

static bool word_ends(const struct word *w, const char *want, size_t k)
{
	return w->n >= k && same_at(want, k, w->s, w->n - k);
}

static bool word_holds(const struct word *w, const char *want, size_t k)
{
	for (size_t at = 0; at + k <= w->n; at++)
		if (upper(w->s[at]) == want[0] && same_at(want, k, w->s, at))
			return true;
	return false;
}

/* The length of the second word of the pair PAIR (LEN bytes) when W less
 * its last SKIP letters ends in it, or 0. */
static size_t second_at_end(const char *pair, size_t len, const struct word *w, size_t skip)
{
	size_t n = w->n - skip, i = len;
	for (; pair[i - 1] != ' '; i--, n--)
		if (!n || upper(w->s[n - 1]) != pair[i - 1])
			return 0;
	return len - i;
}

/* A CF_WORD_PAIR row "A B": PREV is A and W is B (or Bs), or W ends in AB
 * (or ABs). Either way W ends in B, or in B and an S: most words end in
 * neither, and are passed over first. */
static bool pair_matches(const char *pair, size_t len, const struct word *prev, const struct word *w,
			 bool plural)
{
	size_t k2 = second_at_end(pair, len, w, 0);
	if (!k2 && plural && upper(w->s[w->n - 1]) == 'S')
		k2 = second_at_end(pair, len, w, 1);
	if (!k2)
		return false;
	size_t k1 = len - k2 - 1;
	const char *b = pair + k1 + 1;
	if (prev && prev->n && word_is(prev, pair, k1, false) && word_is(w, b, k2, plural))
		return true;
	size_t n = w->n;
	if (plural && n > k1 + k2 && upper(w->s[n - 1]) == 'S' && same_at(b, k2, w->s, n - 1 - k2) &&
	    same_at(pair, k1, w->s, n - 1 - k2 - k1))
		return true;
	return n >= k1 + k2 && same_at(b, k2, w->s, n - k2) && same_at(pair, k1, w->s, n - k2 - k1);
}

static bool row_matches(const struct cf_env_word_row *row, const struct word *prev, const struct word *w)
{
	size_t k = row->len;
	switch (row->at) {
	case CF_WORD_IS:
		return word_is(w, row->word, k, row->plural);
	case CF_WORD_ENDS:
		return word_ends(w, row->word, k);
	case CF_WORD_HOLDS:
		return word_holds(w, row->word, k);
	default:
		return pair_matches(row->word, k, prev, w, row->plural);
	}
}

static const struct cf_env_descriptor_row *descriptor(const struct word *w)
{
	for (size_t i = 0; i < cf_env_descriptor_count; i++) {
		const struct cf_env_descriptor_row *d = &cf_env_descriptor_table[i];
		if (d->len == w->n && upper(w->s[0]) == d->word[0] && word_is(w, d->word, d->len, false))
			return d;
	}
	return NULL;
}

/* A key or token said to be public is not a secret: KITTY_PUBLIC_KEY,
 * STRIPE_PUBLISHABLE_KEY, MAPBOX_PUBLIC_TOKEN (gitleaks' generic-api-key
 * allowlist: pub(?:lic)?[_.-]?key, public[_.-]?token). */
static bool is_public(const struct word *w)
{
	return w && w->n && (word_is(w, "PUBLIC", 6, false) || word_is(w, "PUB", 3, false) ||
			     word_is(w, "PUBLISHABLE", 11, false));
}

/* PREV and PREV2: the two words before (a pair's two words: PUBLIC API KEY). */
static bool said_public(const struct word *prev, const struct word *prev2,
			const struct cf_env_word_row *row)
{
	size_t k = row->len;
	bool key = k >= 3 && same_at("KEY", 3, row->word, k - 3);
	bool token = k >= 5 && same_at("TOKEN", 5, row->word, k - 5);
	return (key || token) && (is_public(prev) || (row->at == CF_WORD_PAIR && is_public(prev2)));
}

/* The rows of the word table, one bit each, in WORD_ROW_SETS words. */
#define WORD_ROWS (sizeof cf_env_word_table / sizeof *cf_env_word_table)
#define WORD_ROW_SETS ((WORD_ROWS + 63) / 64)

/* The words left to right: a word of a row withholds unless a descriptor
 * comes after it; a last-word row only as the last word (digits aside).
 * Only the rows of the name's anchors are tried (the table in order: the
 * first row of each kind that matches a word is the one that counts). */
static const struct cf_env_word_row *name_words(const char *name, size_t len, bool param,
						 unsigned anchors)
{
	if (!anchors)
		return NULL;
	unsigned long long rows[WORD_ROW_SETS] = {0};
	for (size_t i = 0; i < WORD_ROWS; i++) {
		const struct cf_env_word_row *row = &cf_env_word_table[i];
		if ((anchors & row->anchor) && !(row->param && !param))
			rows[i / 64] |= 1ull << (i % 64);
	}
	const struct cf_env_word_row *pending = NULL, *last = NULL;
	struct word w, prev = {NULL, 0}, prev2 = {NULL, 0};
	size_t at = 0;
	bool have_prev = false;
	while (next_word(name, len, &at, &w)) {
		if (!w.n)
			continue; /* digits only: API_KEY_2 */
		/* A descriptor matters only after a secret's word (it matches no
		 * row itself). */
		const struct cf_env_descriptor_row *d = pending ? descriptor(&w) : NULL;
		last = NULL;
		if (d) {
			if (!(pending->url && d->url))
				pending = NULL;
		} else {
			const struct cf_env_word_row *strong = NULL;
			const struct word *before = have_prev ? &prev : NULL;
			/* A word that is a row's, ends in it or in its pair's second
			 * word ends in its last letter (or an S, plural). */
			char z = upper(w.s[w.n - 1]);
			for (size_t set = 0; set < WORD_ROW_SETS && !(strong && last); set++)
				for (unsigned long long m = rows[set]; m && !(strong && last); m &= m - 1) {
					size_t i = set * 64 + (size_t)__builtin_ctzll(m);
					const struct cf_env_word_row *row = &cf_env_word_table[i];
					if ((row->last ? last : strong) ||
					    (row->at != CF_WORD_HOLDS && z != row->word[row->len - 1] && !(row->plural && z == 'S')) ||
					    !row_matches(row, before, &w) || said_public(before, &prev2, row))
						continue;
					if (row->last)
						last = row;
					else
						strong = row;
				}
			if (strong)
				pending = strong;
		}
		prev2 = prev;
		prev = w;
		have_prev = true;
	}
	return pending ? pending : last;
}

const struct cf_env_word_row *cf_env_name_words(const char *name, size_t len, bool param)
{
	return name_words(name, len, param, cf_env_anchors(name, len));
}

enum cf_env_why cf_env_reason_set(struct cf_env_reason *out, enum cf_env_why why, const char *rule,
				  const char *holds)
{
	if (out) {
		out->why = why;
		out->rule = rule;
		out->holds = holds;
	}
	return why;
}

/* A table pattern (a prefix) against the name U (LEN bytes). */
static bool prefix_of(const struct cf_env_pattern_row *row, const char *u, size_t len)
{
	return row->len <= len && same_at(row->word, row->len, u, 0);
}

/* This runs for every variable of every launch: a name without an anchor
 * skips the name tables, a known name is compared only when its length is
 * the name's; the value is scanned once (env_shapes.c). */
enum cf_env_why cf_env_judge(const char *entry, const struct cf_env_rules *r,
			     struct cf_env_reason *out)
{
	size_t len;
	unsigned anchors = entry_anchors(entry, &len);
	const char *value = entry[len] ? entry + len + 1 : "";
	if (out)
		*out = (struct cf_env_reason){CF_ENV_PASS, NULL, NULL};
	for (size_t i = 0; r && i < r->n_keep; i++)
		if (name_is(r->keep[i], entry, len))
			return CF_ENV_PASS;
	for (size_t i = 0; i < cf_env_pattern_count; i++)
		if (cf_env_pattern_table[i].not_secret && upper(entry[0]) == cf_env_pattern_table[i].word[0] &&
		    prefix_of(&cf_env_pattern_table[i], entry, len))
			return CF_ENV_PASS;
	for (size_t i = 0; r && i < r->n_deny; i++)
		if (cf_env_glob(r->deny[i], entry, len))
			return cf_env_reason_set(out, CF_ENV_USER, r->deny[i], r->deny[i]);
	if (anchors) {
		for (size_t i = 0; i < cf_env_name_count; i++)
			if (cf_env_name_table[i].len == len && same_at(cf_env_name_table[i].name, len, entry, 0))
				return cf_env_reason_set(out, CF_ENV_NAME, cf_env_name_table[i].name,
					     cf_env_name_table[i].holds);
		for (size_t i = 0; i < cf_env_pattern_count; i++)
			if (!cf_env_pattern_table[i].not_secret &&
			    prefix_of(&cf_env_pattern_table[i], entry, len))
				return cf_env_reason_set(out, CF_ENV_PATTERN, cf_env_pattern_table[i].pattern,
					     cf_env_pattern_table[i].holds);
		bool kept = false;
		for (size_t i = 0; i < cf_env_keep_count && !kept; i++)
			kept = name_is(cf_env_keep_table[i].name, entry, len);
		const struct cf_env_word_row *w = kept ? NULL : name_words(entry, len, false, anchors);
		if (w)
			return cf_env_reason_set(out, CF_ENV_PATTERN, w->word, w->holds);
	}
	return cf_env_value_secret(value, out);
}

enum cf_env_why cf_env_secret(const char *entry, const struct cf_env_rules *r)
{
	return cf_env_judge(entry, r, NULL);
}

const char *cf_env_why_word(enum cf_env_why why)
{
	switch (why) {
	case CF_ENV_NAME:
		return "known name";
	case CF_ENV_PATTERN:
		return "name rule";
	case CF_ENV_URL:
		return "value holds a secret";
	case CF_ENV_VALUE:
		return "value shape";
	case CF_ENV_USER:
		return "--deny-env";
	default:
		return "passes";
	}
}

/* ---- normal context ---- */

static bool token_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

bool cf_env_rule_valid(const char *s, bool pattern)
{
	bool word = false;
	if (!s || !*s)
		return false;
	for (const char *p = s; *p; p++) {
		if (*p == '*' && pattern)
			continue;
		if (!token_char(*p))
			return false;
		word = true;
	}
	return word;
}

int cf_env_move_secrets(char **env, const struct cf_env_rules *r, const struct cf_env_memo *m,
			unsigned long lo, unsigned long hi)
{
	for (size_t i = 0; env && env[i]; i++) {
		unsigned long at = (unsigned long)env[i];
		if (at < lo || at >= hi)
			continue;
		int v = cf_env_memo_find(m, env[i]);
		if (v >= 0 ? v == 0 : cf_env_secret(env[i], r) == CF_ENV_PASS)
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
