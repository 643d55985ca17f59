/* Counters around the steps of a round trip, compiled in only with
 * -DCF_SUP_PROF (meson configure -Dc_args=-DCF_SUP_PROF): each step's time
 * is summed per step, and the sums are written to stderr as the supervisor
 * ends. Measurement only (issue 22); without the define every macro is
 * empty. */
#ifndef CF_SUP_PROF_H
#define CF_SUP_PROF_H

#ifdef CF_SUP_PROF
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#define CF_PROF_STEPS(X)                                                                          \
	X(poll_to_recv) X(recv) X(caller_open) X(dispatch) X(peek) X(take_fd) X(valid) X(fcntl) \
	X(enqueue) X(worker_wake) X(unix_pin) X(unix_fstat) X(unix_policy) X(unix_bound)           \
	X(unix_creds) X(connect) X(respond) X(close_free)
#define CF_PROF_ENUM(n) CF_PROF_##n,
enum { CF_PROF_STEPS(CF_PROF_ENUM) CF_PROF_N };
#define CF_PROF_KEEP 65536
extern _Atomic long long cf_prof_ns[CF_PROF_N], cf_prof_n[CF_PROF_N];
extern int cf_prof_s[CF_PROF_N][CF_PROF_KEEP];
extern _Thread_local long long cf_prof_last;
static inline long long cf_prof_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}
#define CF_PROF_MARK() (cf_prof_last = cf_prof_now())
#define CF_PROF(step)                                                                             \
	do {                                                                                      \
		long long now_ = cf_prof_now();                                                   \
		cf_prof_ns[CF_PROF_##step] += now_ - cf_prof_last;                                \
		cf_prof_s[CF_PROF_##step][cf_prof_n[CF_PROF_##step]++ % CF_PROF_KEEP] = (int)(now_ - cf_prof_last); \
		cf_prof_last = now_;                                                              \
	} while (0)
#define CF_PROF_FROM(step, t0)                                                                    \
	do {                                                                                      \
		long long now_ = cf_prof_now();                                                   \
		cf_prof_ns[CF_PROF_##step] += now_ - (t0);                                        \
		cf_prof_s[CF_PROF_##step][cf_prof_n[CF_PROF_##step]++ % CF_PROF_KEEP] = (int)(now_ - (t0)); \
		cf_prof_last = now_;                                                              \
	} while (0)
void cf_prof_dump(void);
#else
#define CF_PROF_MARK() ((void)0)
#define CF_PROF(step) ((void)0)
#define CF_PROF_FROM(step, t0) ((void)0)
#define cf_prof_dump() ((void)0)
#endif

#endif
