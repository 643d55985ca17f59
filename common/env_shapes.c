/* Secrets in a value (env_shapes.h). Each row says which public rule it
 * comes from; the shapes are those rules' facts (prefix, alphabet, length)
 * in our notation, the matcher is ours. Where a row is wider than its rule
 * (a prefix kept, a length left open), its comment says so. */
#include "env_shapes.h"

#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define GL(id) "gitleaks/gitleaks config/gitleaks.toml, rule " id
#define TH(d) "trufflesecurity/trufflehog pkg/detectors/" d
#define GH_SCAN "https://docs.github.com/en/code-security/reference/secret-security/supported-secret-scanning-patterns"
#define PEM64 GL("private-key") ", base64 of its BEGIN line (RFC 4648), as " GL("jwt-base64") " does for JWTs"

const struct cf_env_shape_row cf_env_shape_table[] = {
	/* '-' */
	{"-----BEGIN{P0,100}?PRIVATE KEY", "PEM private key", GL("private-key")},
	/* '4' */
	{"4b1d{A38}", "ClickHouse Cloud API secret key", GL("clickhouse-cloud-api-secret-key")},
	/* 'A' */
	{"A3-{U6}-{U11}-{U5}-{U5}-{U5}", "1Password secret key", GL("1password-secret-key")},
	{"A3-{U6}-{U6}-{U5}-{U5}-{U5}-{U5}", "1Password secret key", GL("1password-secret-key")},
	{"A3T{U1}{K16}", "AWS access key id", GL("aws-access-token")},
	{"ABIA{K16}", "AWS access key id", GL("aws-access-token")},
	{"ACCA{K16}", "AWS access key id", GL("aws-access-token")},
	{"AGE-SECRET-KEY-1{E58}", "age secret key", GL("age-secret-key")},
	{"AIza{W35}", "Google API key", GL("gcp-api-key")},
	{"AKCp{A69}", "Artifactory API key", GL("artifactory-api-key")},
	{"AKIA{K16}", "AWS access key id", GL("aws-access-token")},
	{"API-{U26}", "Octopus Deploy API key", GL("octopus-deploy-api-key")},
	{"ASIA{K16}", "AWS temporary access key id", GL("aws-access-token")},
	{"ATATT3{q186}", "Atlassian API token", GL("atlassian-api-token")},
	/* 'C' */
	{"CLOJARS_{A60}", "Clojars API token", GL("clojars-api-token")},
	/* 'E' */
	{"EAAA{W22,60}", "Square access token", GL("square-access-token")},
	{"EAAC{A100,}", "Facebook page access token", GL("facebook-page-access-token")},
	{"EAAM{A100,}", "Facebook page access token", GL("facebook-page-access-token")},
	{"EZAK{A54}", "EasyPost API token", GL("easypost-api-token")},
	{"EZTK{A54}", "EasyPost test API token", GL("easypost-test-api-token")},
	/* 'F': the rule's two keys (12 and 32 characters) in one row */
	{"FLWSECK_TEST-{A12,}", "Flutterwave secret key", GL("flutterwave-secret-key")},
	/* 'G' */
	{"GR1348941{W20,}", "GitLab runner registration token", GL("gitlab-rrt")},
	/* 'H' */
	{"HRKU-AA{W58}", "Heroku API key", GL("heroku-api-key-v2")},
	/* 'L': a PEM private key, base64-encoded (a Kubernetes secret's data) */
	{"LS0tLS1CRUdJTiBEU0EgUFJJVkFURSBL{B20,}", "PEM private key, base64", PEM64},
	{"LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtF{B20,}", "PEM private key, base64", PEM64},
	{"LS0tLS1CRUdJTiBFTkNSWVBURUQgUFJJVkFURSBL{B20,}", "PEM private key, base64", PEM64},
	{"LS0tLS1CRUdJTiBPUEVOU1NIIFBSSVZBVEUgS0VZ{B20,}", "PEM private key, base64", PEM64},
	{"LS0tLS1CRUdJTiBQR1AgUFJJVkFURSBLRVkgQkxP{B20,}", "PEM private key, base64", PEM64},
	{"LS0tLS1CRUdJTiBQUklWQVRFIEtF{B20,}", "PEM private key, base64", PEM64},
	{"LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBL{B20,}", "PEM private key, base64", PEM64},
	{"LTAI{A20}", "Alibaba Cloud access key id", GL("alibaba-access-key-id")},
	/* 'P' */
	{"PMAK-{X24}-{X34}", "Postman API token", GL("postman-api-token")},
	/* 'S' */
	{"SG.{S66}", "SendGrid API token", GL("sendgrid-api-token")},
	{"SK{X32}", "Twilio API key", GL("twilio-api-key")},
	/* 'a' */
	{"api_org_{a34}", "Hugging Face organization token", GL("huggingface-organization-api-token")},
	/* 'c' */
	{"cmVmd{A59}", "Artifactory reference token", GL("artifactory-reference-token")},
	/* 'd' */
	{"dapi{h32}", "Databricks API token", GL("databricks-api-token")},
	{"discord.com/api/webhooks/{D18}/{N68}", "Discord webhook URL", TH("discordwebhook")},
	{"doo_v1_{h64}", "DigitalOcean OAuth token", GL("digitalocean-access-token")},
	{"dop_v1_{h64}", "DigitalOcean personal access token", GL("digitalocean-pat")},
	{"dor_v1_{h64}", "DigitalOcean refresh token", GL("digitalocean-refresh-token")},
	{"dp.pt.{A43,}", "Doppler API token", GL("doppler-api-token")},
	{"dt0c01.{A24}.{A64}", "Dynatrace API token", GL("dynatrace-api-token")},
	{"duffel_live_{q43}", "Duffel API token", GL("duffel-api-token")},
	{"duffel_test_{q43}", "Duffel test API token", GL("duffel-api-token")},
	/* 'e' */
	{"eyJrIjoi{A70,}", "Grafana API key", GL("grafana-api-key")},
	{"ey{A17,}.ey{J17,}.", "JSON Web Token", GL("jwt")},
	/* 'f' */
	{"fio-u-{q64}", "Frame.io API token", GL("frameio-api-token")},
	{"fm1a_{B100,}", "Fly.io macaroon token", GL("flyio-access-token")},
	{"fm1r_{B100,}", "Fly.io macaroon token", GL("flyio-access-token")},
	{"fm2_{B100,}", "Fly.io macaroon token", GL("flyio-access-token")},
	{"fo1_{W43}", "Fly.io access token", GL("flyio-access-token")},
	/* 'g': the rules end GitHub's and GitLab's tokens after their length; a
	 * longer run is one token all the same */
	{"ghp_{A36,}", "GitHub personal access token", GL("github-pat")},
	{"gho_{A36,}", "GitHub OAuth token", GL("github-oauth")},
	{"ghr_{A36,}", "GitHub refresh token", GL("github-refresh-token")},
	{"ghs_{A36,}", "GitHub App installation token", GL("github-app-token")},
	{"ghu_{A36,}", "GitHub App user token", GL("github-app-token")},
	{"github_pat_{w82,}", "GitHub fine-grained token", GL("github-fine-grained-pat")},
	{"glagent-{W50,}", "GitLab Kubernetes agent token", GL("gitlab-kubernetes-agent-token")},
	{"glc_{B32,}", "Grafana Cloud API token", GL("grafana-cloud-api-token")},
	{"glcbt-{A1,5}_{W20,}", "GitLab CI/CD job token", GL("gitlab-cicd-job-token")},
	{"gldt-{W20,}", "GitLab deploy token", GL("gitlab-deploy-token")},
	{"glffct-{W20,}", "GitLab feature flag client token", GL("gitlab-feature-flag-client-token")},
	{"glft-{W20,}", "GitLab feed token", GL("gitlab-feed-token")},
	{"glimt-{W25,}", "GitLab incoming mail token", GL("gitlab-incoming-mail-token")},
	{"gloas-{W64,}", "GitLab OAuth application secret", GL("gitlab-oauth-app-secret")},
	{"glpat-{W20,}", "GitLab personal access token", GL("gitlab-pat")},
	{"glptt-{h40,}", "GitLab pipeline trigger token", GL("gitlab-ptt")},
	{"glrt-{W20,}", "GitLab runner token", GL("gitlab-runner-authentication-token")},
	{"glsa_{A32}_{X8}", "Grafana service account token", GL("grafana-service-account-token")},
	{"glsoat-{W20,}", "GitLab SCIM token", GL("gitlab-scim-token")},
	{"gsk_{A52}", "Groq API key", TH("groq/groq.go")},
	/* 'h' */
	{"hf_{a34}", "Hugging Face token", GL("huggingface-access-token")},
	{"hooks.slack.com/services/{B43,}", "Slack webhook URL", GL("slack-webhook-url")},
	{"hooks.slack.com/triggers/{B43,}", "Slack webhook URL", GL("slack-webhook-url")},
	{"hooks.slack.com/workflows/{B43,}", "Slack webhook URL", GL("slack-webhook-url")},
	{"hvb.{W138,300}", "Vault batch token", GL("vault-batch-token")},
	{"hvs.{W90,120}", "Vault service token", GL("vault-service-token")},
	/* 'i' */
	{"ico-{A32}", "Infracost API token", GL("infracost-api-token")},
	/* 'l' */
	{"lin_api_{A40}", "Linear API key", GL("linear-api-key")},
	/* 'n' */
	{"npm_{A36}", "npm access token", GL("npm-access-token")},
	{"ntn_{D11}{A35}", "Notion API token", GL("notion-api-token")},
	/* 'o' */
	{"ops_eyJ{B250,}", "1Password service account token", GL("1password-service-account-token")},
	/* 'p' */
	{"p8e-{A32}", "Adobe client secret", GL("adobe-client-secret")},
	{"pat.{W22}.{A24}.{A20}", "Harness personal access token", GL("harness-api-key")},
	{"pnu_{A36}", "Prefect API token", GL("prefect-api-token")},
	{"pplx-{A48}", "Perplexity API key", GL("perplexity-api-key")},
	{"pscale_oauth_{S32,64}", "PlanetScale OAuth token", GL("planetscale-oauth-token")},
	{"pscale_pw_{S32,64}", "PlanetScale password", GL("planetscale-password")},
	{"pscale_tkn_{S32,64}", "PlanetScale API token", GL("planetscale-api-token")},
	{"pul-{h40}", "Pulumi API token", GL("pulumi-api-token")},
	{"pypi-AgEIcHlwaS5vcmc{W50,}", "PyPI upload token", GL("pypi-upload-token")},
	/* 'r' */
	{"rdme_{L70}", "ReadMe API token", GL("readme-api-token")},
	{"rk_live_{A10,}", "Stripe restricted key", GL("stripe-access-token")},
	{"rk_prod_{A10,}", "Stripe restricted key", GL("stripe-access-token")},
	{"rk_test_{A10,}", "Stripe restricted test key", GL("stripe-access-token")},
	{"rubygems_{h48}", "RubyGems API token", GL("rubygems-api-token")},
	/* 's' */
	{"sat.{W22}.{A24}.{A20}", "Harness service account token", GL("harness-api-key")},
	{"sha256~{W43}", "OpenShift user token", GL("openshift-user-token")},
	{"shippo_live_{X40}", "Shippo API token", GL("shippo-api-token")},
	{"shippo_test_{X40}", "Shippo test API token", GL("shippo-api-token")},
	{"shpat_{X32,}", "Shopify access token", GL("shopify-access-token")},
	{"shpca_{X32,}", "Shopify custom app token", GL("shopify-custom-access-token")},
	{"shppa_{X32,}", "Shopify private app token", GL("shopify-private-app-access-token")},
	{"shpss_{X32,}", "Shopify shared secret", GL("shopify-shared-secret")},
	/* Anthropic: the rules' keys are sk-ant-api03- and sk-ant-admin01- with
	 * 93 characters and "AA"; any longer sk-ant- key (an OAuth token,
	 * sk-ant-oat01-) is the same prefix's. */
	{"sk-ant-admin01-{W95,}", "Anthropic admin API key", GL("anthropic-admin-api-key")},
	{"sk-ant-api03-{W95,}", "Anthropic API key", GL("anthropic-api-key")},
	{"sk-ant-{W32,}", "Anthropic key", GL("anthropic-api-key") " (its prefix)"},
	{"sk-or-v1-{h64}", "OpenRouter API key", TH("openrouter/openrouter.go")},
	/* OpenAI: the rule wants "T3BlbkFJ" inside, at 58 or 74 characters; the
	 * prefix is kept with any 40 or more. */
	{"sk-admin-{W40,}", "OpenAI admin key", GL("openai-api-key") " (its prefix)"},
	{"sk-proj-{W40,}", "OpenAI project API key", GL("openai-api-key") " (its prefix)"},
	{"sk-svcacct-{W40,}", "OpenAI service account key", GL("openai-api-key") " (its prefix)"},
	{"sk-{A20}T3BlbkFJ{A20}", "OpenAI API key", GL("openai-api-key")},
	/* Any other sk- key of 32 or more characters: the providers that copied
	 * OpenAI's form (DeepSeek's sk- and 32 characters). */
	{"sk-{W32,}", "API key (sk-)", TH("deepseek/deepseek.go") " and " GL("openai-api-key")},
	{"sk_live_{A10,}", "Stripe secret key", GL("stripe-access-token")},
	{"sk_prod_{A10,}", "Stripe secret key", GL("stripe-access-token")},
	{"sk_test_{A10,}", "Stripe test secret key", GL("stripe-access-token")},
	{"sntrys_eyJpYXQiO{B10,}", "Sentry organization token", GL("sentry-org-token") " (its prefix)"},
	{"sntryu_{h64}", "Sentry user token", GL("sentry-user-token")},
	{"sq0atp-{W22,60}", "Square access token", GL("square-access-token")},
	/* 't' */
	{"tk-us-{W48}", "Scalingo API token", GL("scalingo-api-token")},
	{"tskey-{l1,}-{w1,}-{w1,}", "Tailscale key", TH("tailscale/tailscale.go")},
	/* 'v' */
	{"v1.0-{h24}-{h146}", "Cloudflare origin CA key", GL("cloudflare-origin-ca-key")},
	/* 'w': the tenant's label before it is any */
	{"webhook.office.com/webhookb2/{N8,}", "Microsoft Teams webhook URL",
	 GL("microsoft-teams-webhook") " (its path)"},
	/* 'x' */
	{"xai-{w80}", "xAI API key", TH("xai/xai.go")},
	{"xapp-{D1}-{A1,}-{D1,}-{A1,}", "Slack app token", GL("slack-app-token")},
	{"xkeysib-{h64}-{A16}", "Brevo (Sendinblue) API token", GL("sendinblue-api-token")},
	{"xoxa-{N8,}", "Slack workspace token", GL("slack-legacy-workspace-token")},
	/* the bot token rule and the legacy bot token rule, in one row */
	{"xoxb-{D8,14}-{A10,}", "Slack bot token", GL("slack-bot-token") " and " GL("slack-legacy-bot-token")},
	{"xoxe.xoxb-{D1}-{A163,}", "Slack configuration token", GL("slack-config-access-token")},
	{"xoxe.xoxp-{D1}-{A163,}", "Slack configuration token", GL("slack-config-access-token")},
	{"xoxe-{D1}-{A146,}", "Slack configuration refresh token", GL("slack-config-refresh-token")},
	{"xoxe-{D10,13}-{D10,13}-{D10,13}-{N28,34}", "Slack user token", GL("slack-user-token")},
	{"xoxo-{D1,}-{D1,}-{D1,}-{X1,}", "Slack legacy token", GL("slack-legacy-token")},
	{"xoxp-{D10,13}-{D10,13}-{D10,13}-{N28,34}", "Slack user token", GL("slack-user-token")},
	{"xoxr-{N8,}", "Slack workspace refresh token", GL("slack-legacy-workspace-token")},
	{"xoxs-{D1,}-{D1,}-{D1,}-{X1,}", "Slack legacy token", GL("slack-legacy-token")},
};

