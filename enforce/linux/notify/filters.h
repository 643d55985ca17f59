/* The seccomp filters as classic BPF, compiled by libseccomp at build time
 * (filter_gen.c, a program of the build; its output filters_gen.c): a child
 * installs one of these arrays between fork and exec with one seccomp() call,
 * with no builder and no libseccomp in the process. */
#ifndef CF_FILTERS_H
#define CF_FILTERS_H

struct sock_filter;

struct cf_bpf {
	const struct sock_filter *f;
	unsigned short len;
};

/* The IPC filter (ipc.c, supervisor_wire.h), by CF_IPC_BPF_INDEX. */
#define CF_IPC_BPF_INDEX(meta_by_mounts, dgram) ((meta_by_mounts) ? 2 : 0) + ((dgram) ? 1 : 0)
extern const struct cf_bpf cf_ipc_bpf_x86_64[4], cf_ipc_bpf_aarch64[4];
/* The terminal filter (ttyfilter.h). */
extern const struct cf_bpf cf_tty_bpf_x86_64, cf_tty_bpf_aarch64, cf_tty_bpf_riscv64;

#if defined(__x86_64__)
#define CF_IPC_BPF cf_ipc_bpf_x86_64
#define CF_TTY_BPF cf_tty_bpf_x86_64
#elif defined(__aarch64__)
#define CF_IPC_BPF cf_ipc_bpf_aarch64
#define CF_TTY_BPF cf_tty_bpf_aarch64
#elif defined(__riscv) && __riscv_xlen == 64
#define CF_TTY_BPF cf_tty_bpf_riscv64 /* no IPC filter yet */
#endif

#endif
