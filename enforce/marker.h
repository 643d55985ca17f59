/* The harness marker (marker.c), portable: what credfence harness and the
 * shim's launch write and the shim's constructor reads. */
#ifndef CF_MARKER_H
#define CF_MARKER_H

/* The harness marker CREDFENCE_HARNESS holds "PID:STARTTIME" of the one process
 * that is the harness. True when VALUE names the calling process. */
int cf_harness_marker_is_self(const char *value);
/* "CREDFENCE_HARNESS=PID:STARTTIME" of the calling process into BUF (CAP
 * bytes), the one writer of what cf_harness_marker_is_self reads. Raw
 * syscalls and stack only: callable between fork and exec. False when the
 * start time can not be read or BUF is too small. */
#define CF_HARNESS_MARKER_VAR "CREDFENCE_HARNESS"
int cf_harness_marker_self(char *buf, unsigned long cap);

#endif