const size_t cf_env_shape_count = sizeof cf_env_shape_table / sizeof *cf_env_shape_table;

/* Azure's secret starts anywhere; its "Q~" at 4 is looked at first. */
const struct cf_env_shape_lead cf_env_shape_lead_table[] = {
	{{"{Z3}{D1}Q~{V31,34}", "Azure AD client secret", GL("azure-ad-client-secret")}, "Q~", 4},
};

const size_t cf_env_shape_lead_count = sizeof cf_env_shape_lead_table / sizeof *cf_env_shape_lead_table;

/* The rule wants the word "telegr" near the token; a run of 5 to 16 digits,
 * ':', 'A' and 34 more is that token's own shape, and is taken alone. */
const struct cf_env_shape_row cf_env_shape_telegram = {
	"{D5,16}:A{W34}", "Telegram bot token", GL("telegram-bot-api-token") " (without its keyword)"};

const struct cf_env_shape_row cf_env_shape_bearer = {
	"Bearer {T8,}", "bearer token (an Authorization header's value)",
	GL("curl-auth-header") "; GitHub's http_bearer_authentication_header, " GH_SCAN};

/* ---- between fork and exec from here on: no allocation, no libc state ---- */

/* The classes of a value's bytes for the scan: a token's characters (RUN),
 * a word's (WORD: letters, digits, '_'), and the ones that start a check of
 * their own (MARK: a URL's ':', a parameter's separators, the space after
 * "Bearer"). */
