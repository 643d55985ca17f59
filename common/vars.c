#include "vars.h"

#include <stdio.h>
#include <string.h>

#include "options.h"

#define AT(f) .slot = offsetof(struct cf_options, f), .parsed = true
#define LIST_AT(f) AT(f), .from_cli = offsetof(struct cf_options, f##_from_cli)
/* A list, or a value whose default is 0 (CF_KIND_PROTECT), records whether
 * the command line gave it: then the twin is not read. */
/* Read by the shim or the CLI itself, not by cf_options_from_env. */
#define NOT_PARSED .parsed = false
/* The row's key in a policy file (cli/config.c): the option's name without
 * its dashes, '-' written '_' (tests/common/test_vars.c holds it so). */
#define KEY(k) .key = k

/* The user's options and their twins, then what credfence writes for itself. */
#define TWIN (CF_BY_CREDFENCE | CF_BY_SHIM)
#define EXPORTED (CF_SET_USER | CF_SET_EXPORT)
/* And credfence run exports it to CMD: the rows the shim's judge of a denial
 * builds its policy from (shim/linux/denied.c). */
#define JUDGED (EXPORTED | CF_SET_RUN)

const struct cf_var_row cf_vars[CF_VAR_COUNT] = {
	[CF_VAR_HOME] = {"CREDFENCE_HOME", "--home DIR", CF_KIND_PATH, TWIN, JUDGED,
			 "the home whose secrets are denied", AT(home), KEY("home")},
	[CF_VAR_WORKSPACE] = {"CREDFENCE_WORKSPACE", "--workspace DIR", CF_KIND_PATH, TWIN,
			      JUDGED, "the writable workspace", AT(workspace), KEY("workspace")},
	[CF_VAR_LOG] = {"CREDFENCE_LOG", "--log FILE", CF_KIND_PATH, TWIN, EXPORTED,
			"the JSON-lines log of sandbox applications", AT(log), KEY("log")},
	[CF_VAR_WRITABLE] = {"CREDFENCE_WRITABLE", "--writable DIR", CF_KIND_PATHS, TWIN,
			     JUDGED, "more writable locations", LIST_AT(writable),
			     KEY("writable")},
	[CF_VAR_DENY] = {"CREDFENCE_DENY", "--deny PATH", CF_KIND_PATHS, TWIN, JUDGED,
			 "more secret locations", LIST_AT(deny), KEY("deny")},
	[CF_VAR_ALLOW_READ] = {"CREDFENCE_ALLOW_READ", "--allow-read PATH", CF_KIND_PATHS, TWIN,
			       JUDGED, "secret locations, or paths inside one, fenced programs read",
			       LIST_AT(allow_read), KEY("allow_read")},
	[CF_VAR_HARNESS_STATE] = {"CREDFENCE_HARNESS_STATE", "--harness-state DIR", CF_KIND_PATHS,
				  TWIN, EXPORTED,
				  "a harness's state directories its children write",
				  LIST_AT(harness_state), KEY("harness_state")},
	[CF_VAR_DENY_ENV] = {"CREDFENCE_DENY_ENV", "--deny-env NAME", CF_KIND_LIST, TWIN, EXPORTED,
			     "more variables fenced programs do not get", LIST_AT(deny_env),
			     KEY("deny_env")},
	[CF_VAR_KEEP_ENV] = {"CREDFENCE_KEEP_ENV", "--keep-env NAME", CF_KIND_LIST, TWIN, EXPORTED,
			     "secret variables fenced programs get all the same",
			     LIST_AT(keep_env), KEY("keep_env")},
	[CF_VAR_ALLOW_WRITE_PROTECTED] = {"CREDFENCE_ALLOW_WRITE_PROTECTED",
					  "--allow-write-protected PATH", CF_KIND_PATHS, TWIN,
					  JUDGED,
					  "protected locations fenced programs may write all the same",
					  LIST_AT(allow_write_protected), KEY("allow_write_protected")},
	[CF_VAR_MODE] = {"CREDFENCE_MODE", "--best-effort, --required", CF_KIND_MODE, TWIN,
			 EXPORTED, "whether to run when isolation can not be applied", AT(mode),
			 KEY("mode")},
	[CF_VAR_WRITE_PROTECT] = {"CREDFENCE_WRITE_PROTECT", "--write-protect MODE", CF_KIND_PROTECT,
				  TWIN, EXPORTED,
				  "whether to run when write protection can not be applied",
				  LIST_AT(write_protect), KEY("write_protect")},
	[CF_VAR_ALLOW_PTYS] = {"CREDFENCE_ALLOW_PTYS", "--allow-ptys", CF_KIND_SWITCH, TWIN,
			       EXPORTED, "fenced programs may open any pty by its name",
			       AT(allow_ptys), KEY("allow_ptys")},
	[CF_VAR_QUIET_DENIALS] = {"CREDFENCE_QUIET_DENIALS", "--quiet-denials", CF_KIND_SWITCH, TWIN,
				  JUDGED, "no line on a fenced program's stderr for a denial",
				  AT(quiet_denials), KEY("quiet_denials")},
	[CF_VAR_ALLOW_SOCKET] = {"CREDFENCE_ALLOW_SOCKET", "--allow-socket S", CF_KIND_LIST, TWIN,
				 JUDGED, "Unix sockets bound outside that fenced programs may reach",
				 LIST_AT(allow_sockets), KEY("allow_socket")},
	[CF_VAR_SSH_AGENT] = {"CREDFENCE_SSH_AGENT", "--ssh-agent", CF_KIND_SWITCH, TWIN,
			      CF_SET_USER, "allow the socket $SSH_AUTH_SOCK names",
			      AT(ssh_agent), KEY("ssh_agent")},
	[CF_VAR_HARNESS_MAY_READ] = {"CREDFENCE_HARNESS_MAY_READ", "--harness-may-read P",
				     CF_KIND_PATHS, TWIN, CF_SET_USER,
				     "secret locations the harness itself may read",
				     LIST_AT(harness_may_read), KEY("harness_may_read")},
	[CF_VAR_HARNESS_PROGRAM] = {"CREDFENCE_HARNESS_PROGRAM", "--harness-program PATH",
				    CF_KIND_PATHS, TWIN, EXPORTED,
				    "programs the harness starts that are the harness too",
				    LIST_AT(harness_programs), KEY("harness_program")},
	[CF_VAR_STATIC_HARNESS] = {"CREDFENCE_STATIC_HARNESS", "--static-harness", CF_KIND_SWITCH,
				   TWIN, EXPORTED, "accept a harness that loads no shim",
				   AT(static_harness), KEY("static_harness")},
	[CF_VAR_MAX_ENTRIES] = {"CREDFENCE_MAX_ENTRIES", "--max-entries N", CF_KIND_NUMBER, TWIN,
				EXPORTED, "most entries read from one directory",
				AT(max_entries), KEY("max_entries")},
	[CF_VAR_CONFIG] = {"CREDFENCE_CONFIG", "--config FILE", CF_KIND_PATH, CF_BY_CREDFENCE,
			   CF_SET_USER, "a policy file read after the user's", AT(config)},
	[CF_VAR_SETTINGS] = {"CREDFENCE_SETTINGS", "--settings FILE", CF_KIND_PATHS,
			     CF_BY_CREDFENCE, CF_SET_USER, "Claude Code sandbox settings to read",
			     LIST_AT(settings), KEY("settings")},
	[CF_VAR_SUPERVISOR] = {"CREDFENCE_SUPERVISOR", NULL, CF_KIND_ADDRESS, TWIN,
			       CF_SET_HARNESS, "the IPC supervisor that serves the harness's children",
			       AT(supervisor)},
	[CF_VAR_HARNESS_TMPDIR] = {"CREDFENCE_HARNESS_TMPDIR", NULL, CF_KIND_PATH, TWIN,
				   CF_SET_HARNESS, "the harness's private TMPDIR",
				   AT(harness_tmpdir)},
	[CF_VAR_CHILD_TMPDIR] = {"CREDFENCE_CHILD_TMPDIR", NULL, CF_KIND_PATH, TWIN,
				 CF_SET_HARNESS, "the TMPDIR the harness's children get back",
				 AT(child_tmpdir)},
	[CF_VAR_HARNESS] = {"CREDFENCE_HARNESS", NULL, CF_KIND_MARKER, CF_BY_SHIM, CF_SET_HARNESS,
			    "the process that has the harness role", NOT_PARSED},
	[CF_VAR_LAUNCHER] = {"CREDFENCE_LAUNCHER", NULL, CF_KIND_PATH, CF_BY_SHIM, CF_SET_HARNESS,
			     "the credfence a child is run through when its environment moves a secret",
			     NOT_PARSED},
	[CF_VAR_FENCED_NS] = {"CREDFENCE_FENCED_NS", NULL, CF_KIND_MARKER, CF_BY_SHIM,
			      CF_SET_HARNESS,
			      "the descriptors of the mount namespace the harness's children enter",
			      NOT_PARSED},
	[CF_VAR_SCRIPT] = {"CREDFENCE_SCRIPT", NULL, CF_KIND_PATH, CF_BY_CREDFENCE, CF_SET_SCRIPT,
			   "the launcher script that ran credfence", NOT_PARSED},
};

const struct cf_var_row *cf_var_find(const char *name)
{
	for (size_t i = 0; i < CF_VAR_COUNT; i++)
		if (strcmp(cf_vars[i].name, name) == 0)
			return &cf_vars[i];
	return NULL;
}

const char *cf_var_kind_word(enum cf_var_kind kind)
{
	switch (kind) {
	case CF_KIND_PATH:
		return "path";
	case CF_KIND_PATHS:
		return "path list";
	case CF_KIND_LIST:
		return "list";
	case CF_KIND_SWITCH:
		return "switch";
	case CF_KIND_MODE:
		return "mode";
	case CF_KIND_PROTECT:
		return "warn or require";
	case CF_KIND_NUMBER:
		return "number";
	case CF_KIND_ADDRESS:
		return "address";
	case CF_KIND_MARKER:
		return "marker";
	}
	return "?";
}

const char *cf_var_label(enum cf_var v, char *buf, size_t cap)
{
	const char *opt = cf_vars[v].option;
	if (opt)
		snprintf(buf, cap, "%.*s (%s)", (int)strcspn(opt, " ,"), opt, cf_vars[v].name);
	else
		snprintf(buf, cap, "%s", cf_vars[v].name);
	return buf;
}
