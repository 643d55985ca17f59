#include "secrets.h"

#define ROW(rel, holds) { rel, holds, NULL, CF_RELOC_NONE, NULL, false }
#define MOVED(rel, holds, env) { rel, holds, env, CF_RELOC_PATH, NULL, false }
#define MOVED_LIST(rel, holds, env) { rel, holds, env, CF_RELOC_LIST, NULL, false }
#define MOVED_IN(rel, holds, env, leaf) { rel, holds, env, CF_RELOC_JOIN, leaf, false }
#define AGENT(rel, holds) { rel, holds, NULL, CF_RELOC_NONE, NULL, true }
#define AGENT_IN(rel, holds, env, leaf) { rel, holds, env, CF_RELOC_JOIN, leaf, true }

const struct cf_secret_row cf_secret_table[] = {
	/* The locations users already know. */
	ROW(".ssh", "SSH private keys, known hosts and config"),
	ROW(".aws", "AWS credentials and config"),
	MOVED(".aws/credentials", "AWS shared credentials", "AWS_SHARED_CREDENTIALS_FILE"),
	MOVED(".aws/config", "AWS config (may hold SSO tokens and keys)", "AWS_CONFIG_FILE"),
	MOVED(".gnupg", "GnuPG keyrings and trust database", "GNUPGHOME"),
	MOVED(".netrc", "machine logins and passwords (netrc)", "NETRC"),
	ROW(".git-credentials", "git credential-store passwords and tokens"),
	MOVED(".npmrc", "npm registry tokens", "NPM_CONFIG_USERCONFIG"),
	ROW(".pypirc", "PyPI upload tokens"),
	MOVED_IN(".docker/config.json", "Docker registry credentials", "DOCKER_CONFIG", "config.json"),
	MOVED_LIST(".kube", "Kubernetes configs and cluster tokens", "KUBECONFIG"),
	MOVED(".config/gh", "GitHub CLI tokens", "GH_CONFIG_DIR"),
	MOVED(".config/gcloud", "Google Cloud credentials", "CLOUDSDK_CONFIG"),
	/* Credential-only stores. */
	ROW(".config/git/credentials", "git credential-store passwords (XDG location)"),
	MOVED(".azure", "Azure CLI tokens", "AZURE_CONFIG_DIR"),
	ROW(".config/op", "1Password CLI sessions"),
	MOVED(".password-store", "pass(1) password store", "PASSWORD_STORE_DIR"),
	ROW(".local/share/keyrings", "GNOME keyrings"),
	ROW(".vault-token", "HashiCorp Vault token"),
	ROW(".terraform.d/credentials.tfrc.json", "Terraform Cloud tokens"),
	MOVED_IN(".cargo/credentials", "crates.io tokens (legacy name)", "CARGO_HOME", "credentials"),
	MOVED_IN(".cargo/credentials.toml", "crates.io tokens", "CARGO_HOME", "credentials.toml"),
	ROW(".gem/credentials", "RubyGems API keys"),
	MOVED(".pgpass", "PostgreSQL passwords", "PGPASSFILE"),
	ROW(".my.cnf", "MySQL client passwords"),
	ROW(".s3cfg", "s3cmd access keys"),
	ROW(".boto", "boto / gsutil credentials"),
	ROW(".config/hub", "hub (GitHub) tokens"),
	ROW(".config/rclone", "rclone remotes and their secrets"),
	/* Coding agents' own logins: a model-written command must not take the
	 * user's model-provider tokens. The harness reads them: its own
	 * reads are guarded (enforce/linux/mountns/harness_guard.h), but a harness signs in with these. */
	AGENT_IN(".claude/.credentials.json", "Claude Code login tokens", "CLAUDE_CONFIG_DIR",
		 ".credentials.json"),
	AGENT_IN(".codex/auth.json", "Codex (OpenAI) login tokens", "CODEX_HOME", "auth.json"),
	AGENT(".gemini/oauth_creds.json", "Gemini CLI OAuth tokens"),
	AGENT_IN(".local/share/opencode/auth.json", "opencode provider keys", "XDG_DATA_HOME",
		 "opencode/auth.json"),
	AGENT(".config/github-copilot", "GitHub Copilot tokens"),
	/* Browser profiles: cookies, saved passwords, session tokens. */
	ROW(".mozilla", "Firefox profiles (cookies, saved passwords)"),
	ROW(".config/google-chrome", "Chrome profiles (cookies, saved passwords)"),
	ROW(".config/chromium", "Chromium profiles (cookies, saved passwords)"),
	/* Histories: commands and queries typed with secrets in them. */
	MOVED(".bash_history", "bash history", "HISTFILE"),
	ROW(".zsh_history", "zsh history"),
	ROW(".python_history", "python REPL history"),
	ROW(".psql_history", "psql history"),
	ROW(".mysql_history", "mysql client history"),
	ROW(".node_repl_history", "node REPL history"),
	ROW(".local/share/fish/fish_history", "fish history"),
};

const size_t cf_secret_count = sizeof cf_secret_table / sizeof cf_secret_table[0];