enum { RUN = 1, WORD = 2, MARK = 4 };
#define IS_ALNUM(c) (((c) >= 'a' && (c) <= 'z') || ((c) >= 'A' && (c) <= 'Z') || ((c) >= '0' && (c) <= '9'))
#define IS_WORD(c) (IS_ALNUM(c) || (c) == '_')
#define IS_RUN(c) (IS_WORD(c) || (c) == '.' || (c) == '~' || (c) == '+' || (c) == '/' || (c) == '=' || (c) == '-')
#define IS_MARK(c) ((c) == ':' || (c) == ' ' || (c) == '?' || (c) == '&' || (c) == ';' || (c) == ',')
#define CL(c) ((IS_RUN(c) ? RUN : 0) | (IS_WORD(c) ? WORD : 0) | (IS_MARK(c) ? MARK : 0))
#define CL4(b) CL(b), CL((b) + 1), CL((b) + 2), CL((b) + 3)
#define CL16(b) CL4(b), CL4((b) + 4), CL4((b) + 8), CL4((b) + 12)
#define CL64(b) CL16(b), CL16((b) + 16), CL16((b) + 32), CL16((b) + 48)
static const unsigned char cls[256] = {CL64(0), CL64(64), CL64(128), CL64(192)};

static bool in(const char *set, unsigned char c)
{
	for (; *set; set++)
		if ((unsigned char)*set == c)
			return true;
	return false;
}

