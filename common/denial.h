/* A denial in words: the one line the shim writes to a fenced program's
 * stderr and `credfence explain` prints for a logged denial (issue 24). */
#ifndef CF_DENIAL_H
#define CF_DENIAL_H

#include <stdbool.h>
#include <stddef.h>

/* The row words of a write outside every writable location: a terminal
 * under /dev/pts gets its own (a pty another process holds, which
 * --allow-ptys opens, not --writable). */
#define CF_DENIAL_PTY_ROW "a terminal under /dev/pts that the command did not open"
bool cf_denial_is_pty(const char *path);
const char *cf_denial_row(const char *path);

/* The option that would allow a denial of PATH (canonical): "--allow-read
 * P" for a secret read, "--allow-ptys" for a write of a terminal under
 * /dev/pts, "--writable DIR" for any other write outside every
 * writable location, NULL for a write into a secret (no option makes a
 * secret writable). PATH under HOME (may be NULL) is shown as ~/...; OUT
 * gets the option and its argument. */
const char *cf_denial_allow(char *out, size_t cap, const char *path, bool write, bool secret,
			    const char *home);

/* "credfence: denied read of ~/.ssh/id_ed25519 (SSH private keys, known
 * hosts and config); to allow: --allow-read ~/.ssh/id_ed25519, or see:
 * credfence check ~/.ssh/id_ed25519\n" into OUT; HOLDS is the secret row's
 * words, NULL for a write outside every writable location. Returns the
 * length written (cut to CAP - 1). No allocation. */
size_t cf_denial_words(char *out, size_t cap, const char *path, bool write, const char *holds,
		       const char *home);

/* A write refused because a fenced command may not change what the user's
 * own tools run later (common/protected.h, issue 23): "credfence: denied
 * write of ~/w/.git/config (runs unfenced later: git config ...); to allow:
 * --allow-write-protected ~/w/.git/config, or see: credfence check
 * ~/w/.git/config\n". RUNS is the row's words, LOC the location the row
 * covers (what a lift must name: the read-only mount is made there). Returns
 * the length written (cut to CAP - 1). No allocation. */
size_t cf_denial_protected_words(char *out, size_t cap, const char *path, const char *runs,
				 const char *loc, const char *home);

/* What credfence made or keeps for itself, which no fenced command may
 * write and no option opens (issue 36): a denied write there is credfence's
 * own to explain, with no hint to loosen the fence. Each is canonical, or
 * NULL when there is none. */
struct cf_denial_own {
	const char *tmpdir;  /* the harness's private TMPDIR (CREDFENCE_HARNESS_TMPDIR) */
	const char *runtime; /* $XDG_RUNTIME_DIR: each harness-tmp.* in it is a harness's */
	const char *state;   /* credfence's state: $XDG_STATE_HOME/credfence, ~/.local/state/credfence */
	const char *log;     /* the log (--log, CREDFENCE_LOG) */
};

/* The words for PATH (canonical) when it is one of OWN's, else NULL. */
const char *cf_denial_own_row(const struct cf_denial_own *own, const char *path);

/* "credfence: denied write of ~/.local/state/credfence/harness-tmp.X/f
 * (the harness's own temporary directory, made by credfence); no fenced
 * command may write there, and no option changes that\n" into OUT: ROW is
 * cf_denial_own_row's words. Returns the length written (cut to CAP - 1).
 * No allocation. */
size_t cf_denial_own_words(char *out, size_t cap, const char *path, const char *row,
			   const char *home);

/* Whether PATH (canonical) is one of ssh's key files in the secret
 * location LOC: LOC is a .ssh directory and PATH lies in it, but is not
 * known_hosts, known_hosts2 or config (what ssh reads besides its keys). */
bool cf_denial_ssh_key(const char *path, const char *loc);

/* A key file PATH refused to ssh: "credfence: denied read of
 * ~/.ssh/id_ed25519 (HOLDS); ssh can sign with your agent instead of its
 * key files: to allow: --ssh-agent\n" (issue 36: not --allow-read of a
 * private key); with AGENT (the agent's socket is allowed already): "...;
 * ssh signs with your agent here (--ssh-agent): if it has no key, add one
 * to it outside the fence (ssh-add)\n". Returns the length written (cut
 * to CAP - 1). */
size_t cf_denial_ssh_key_words(char *out, size_t cap, const char *path, const char *holds,
			       bool agent, const char *home);

/* A refused connect to the Unix socket PATH (canonical), when credfence
 * knows what it is: the ssh agent (PATH is SSH_AGENT, canonical
 * $SSH_AUTH_SOCK; may be NULL): "credfence: denied connect to P (your ssh
 * agent, $SSH_AUTH_SOCK); to allow: --ssh-agent\n"; gpg-agent's sockets
 * (S.gpg-agent, S.gpg-agent.*): "... (gpg-agent); to allow: --allow-socket
 * P\n". 0 for any other socket (a notice for every refused socket would
 * name nscd's and D-Bus's, which programs try and do without). */
size_t cf_denial_connect_words(char *out, size_t cap, const char *path, const char *ssh_agent,
			       const char *home);

/* "--allow-write-protected LOC" (LOC under HOME as ~/...) in OUT. */
const char *cf_denial_protected_allow(char *out, size_t cap, const char *loc, const char *home);

/* PATH under HOME as ~/..., else PATH itself, in OUT. */
const char *cf_denial_tilde(char *out, size_t cap, const char *path, const char *home);

#endif
