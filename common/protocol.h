/* The harness protocol in one place: what `credfence harness` writes and the
 * shim reads besides the CREDFENCE_* twins (common/policy.c reads those): the
 * shim's file name, the loader variable that inserts it and how the loader
 * splits it, and the words of a mode. Portable. */
#ifndef CF_PROTOCOL_H
#define CF_PROTOCOL_H

#ifdef __APPLE__
#define CF_SHIM_FILE "libcredfence.dylib"
#define CF_PRELOAD_VAR "DYLD_INSERT_LIBRARIES"
#define CF_PRELOAD_SEPS ":" /* dyld splits at colons only */
#define CF_PRELOAD_SEP(c) ((c) == ':')
#else
#define CF_SHIM_FILE "libcredfence.so"
/* What a fenced program loads in its place, from the same directory
 * (shim/linux/fenced_lib.c): only what explains a denial. */
#define CF_FENCED_SHIM_FILE "libcredfence-fenced.so"
/* What it loads at its first denial, from the same directory
 * (shim/linux/judge_load.c): the judge. Without it beside the two, fenced
 * programs load libcredfence.so itself, which has the judge linked in. */
#define CF_JUDGE_FILE "libcredfence-judge.so"
#define CF_PRELOAD_VAR "LD_PRELOAD"
#define CF_PRELOAD_SEPS ": " /* ld.so splits at spaces and colons */
#define CF_PRELOAD_SEP(c) ((c) == ':' || (c) == ' ')
#endif
#define CF_PRELOAD_EQ CF_PRELOAD_VAR "="

/* CREDFENCE_MODE's words, as the twin takes them and status shows them. */
#define CF_MODE_WORD_REQUIRED "required"
#define CF_MODE_WORD_BEST_EFFORT "best-effort"
#define cf_mode_word(m) ((m) == CF_MODE_BEST_EFFORT ? CF_MODE_WORD_BEST_EFFORT : CF_MODE_WORD_REQUIRED)

#endif