bool cf_env_shape_in_class(char k, unsigned char c)
{
	bool lower = c >= 'a' && c <= 'z', up = c >= 'A' && c <= 'Z', digit = c >= '0' && c <= '9';
	bool alnum = lower || up || digit;
	switch (k) {
	case 'A':
		return alnum;
	case 'a':
		return lower || up;
	case 'l':
		return lower;
	case 'L':
		return lower || digit;
	case 'U':
		return up || digit;
	case 'K':
		return up || (c >= '2' && c <= '7');
	case 'D':
		return digit;
	case 'h':
		return digit || (c >= 'a' && c <= 'f');
	case 'X':
		return digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
	case 'w':
		return alnum || c == '_';
	case 'W':
		return alnum || c == '_' || c == '-';
	case 'N':
		return alnum || c == '-';
	case 'S':
		return alnum || in("=_.-", c);
	case 'q':
		return alnum || in("=_-", c);
	case 'B':
		return alnum || c == '+' || c == '/';
	case 'J':
		return alnum || in("/\\_-", c);
	case 'E':
		return in("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", c);
	case 'P':
		return up || digit || in(" _-", c);
	case 'Z':
		return alnum || in("_~.", c);
	case 'V':
		return alnum || in("_~.-", c);
	case 'T':
		return alnum || in("_=~@.+/-", c);
	default:
		return false;
	}
}

