/* The Seatbelt profile text and its parameters, for policies built by hand:
 * exact text, order, hostile paths, canonical and firmlink forms, and what the
 * profile decides (sbmodel.h: last matching rule wins). */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "sbmodel.h"

#define DATA "/System/Volumes/Data"

/* A policy as cf_policy_build leaves it, filled by hand. */
struct fixture {
	struct cf_policy p;
	struct cf_denied d[16];
};

static void fixture(struct fixture *f, const char *home, const char *ws, const char *const *secrets,
		    const char *const *writable)
{
	memset(f, 0, sizeof *f);
	f->p.home = (char *)home;
	f->p.workspace = (char *)ws;
	f->p.denied = f->d;
	for (; secrets && *secrets; secrets++)
		f->d[f->p.n_denied++] = (struct cf_denied){(char *)*secrets, "test", "default"};
	for (; writable && *writable; writable++)
		cr_assert_eq(cf_strv_add(&f->p.writable, *writable), 0);
}

static void fixture_free(struct fixture *f)
{
	cf_strv_free(&f->p.writable);
}

static void standard(struct fixture *f)
{
	static const char *const secrets[] = {"/Users/u/.config/gh", "/Users/u/.ssh", "/opt/keys/gpg",
					      NULL};
	static const char *const writable[] = {"/Users/u/proj", "/tmp", "/var/tmp", "/dev/shm",
					       "/Users/u/.cache", NULL};
	fixture(f, "/Users/u", "/Users/u/proj", secrets, writable);
}

#define C "/[^/]+"
#define FILE_NAMES                                                                                 \
	"([.][eE][nN][vV]|[.][eE][nN][vV][.][^/]*|[iI][dD]_[rR][sS][aA]|[iI][dD]_[eE][cC][dD][sS][aA]" \
	"|[iI][dD]_[eE][dD]25519|[iI][dD]_[dD][sS][aA]|[^/]*[.][pP][eE][mM]|[^/]*[.][kK][eE][yY]"     \
	"|[^/]*[.][pP]12|[^/]*[.][pP][fF][xX]|[.][nN][pP][mM][rR][cC]|[.][pP][yY][pP][iI][rR][cC]"     \
	"|[.][nN][eE][tT][rR][cC]|[.][gG][iI][tT]-[cC][rR][eE][dD][eE][nN][tT][iI][aA][lL][sS]"       \
	"|[cC][rR][eE][dD][eE][nN][tT][iI][aA][lL][sS][.][jJ][sS][oO][nN])$"
#define KEEP_NAMES                                                                                 \
	"([.][eE][nN][vV][.][eE][xX][aA][mM][pP][lL][eE]|[.][eE][nN][vV][.][sS][aA][mM][pP][lL][eE]"   \
	"|[.][eE][nN][vV][.][tT][eE][mM][pP][lL][aA][tT][eE])$"
#define DIR_NAMES                                                                                  \
	"([.][sS][sS][hH]|[.][aA][wW][sS]|[.][gG][nN][uU][pP][gG]|[sS][eE][cC][rR][eE][tT][sS])(/.*)?$"
#define NAME_RULES(key, prefix)                                                                    \
	"(deny file-read* (require-all (subpath (param \"" key "\")) (regex #\"^" prefix              \
	"/([^/]+/)*" FILE_NAMES "\")))\n"                                                              \
	"(allow file-read* (require-all (subpath (param \"" key "\")) (regex #\"^" prefix             \
	"/([^/]+/)*" KEEP_NAMES "\")))\n"                                                              \
	"(deny file-read* (require-all (subpath (param \"" key "\")) (regex #\"^" prefix              \
	"/([^/]+/)*" DIR_NAMES "\")))\n"

