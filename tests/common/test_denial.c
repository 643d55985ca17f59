/* What is credfence's own in a denial's words (common/denial.c, issue 36):
 * a denied write there names no option. */
#include <criterion/criterion.h>
#include <string.h>

#include "denial.h"

static const struct cf_denial_own own = {
	.tmpdir = "/h/.local/state/credfence/harness-tmp.AAAAAA",
	.runtime = "/run/user/1000",
	.state = "/h/.local/state/credfence",
	.log = "/h/logs/cf.jsonl",
};

Test(denial, what_is_credfences_own)
{
	static const struct {
		const char *path, *row;
	} cases[] = {
		{"/h/.local/state/credfence/harness-tmp.AAAAAA/gemini-shell-x/bgpids.tmp",
		 "the harness's own temporary directory, made by credfence"},
		{"/h/.local/state/credfence/harness-tmp.AAAAAA",
		 "the harness's own temporary directory, made by credfence"},
		{"/run/user/1000/harness-tmp.BBBBBB/.lib.so",
		 "a harness's own temporary directory, made by credfence"},
		{"/h/.local/state/credfence/harness-tmp.CCCCCC",
		 "a harness's own temporary directory, made by credfence"},
		{"/h/.local/state/credfence/other", "credfence's own state"},
		{"/h/logs/cf.jsonl", "credfence's log"},
		{"/run/user/1000/other.sock", NULL},
		{"/run/user/1000/x/harness-tmp.DDDDDD", NULL},
		{"/h/.local/state/credfence2/harness-tmp.EEEEEE", NULL},
		{"/h/logs/cf.jsonl.old", NULL},
		{"/h/.bashrc", NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		const char *row = cf_denial_own_row(&own, cases[i].path);
		if (!cases[i].row)
			cr_expect_null(row, "%s: %s", cases[i].path, row);
		else
			cr_expect(row && strcmp(row, cases[i].row) == 0, "%s: %s", cases[i].path,
				  row ? row : "(none)");
	}
	const struct cf_denial_own none = {0};
	cr_expect_null(cf_denial_own_row(&none, "/h/.local/state/credfence/x"));
}

Test(denial, credfences_own_is_said_with_no_option)
{
	char line[512];
	const char *p = "/h/.local/state/credfence/harness-tmp.AAAAAA/gemini-shell-x/bgpids.tmp";
	size_t n = cf_denial_own_words(line, sizeof line, p, cf_denial_own_row(&own, p), "/h");
	cr_expect_str_eq(line, "credfence: denied write of "
			       "~/.local/state/credfence/harness-tmp.AAAAAA/gemini-shell-x/bgpids.tmp "
			       "(the harness's own temporary directory, made by credfence); no fenced "
			       "command may write there, and no option changes that\n");
	cr_expect_eq(n, strlen(line));
	n = cf_denial_own_words(line, 16, p, "x", "/h");
	cr_expect_eq(n, 15);
	cr_expect_eq(line[14], '\n');
}

/* ssh's key files get --ssh-agent, never --allow-read of a private key;
 * what ssh reads besides its keys keeps --allow-read (issue 36). */
Test(denial, ssh_key_files_and_agent_sockets)
{
	cr_expect(cf_denial_ssh_key("/h/.ssh/id_ed25519", "/h/.ssh"));
	cr_expect(cf_denial_ssh_key("/h/.ssh/id_rsa-cert.pub", "/h/.ssh"));
	cr_expect(!cf_denial_ssh_key("/h/.ssh/known_hosts", "/h/.ssh"));
	cr_expect(!cf_denial_ssh_key("/h/.ssh/known_hosts2", "/h/.ssh"));
	cr_expect(!cf_denial_ssh_key("/h/.ssh/config", "/h/.ssh"));
	cr_expect(!cf_denial_ssh_key("/h/.ssh", "/h/.ssh"));
	cr_expect(!cf_denial_ssh_key("/h/.aws/credentials", "/h/.aws"));
	cr_expect(!cf_denial_ssh_key("/h/.sshx/id_rsa", "/h/.ssh"));

	char line[512];
	cf_denial_ssh_key_words(line, sizeof line, "/h/.ssh/id_rsa", "SSH keys", false, "/h");
	cr_expect_str_eq(line, "credfence: denied read of ~/.ssh/id_rsa (SSH keys); ssh can sign with "
			       "your agent instead of its key files: to allow: --ssh-agent\n");
	cf_denial_ssh_key_words(line, sizeof line, "/h/.ssh/id_rsa", "SSH keys", true, "/h");
	cr_expect_str_eq(line, "credfence: denied read of ~/.ssh/id_rsa (SSH keys); ssh signs with your "
			       "agent here (--ssh-agent): if it has no key, add one to it outside the "
			       "fence (ssh-add)\n");

	cr_expect_gt(cf_denial_connect_words(line, sizeof line, "/run/user/1/ssh.sock",
					     "/run/user/1/ssh.sock", "/h"), 0);
	cr_expect_str_eq(line, "credfence: denied connect to /run/user/1/ssh.sock (your ssh agent, "
			       "$SSH_AUTH_SOCK); to allow: --ssh-agent\n");
	cr_expect_gt(cf_denial_connect_words(line, sizeof line, "/h/.gnupg/S.gpg-agent.extra", NULL,
					     "/h"), 0);
	cr_expect_str_eq(line, "credfence: denied connect to ~/.gnupg/S.gpg-agent.extra (gpg-agent); "
			       "to allow: --allow-socket ~/.gnupg/S.gpg-agent.extra\n");
	cr_expect_eq(cf_denial_connect_words(line, sizeof line, "/var/run/nscd/socket",
					     "/run/user/1/ssh.sock", "/h"), 0);
	cr_expect_eq(cf_denial_connect_words(line, sizeof line, "/run/user/1/S.gpg-agentx", NULL,
					     "/h"), 0);
}