/* One run of the notation at P ("{W20,}" or "{P0,100}?"): its class, bounds
 * (max 0: none), laziness, and where the shape goes on. */
struct run {
	char cls;
	unsigned min, max;
	bool lazy;
	const char *next;
};

static unsigned number(const char **p)
{
	unsigned n = 0;
	while (**p >= '0' && **p <= '9')
		n = n * 10 + (unsigned)(*(*p)++ - '0');
	return n;
}

static struct run parse_run(const char *p)
{
	struct run r = {p[1], 0, 0, false, NULL};
	p += 2;
	r.min = r.max = number(&p);
	if (*p == ',') {
		p++;
		r.max = number(&p);
	}
	p++; /* '}' */
	if (*p == '?') {
		r.lazy = true;
		p++;
	}
	r.next = p;
	return r;
}

/* The greedy run R at S: where it ends, or NULL when it is too short. */
static const char *take(const struct run *r, const char *s)
{
	unsigned n = 0;
	while ((!r->max || n < r->max) && cf_env_shape_in_class(r->cls, (unsigned char)s[n]))
		n++;
	return n < r->min ? NULL : s + n;
}

/* The shape P, holding no lazy run, at S. A bounded run at the end needs a
 * character outside its class after it: the token does not go on. */
static bool match_rest(const char *p, const char *s)
{
	char last = 0;
	while (*p) {
		if (*p != '{') {
			if (*s++ != *p++)
				return false;
			last = 0;
			continue;
		}
		struct run r = parse_run(p);
		if (!(s = take(&r, s)))
			return false;
		p = r.next;
		last = r.max ? r.cls : 0;
	}
	return !(last && cf_env_shape_in_class(last, (unsigned char)*s));
}

/* The same, where a lazy run takes each of its lengths in turn and the rest
 * is tried after each. One pass: the shape is read as it is matched. */
bool cf_env_shape_at(const char *p, const char *s)
{
	while (*p) {
		if (*p != '{') {
			if (*s++ != *p++)
				return false;
			continue;
		}
		struct run r = parse_run(p);
		if (!r.lazy) {
			if (r.max && !*r.next) /* the last run, bounded: its end is checked */
				return match_rest(p, s);
			if (!(s = take(&r, s)))
				return false;
			p = r.next;
			continue;
		}
		for (unsigned n = 0;; n++) {
			if (n >= r.min && match_rest(r.next, s + n))
				return true;
			if ((r.max && n >= r.max) || !cf_env_shape_in_class(r.cls, (unsigned char)s[n]))
				return false;
		}
	}
	return true;
}