static const char standard_text[] =
	"(version 1)\n"
	"(allow default)\n"
	"(deny file-write*)\n"
	"(allow file-write* (subpath (param \"W0\")))\n"
	"(allow file-write* (subpath (param \"W1\")))\n"
	"(allow file-write* (subpath (param \"W2\")))\n"
	"(allow file-write* (subpath (param \"W3\")))\n"
	"(allow file-write* (subpath (param \"W4\")))\n"
	"(allow file-write* (subpath (param \"W5\")))\n"
	"(allow file-write* (subpath (param \"W6\")))\n"
	"(allow file-write* (subpath (param \"W7\")))\n"
	"(allow file-write* (subpath (param \"W8\")))\n"
	"(allow file-write-data (subpath (param \"DEV\")))\n"
	NAME_RULES("WS0", C C C)
	NAME_RULES("WS1", C C C C C C)
	"(deny file-read* (subpath (param \"S0\")))\n"
	"(deny file-read* (subpath (param \"S1\")))\n"
	"(deny file-read* (subpath (param \"S2\")))\n"
	"(deny file-read* (subpath (param \"S3\")))\n"
	"(deny file-read* (subpath (param \"S4\")))\n"
	"(deny file-read* (subpath (param \"S5\")))\n"
	"(deny file-write-unlink file-link (subpath (param \"S0\")))\n"
	"(deny file-write-unlink file-link (subpath (param \"S1\")))\n"
	"(deny file-write-unlink file-link (subpath (param \"S2\")))\n"
	"(deny file-write-unlink file-link (subpath (param \"S3\")))\n"
	"(deny file-write-unlink file-link (subpath (param \"S4\")))\n"
	"(deny file-write-unlink file-link (subpath (param \"S5\")))\n"
	"(deny file-write-unlink (literal (param \"U0\")))\n"
	"(deny file-write-unlink (literal (param \"U1\")))\n"
	"(deny file-write-unlink (literal (param \"U2\")))\n"
	"(deny file-write-unlink (literal (param \"U3\")))\n"
	"(deny file-write-unlink (literal (param \"U4\")))\n"
	"(deny file-write-unlink (literal (param \"U5\")))\n"
	"(deny file-write-unlink (literal (param \"U6\")))\n"
	"(deny file-write-unlink (literal (param \"U7\")))\n";

static const char *const standard_params[] = {
	"W0", "/Users/u/proj",
	"W1", DATA "/Users/u/proj",
	"W2", "/private/tmp",
	"W3", DATA "/private/tmp",
	"W4", "/private/var/tmp",
	"W5", DATA "/private/var/tmp",
	"W6", "/dev/shm",
	"W7", "/Users/u/.cache",
	"W8", DATA "/Users/u/.cache",
	"DEV", "/dev",
	"WS0", "/Users/u/proj",
	"WS1", DATA "/Users/u/proj",
	"S0", "/Users/u/.config/gh",
	"S1", DATA "/Users/u/.config/gh",
	"S2", "/Users/u/.ssh",
	"S3", DATA "/Users/u/.ssh",
	"S4", "/opt/keys/gpg",
	"S5", DATA "/opt/keys/gpg",
	"U0", "/Users/u/.config",
	"U1", DATA "/Users/u/.config",
	"U2", "/Users/u",
	"U3", DATA "/Users/u",
	"U4", "/opt/keys",
	"U5", DATA "/opt/keys",
	"U6", "/opt",
	"U7", DATA "/opt",
	NULL,
};

Test(profile, exact_text_and_parameters)
{
	struct fixture f;
	struct cf_profile pf;
	standard(&f);
	cr_assert_eq(cf_profile_build(&pf, &f.p), 0);
	cr_assert_str_eq(pf.text, standard_text);
	size_t n = 0;
	while (standard_params[n])
		n++;
	cr_assert_eq(pf.n_params * 2, n, "%zu parameters, want %zu", pf.n_params, n / 2);
	for (size_t i = 0; i < n; i++)
		cr_expect_str_eq(pf.params[i], standard_params[i], "parameter array slot %zu", i);
	cr_assert_null(pf.params[n], "the array ends with NULL");
	cf_profile_free(&pf);
	fixture_free(&f);
}

static long first_line(const char *text, const char *start)
{
	long line = 0;
	for (const char *t = text; *t; line++) {
		if (!strncmp(t, start, strlen(start)))
			return line;
		t = strchr(t, '\n') + 1;
	}
	return -1;
}

static long last_line(const char *text, const char *start)
{
	long line = 0, found = -1;
	for (const char *t = text; *t; line++) {
		if (!strncmp(t, start, strlen(start)))
			found = line;
		t = strchr(t, '\n') + 1;
	}
	return found;
}