static unsigned key(const char *s)
{
	return (unsigned)(unsigned char)s[0] << 8 | (unsigned char)(s[0] ? s[1] : 0);
}

/* The first row of the sorted table whose shape starts with K's two bytes,
 * or the count. */
static size_t first_row(unsigned k)
{
	size_t lo = 0, hi = cf_env_shape_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (key(cf_env_shape_table[mid].shape) < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Whether S holds HINT at AT. S starts a run of CF_ENV_SHAPE_RUN_MIN
 * characters or more, which holds every hint's place (a test checks it). */
static bool hint_at(const char *s, const char *hint, unsigned at)
{
	for (unsigned i = 0; hint[i]; i++)
		if (s[at + i] != hint[i])
			return false;
	return true;
}

/* The bit of a shape's second byte in cf_env_shape_seconds: digits,
 * letters, '_', and one bit for every other byte (B2), for each byte. */
#define SB(c) (((c) >= '0' && (c) <= '9') ? (c) - '0' : ((c) >= 'A' && (c) <= 'Z') ? 10 + (c) - 'A' \
	       : ((c) >= 'a' && (c) <= 'z') ? 36 + (c) - 'a' : (c) == '_' ? 62 : 63)
#define SB4(b) SB(b), SB((b) + 1), SB((b) + 2), SB((b) + 3)
#define SB16(b) SB4(b), SB4((b) + 4), SB4((b) + 8), SB4((b) + 12)
#define SB64(b) SB16(b), SB16((b) + 16), SB16((b) + 32), SB16((b) + 48)
static const unsigned char second_bit[256] = {SB64(0), SB64(64), SB64(128), SB64(192)};

#define B2(c) (1ull << SB(c))

/* For each first byte of the sorted table's shapes, the bits of their
 * second bytes: most places a token may start ("home", "usr", "spring")
 * start no row, and are passed over without the search. A test checks it
 * against the table (and prints it anew when a row is added). */
const unsigned long long cf_env_shape_seconds[128] = {
	['-'] = B2('-'),
	['4'] = B2('b'),
	['A'] = B2('3') | B2('B') | B2('C') | B2('G') | B2('I') | B2('K') | B2('P') | B2('S') | B2('T'),
	['C'] = B2('L'),
	['E'] = B2('A') | B2('Z'),
	['F'] = B2('L'),
	['G'] = B2('R'),
	['H'] = B2('R'),
	['L'] = B2('S') | B2('T'),
	['P'] = B2('M'),
	['S'] = B2('G') | B2('K'),
	['a'] = B2('p'),
	['c'] = B2('m'),
	['d'] = B2('a') | B2('i') | B2('o') | B2('p') | B2('t') | B2('u'),
	['e'] = B2('y'),
	['f'] = B2('i') | B2('m') | B2('o'),
	['g'] = B2('h') | B2('i') | B2('l') | B2('s'),
	['h'] = B2('f') | B2('o') | B2('v'),
	['i'] = B2('c'),
	['l'] = B2('i'),
	['n'] = B2('p') | B2('t'),
	['o'] = B2('p'),
	['p'] = B2('8') | B2('a') | B2('n') | B2('p') | B2('s') | B2('u') | B2('y'),
	['r'] = B2('d') | B2('k') | B2('u'),
	['s'] = B2('a') | B2('h') | B2('k') | B2('n') | B2('q'),
	['t'] = B2('k') | B2('s'),
	['v'] = B2('1'),
	['w'] = B2('e'),
	['x'] = B2('a') | B2('k') | B2('o'),
};

/* The screen of the sorted table's first two bytes at S: most places a
 * token may start start no row ("home", "usr", "spring"), and are passed
 * over without the search. S[1] is read only when S[0] is not the NUL
 * (which starts no row). */
static bool table_may_start(const char *s)
{
	unsigned char c0 = (unsigned char)s[0], c1 = (unsigned char)s[c0 != 0];
	return c0 < 128 && (cf_env_shape_seconds[c0 & 127] >> second_bit[c1] & 1);
}

/* The rows of the sorted table that start with the two bytes KEY, from
 * FIRST: the search is made once for each key a value holds ("/home/..."
 * in every entry of a PATH). */
struct rows_of {
	unsigned key;
	size_t first;
};

/* A table shape that starts at S, where table_may_start(S); R the last
 * search. A row whose third character is a literal is compared with S's
 * first. */
static const struct cf_env_shape_row *table_token_at(const char *s, struct rows_of *r)
{
	unsigned k = key(s);
	if (k != r->key) {
		r->key = k;
		r->first = first_row(k);
	}
	for (size_t i = r->first; i < cf_env_shape_count && key(cf_env_shape_table[i].shape) == k; i++) {
		const char *sh = cf_env_shape_table[i].shape;
		if ((sh[2] == '{' || sh[2] == s[2]) && cf_env_shape_at(sh, s))
			return &cf_env_shape_table[i];
	}
	return NULL;
}

/* A lead table shape that starts at S. */
static const struct cf_env_shape_row *lead_token_at(const char *s)
{
	for (size_t i = 0; i < cf_env_shape_lead_count; i++) {
		const struct cf_env_shape_lead *r = &cf_env_shape_lead_table[i];
		if (hint_at(s, r->hint, r->hint_at) && cf_env_shape_at(r->row.shape, s))
			return &r->row;
	}
	return NULL;
}

/* A table shape that starts at S; the lead table's too when LEAD. */
static const struct cf_env_shape_row *token_at(const char *s, bool lead, struct rows_of *r)
{
	const struct cf_env_shape_row *row = table_may_start(s) ? table_token_at(s, r) : NULL;
	return row || !lead ? row : lead_token_at(s);
}

/* Whether a lead row may be in the run [S, E): a lead row's hint lies
 * inside the run from each place it is tried at (a test checks it), so a
 * row whose hint holds a character that is not a word's ("Q~") is tried
 * only in a run that holds it. */
static bool lead_may(const char *s, const char *e)
{
	for (size_t i = 0; i < cf_env_shape_lead_count; i++) {
		const char *h = cf_env_shape_lead_table[i].hint;
		while (*h && ((cls[(unsigned char)*h] & WORD) || memchr(s, *h, (size_t)(e - s))))
			h++;
		if (!*h)
			return true;
	}
	return false;
}

/* The bytes of [P, P + N) (N at most 16) that are not a word's: bit I for
 * P[I]. */
static unsigned not_words(const char *p, size_t n)
{
	unsigned m = 0;
#if defined(__SSE2__)
	if (n == 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
		__m128i d = _mm_sub_epi8(x, _mm_set1_epi8('0'));
		__m128i a = _mm_sub_epi8(_mm_or_si128(x, _mm_set1_epi8(0x20)), _mm_set1_epi8('a'));
		__m128i word = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(9)), d),
							 _mm_cmpeq_epi8(_mm_min_epu8(a, _mm_set1_epi8(25)), a)),
					    _mm_cmpeq_epi8(x, _mm_set1_epi8('_')));
		return ~(unsigned)_mm_movemask_epi8(word) & 0xffffu;
	}