Test(profile, denies_come_last)
{
	struct fixture f;
	struct cf_profile pf;
	standard(&f);
	cr_assert_eq(cf_profile_build(&pf, &f.p), 0);
	long lines = last_line(pf.text, "(");
	long last_allow = last_line(pf.text, "(allow ");
	long secret_reads = first_line(pf.text, "(deny file-read* (subpath ");
	long names = first_line(pf.text, "(deny file-read* (require-all ");
	long writes = first_line(pf.text, "(deny file-write*)");
	cr_assert_eq(first_line(pf.text, "(version 1)"), 0);
	cr_assert_eq(first_line(pf.text, "(allow default)"), 1);
	cr_assert_eq(writes, 2, "write confinement right after the default");
	cr_assert_gt(names, first_line(pf.text, "(allow file-write-data"));
	cr_assert_gt(secret_reads, last_allow, "every secret deny after every allow");
	cr_assert_gt(secret_reads, last_line(pf.text, "(deny file-read* (require-all "));
	cr_assert_gt(first_line(pf.text, "(deny file-write-unlink"), last_allow);
	cr_assert_eq(last_line(pf.text, "(deny file-write-unlink (literal"), lines);
	cf_profile_free(&pf);
	fixture_free(&f);
}

/* Every secret form, every ancestor, the writable forms: decided as Seatbelt does. */
Test(profile, decisions)
{
	struct fixture f;
	struct cf_profile pf;
	struct sb_model m;
	standard(&f);
	cr_assert_eq(cf_profile_build(&pf, &f.p), 0);
	sb_load(&m, &pf);
	static const char *const unreadable[] = {
		"/Users/u/.ssh", "/Users/u/.ssh/id_ed25519", DATA "/Users/u/.ssh/id_ed25519",
		"/Users/u/.config/gh/hosts.yml", DATA "/Users/u/.config/gh", "/opt/keys/gpg/x",
		DATA "/opt/keys/gpg",
	};
	static const char *const readable[] = {
		"/Users/u", "/Users/u/.sshx", "/Users/u/.config", "/Users/u/.config/ghx", "/opt/keys",
		"/usr/bin/env", "/Users/u/proj/src/main.c", DATA "/Users/u/notes.txt",
	};
	for (size_t i = 0; i < sizeof unreadable / sizeof *unreadable; i++) {
		cr_expect(!sb_allowed(&m, "file-read-data", unreadable[i]), "read %s", unreadable[i]);
		cr_expect(!sb_allowed(&m, "file-read-metadata", unreadable[i]), "stat %s", unreadable[i]);
		cr_expect(!sb_allowed(&m, "file-write-unlink", unreadable[i]), "unlink %s",
			  unreadable[i]);
		cr_expect(!sb_allowed(&m, "file-link", unreadable[i]), "link %s", unreadable[i]);
	}
	for (size_t i = 0; i < sizeof readable / sizeof *readable; i++)
		cr_expect(sb_allowed(&m, "file-read-data", readable[i]), "read %s", readable[i]);

	static const char *const writable[] = {
		"/private/tmp/x", DATA "/private/tmp/x", "/private/var/tmp/y", "/Users/u/proj/a/b",
		DATA "/Users/u/proj/c", "/Users/u/.cache/pip/z",
	};
	static const char *const not_writable[] = {
		"/Users/u/notes.txt", "/Users/u/.ssh/authorized_keys", "/tmp/x", "/usr/local/bin/x",
		"/Users/u/projx", "/opt/keys/gpg/pubring.kbx", "/Users/u/.cachex",
	};
	for (size_t i = 0; i < sizeof writable / sizeof *writable; i++) {
		cr_expect(sb_allowed(&m, "file-write-create", writable[i]), "create %s", writable[i]);
		cr_expect(sb_allowed(&m, "file-write-unlink", writable[i]), "unlink %s", writable[i]);
	}
	for (size_t i = 0; i < sizeof not_writable / sizeof *not_writable; i++) {
		cr_expect(!sb_allowed(&m, "file-write-data", not_writable[i]), "write %s",
			  not_writable[i]);
		cr_expect(!sb_allowed(&m, "file-write-create", not_writable[i]), "create %s",
			  not_writable[i]);
	}
	/* Devices: use, never create. */
	cr_expect(sb_allowed(&m, "file-write-data", "/dev/null"));
	cr_expect(sb_allowed(&m, "file-write-data", "/dev/ttys003"));
	cr_expect(!sb_allowed(&m, "file-write-create", "/dev/newnode"));
	cr_expect(!sb_allowed(&m, "file-write-unlink", "/dev/null"));

	/* No moving a secret or a way to it: the ancestors up to home, and home. */
	static const char *const fixed[] = {
		"/Users/u", DATA "/Users/u", "/Users/u/.config", DATA "/Users/u/.config", "/opt/keys",
		"/opt",
	};
	for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
		cr_expect(!sb_allowed(&m, "file-write-unlink", fixed[i]), "rename %s", fixed[i]);
	sb_free(&m);
	cf_profile_free(&pf);
	fixture_free(&f);
}

/* Ancestors stop at the home the secret lies in, and cover the account home
 * when it differs from $HOME. */
Test(profile, ancestors_up_to_each_home)
{
	static const char *const secrets[] = {"/Users/u/a/b/.netrc", "/Users/real/.aws", NULL};
	struct fixture f;
	struct cf_profile pf;
	fixture(&f, "/Users/u/a", NULL, secrets, NULL);
	f.p.account_home = (char *)"/Users/real";
	cr_assert_eq(cf_profile_build(&pf, &f.p), 0);
	struct sb_model m;
	sb_load(&m, &pf);
	cr_expect(!sb_allowed(&m, "file-write-unlink", "/Users/u/a/b"));
	cr_expect(!sb_allowed(&m, "file-write-unlink", "/Users/u/a"));
	cr_expect(!sb_allowed(&m, "file-write-unlink", "/Users/real"));
	cr_expect(!sb_allowed(&m, "file-write-unlink", DATA "/Users/real"));
	/* Above a home, the write confinement alone decides: no unlink rule there. */
	cr_expect_lt(sb_deciding(&m, "file-write-unlink", "/Users/u"),
		     first_line(pf.text, "(deny file-read* (subpath "));
	cr_expect_lt(sb_deciding(&m, "file-write-unlink", "/Users"),
		     first_line(pf.text, "(deny file-read* (subpath "));
	cr_assert_null(strstr(pf.text, "WS0"), "no workspace, no name rules");
	sb_free(&m);
	cf_profile_free(&pf);
	fixture_free(&f);
}

/* A path is data: whatever it holds, the text is that of a plain path with as
 * many components, and the value comes back byte for byte. */
Test(profile, hostile_paths_are_parameters)
{
	static const char *const hostile[] = {
		"/Users/u\"))(allow file-read*)(\"/.ssh",
		"/Users/u\"))(allow file-read*)(\"/a\\\"b(c)d\\\\e\nf\r;g #\"h",
		"/opt/x\n(allow default)\n",
	};
	static const char *const plain[] = {"/Users/u/.ssh", "/Users/u/a", "/opt/x"};
	const char *hs[] = {hostile[0], hostile[1], hostile[2], NULL};
	const char *ps[] = {plain[0], plain[1], plain[2], NULL};
	const char *hw[] = {"/Users/u\"))(allow file-read*)(\"/w(s)\n", NULL};
	const char *pw[] = {"/Users/u/ws", NULL};
	struct fixture hf, pf_;
	struct cf_profile h, p;
	fixture(&hf, "/Users/u\"))(allow file-read*)(\"", hw[0], hs, hw);
	fixture(&pf_, "/Users/u", pw[0], ps, pw);
	cr_assert_eq(cf_profile_build(&h, &hf.p), 0);
	cr_assert_eq(cf_profile_build(&p, &pf_.p), 0);
	cr_assert_str_eq(h.text, p.text, "a hostile path changed the profile text");
	cr_assert_null(strstr(h.text, "allow file-read*)"));
	cr_assert_null(strchr(h.text, '\\'));
	cr_assert_null(strchr(h.text, '\r'));
	cr_assert_null(strstr(h.text, ";"));
	cr_assert_eq(h.n_params, p.n_params);
	for (size_t i = 0; i < 3; i++) {
		char key[8];
		snprintf(key, sizeof key, "S%zu", 2 * i);
		/* sorted as given: the fixture's order */
		cr_expect_str_eq(cf_profile_param(&h, key), hostile[i], "%s", key);
	}
	cr_expect_str_eq(cf_profile_param(&h, "WS0"), hw[0]);
	cr_expect_str_eq(cf_profile_param(&h, "WS1"), DATA "/Users/u\"))(allow file-read*)(\"/w(s)\n");
	/* The model still parses every line: nothing but the known shapes. */
	struct sb_model m;
	sb_load(&m, &h);
	cr_expect(!sb_allowed(&m, "file-read-data", hostile[0]));
	cr_expect(!sb_allowed(&m, "file-read-data", hostile[2]));
	sb_free(&m);
	cf_profile_free(&h);
	cf_profile_free(&p);
	fixture_free(&hf);
	fixture_free(&pf_);
}