#endif
	for (size_t i = 0; i < n; i++)
		m |= (unsigned)!(cls[(unsigned char)p[i]] & WORD) << i;
	return m;
}

/* A token in the run [S, E): at its start and after each of its
 * characters that is not a word's ('/', '.', '-', ...), in order, while
 * the run left is long enough to hold one. The characters are found 16 at
 * a time; a place whose first two bytes start no row of the sorted table
 * (table_may_start) is passed over unless a lead row may be in the run.
 * ROWS: the value's last search of the sorted table. */
static const struct cf_env_shape_row *token_in_run(const char *s, const char *e, struct rows_of *rows)
{
	const struct cf_env_shape_row *row;
	bool lead = lead_may(s, e);
	if ((row = token_at(s, lead, rows)))
		return row;
	for (const char *b = s; e - b > CF_ENV_SHAPE_RUN_MIN; b += 16) {
		size_t n = e - b < 16 ? (size_t)(e - b) : 16;
		for (unsigned m = not_words(b, n); m; m &= m - 1) {
			const char *p = b + __builtin_ctz(m) + 1;
			if (e - p < CF_ENV_SHAPE_RUN_MIN)
				return NULL;
			if ((lead || table_may_start(p)) && (row = token_at(p, lead, rows)))
				return row;
		}
	}
	return NULL;
}

static char upper(char c)
{
	return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
}

/* A URL's user part with a password, at the ':' of "scheme://": "user:pw@"
 * before the host (postgres://app:pw@db/x, a git remote with a token as its
 * password, redis://:pw@cache). The user part ends at '@'; a '/', '?', '#'
 * or a space first means there is none. */