Test(profile, every_key_in_the_text_is_given_once)
{
	struct fixture f;
	struct cf_profile pf;
	standard(&f);
	cr_assert_eq(cf_profile_build(&pf, &f.p), 0);
	for (size_t i = 0; pf.params[i]; i += 2) {
		char use[64];
		snprintf(use, sizeof use, "(param \"%s\")", pf.params[i]);
		cr_expect_not_null(strstr(pf.text, use), "parameter %s is not used", pf.params[i]);
		for (size_t j = i + 2; pf.params[j]; j += 2)
			cr_expect_str_neq(pf.params[i], pf.params[j]);
	}
	for (const char *t = pf.text; (t = strstr(t, "(param \"")); t++) {
		char key[16];
		cr_assert_eq(sscanf(t, "(param \"%15[A-Z0-9]\")", key), 1);
		cr_expect_not_null(cf_profile_param(&pf, key), "%s used, not given", key);
	}
	cf_profile_free(&pf);
	fixture_free(&f);
}

/* A symlinked secret reaches the profile as both its name and its target (the
 * policy denies both); the same form twice gets one parameter. */
Test(profile, duplicate_forms_get_one_parameter)
{
	static const char *const secrets[] = {"/Users/u/.aws", "/Users/u/.aws", "/private/tmp/k",
					      "/tmp/k", NULL};
	struct fixture f;
	struct cf_profile pf;
	fixture(&f, "/Users/u", NULL, secrets, NULL);
	cr_assert_eq(cf_profile_build(&pf, &f.p), 0);
	cr_expect_str_eq(cf_profile_param(&pf, "S0"), "/Users/u/.aws");
	cr_expect_str_eq(cf_profile_param(&pf, "S1"), DATA "/Users/u/.aws");
	cr_expect_str_eq(cf_profile_param(&pf, "S2"), "/private/tmp/k");
	cr_expect_str_eq(cf_profile_param(&pf, "S3"), DATA "/private/tmp/k");
	cr_expect_null(cf_profile_param(&pf, "S4"), "/tmp/k and /private/tmp/k are one form");
	cf_profile_free(&pf);
	fixture_free(&f);
}

Test(forms, darwin_canon)
{
	static const char *const cases[][2] = {
		{"/tmp", "/private/tmp"},
		{"/tmp/a b", "/private/tmp/a b"},
		{"/var", "/private/var"},
		{"/var/folders/xy/T", "/private/var/folders/xy/T"},
		{"/etc/hosts", "/private/etc/hosts"},
		{"/tmpx", "/tmpx"},
		{"/variable", "/variable"},
		{"/etcetera/x", "/etcetera/x"},
		{"/private/tmp", "/private/tmp"},
		{"/Users/u/tmp", "/Users/u/tmp"},
		{"/", "/"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char out[PATH_MAX];
		cr_assert_eq(cf_darwin_canon(cases[i][0], out, sizeof out), 0);
		cr_expect_str_eq(out, cases[i][1], "%s", cases[i][0]);
	}
	char small[8];
	cr_expect_eq(cf_darwin_canon("/tmp/abc", small, sizeof small), -ENAMETOOLONG);
}

Test(forms, firmlink)
{
	static const char *const cases[][2] = {
		{"/Users/u", DATA "/Users/u"},
		{"/private/tmp", DATA "/private/tmp"},
		{"/private/var/folders/x", DATA "/private/var/folders/x"},
		{"/opt/k", DATA "/opt/k"},
		{"/Systemx/k", DATA "/Systemx/k"},
		{DATA "/Users/u", "/Users/u"},
		{DATA "/tmp/x", "/private/tmp/x"},
		{DATA "/private/var/x", "/private/var/x"},
	};
	static const char *const none[] = {
		"/", "/System", "/System/Library/Keychains", DATA, "/dev", "/dev/null",
		"/private/var/vm", "/private/var/vm/sleepimage",
	};
	char out[PATH_MAX + 32];
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		cr_assert_eq(cf_darwin_firmlink(cases[i][0], out, sizeof out), 1, "%s", cases[i][0]);
		cr_expect_str_eq(out, cases[i][1], "%s", cases[i][0]);
	}
	for (size_t i = 0; i < sizeof none / sizeof *none; i++)
		cr_expect_eq(cf_darwin_firmlink(none[i], out, sizeof out), 0, "%s", none[i]);
	char small[16];
	cr_expect_eq(cf_darwin_firmlink("/Users/u", small, sizeof small), -ENAMETOOLONG);
}

Test(profile, long_paths_fail_cleanly)
{
	char *big = malloc(PATH_MAX + 16);
	cr_assert_not_null(big);
	memset(big, 'a', PATH_MAX + 15);
	big[0] = '/';
	big[PATH_MAX + 15] = '\0';
	const char *secrets[] = {big, NULL};
	struct fixture f;
	struct cf_profile pf;
	fixture(&f, "/Users/u", NULL, secrets, NULL);
	cr_expect_eq(cf_profile_build(&pf, &f.p), -ENAMETOOLONG);
	cr_expect_null(pf.text, "a failed build leaves nothing to free");
	cr_expect_null(pf.params);
	cf_profile_free(&pf); /* and freeing it again is harmless */
	fixture_free(&f);
	free(big);
}

/* --allow-read ~/.ssh/known_hosts: a parameter, allowed after the secret's
 * deny (the last matching rule wins); the rest of ~/.ssh, a key made later
 * included, stays denied, and known_hosts can still not be moved away. */
Test(profile, allow_read_inside_a_secret_comes_after_its_deny)
{
	struct fixture f;
	struct cf_profile pf;
	struct sb_model m;
	standard(&f);
	cr_assert_eq(cf_strv_add(&f.p.allow_read, "/Users/u/.ssh/known_hosts"), 0);
	cr_assert_eq(cf_profile_build(&pf, &f.p), 0);
	cr_expect(strstr(pf.text, "(allow file-read* (subpath (param \"R0\")))\n"), "%s", pf.text);
	cr_expect(!strstr(pf.text, "known_hosts"), "a path in the text:\n%s", pf.text);
	cr_expect_str_eq(cf_profile_param(&pf, "R0"), "/Users/u/.ssh/known_hosts");
	cr_expect_str_eq(cf_profile_param(&pf, "R1"), DATA "/Users/u/.ssh/known_hosts");
	cr_expect_gt(first_line(pf.text, "(allow file-read* (subpath (param \"R0"),
		     last_line(pf.text, "(deny file-read* (subpath "));
	sb_load(&m, &pf);
	cr_expect(sb_allowed(&m, "file-read-data", "/Users/u/.ssh/known_hosts"));
	cr_expect(sb_allowed(&m, "file-read-data", DATA "/Users/u/.ssh/known_hosts"));
	cr_expect(!sb_allowed(&m, "file-read-data", "/Users/u/.ssh/id_ed25519"));
	cr_expect(!sb_allowed(&m, "file-read-data", "/Users/u/.ssh/id_made_later"));
	cr_expect(!sb_allowed(&m, "file-read-data", "/Users/u/.ssh/known_hosts2"));
	cr_expect(!sb_allowed(&m, "file-read-data", "/Users/u/.ssh"));
	cr_expect(!sb_allowed(&m, "file-write-data", "/Users/u/.ssh/known_hosts"));
	cr_expect(!sb_allowed(&m, "file-write-unlink", "/Users/u/.ssh/known_hosts"));
	sb_free(&m);
	cf_profile_free(&pf);
	cf_strv_free(&f.p.allow_read);
	fixture_free(&f);
}