static bool url_password_at(const char *colon)
{
	if (colon[1] != '/' || colon[2] != '/')
		return false;
	const char *u = colon + 3, *pw = NULL;
	for (; *u && *u != '@' && *u != '/' && *u != '?' && *u != '#' && *u != ' '; u++)
		if (*u == ':' && !pw)
			pw = u;
	return *u == '@' && pw && pw + 1 < u;
}

/* A Telegram bot token around the ':' at COLON of the value V. Its digits
 * may follow a word: the Bot API's URLs are .../bot<token>/method. */
static bool telegram_at(const char *v, const char *colon)
{
	const char *d = colon;
	if (colon[1] != 'A') /* the shape's ":A", looked at first */
		return false;
	while (d > v && d[-1] >= '0' && d[-1] <= '9' && colon - d < 16)
		d--;
	return colon - d >= 5 && cf_env_shape_at(cf_env_shape_telegram.shape, d);
}

/* "Bearer " and a token, the space at SP of the value V. */
static bool bearer_at(const char *v, const char *sp)
{
	static const char word[] = "BEARER";
	if (sp - v < 6 || (sp - v > 6 && (cls[(unsigned char)sp[-7]] & WORD)))
		return false;
	for (int i = 0; i < 6; i++)
		if (upper(sp[i - 6]) != word[i])
			return false;
	return cf_env_shape_at(cf_env_shape_bearer.shape + 6, sp);
}

/* A parameter at P, after a separator (or the value's start): NAME=VALUE,
 * the name made of letters, digits, '_', '.' and '-', starting with a
 * letter (or a Java system property's "-D"), at most CF_PARAM_MAX long; the
 * value not empty, not more '=' (base64's padding: "...Qw==" is no
 * parameter) and not a '$' expansion ("?password=${DB_PASSWORD}", a shell
 * line's "TOKEN=$(cat f) cmd": the secret is elsewhere). The row of the
 * word rules that withholds NAME, or NULL. */
#define CF_PARAM_MAX 64
static const struct cf_env_word_row *param_at(const char *p)
{
	while (*p == ' ')
		p++;
	if (p[0] == '-' && p[1] == 'D')
		p += 2;
	if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
		return NULL;
	size_t n = 0;
	while (n <= CF_PARAM_MAX && (IS_WORD(p[n]) || p[n] == '.' || p[n] == '-'))
		n++;
	if (n > CF_PARAM_MAX || p[n] != '=')
		return NULL;
	char c = p[n + 1];
	if (!c || c == '=' || c == '$' || c == '&' || c == ';' || c == ',' || c == ' ' || c == '#')
		return NULL;
	return cf_env_name_words(p, n, true);
}


/* One pass: runs of a token's characters are skipped whole unless long
 * enough; the characters between them start the checks of their own. */
enum cf_env_why cf_env_value_secret(const char *v, struct cf_env_reason *out)
{
	const struct cf_env_shape_row *row;
	const struct cf_env_word_row *w;
	if ((w = param_at(v)))
		return cf_env_reason_set(out, CF_ENV_URL, w->word, w->holds);
	const char *run = v;
	struct rows_of rows = {0, 0};
	for (const char *p = v;; p++) {
		/* A token's characters, the most of any value, one test each
		 * (four a step: the NUL is none, and ends it). */
		while (cls[(unsigned char)p[0]] & RUN && cls[(unsigned char)p[1]] & RUN &&
		       cls[(unsigned char)p[2]] & RUN && cls[(unsigned char)p[3]] & RUN)
			p += 4;
		while (cls[(unsigned char)*p] & RUN)
			p++;
		unsigned char c = (unsigned char)*p, k = cls[c];
		if (p - run >= CF_ENV_SHAPE_RUN_MIN && (row = token_in_run(run, p, &rows)))
			return cf_env_reason_set(out, CF_ENV_VALUE, row->shape, row->holds);
		if (!c)
			break;
		run = p + 1;
		if (!(k & MARK))
			continue;
		if (c == ':') {
			if (url_password_at(p))
				return cf_env_reason_set(out, CF_ENV_URL, "scheme://user:password@",
					     "a URL with a password");
			if (telegram_at(v, p))
				return cf_env_reason_set(out, CF_ENV_VALUE, cf_env_shape_telegram.shape,
					     cf_env_shape_telegram.holds);
			continue;
		}
		if (c == ' ' && bearer_at(v, p))
			return cf_env_reason_set(out, CF_ENV_VALUE, cf_env_shape_bearer.shape, cf_env_shape_bearer.holds);
		if ((w = param_at(p + 1)))
			return cf_env_reason_set(out, CF_ENV_URL, w->word, w->holds);
	}
	return CF_ENV_PASS;
}
