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
#define CF_PROF_BUCKETS 20000 /* of 0.1 us: up to 2 ms, the rest in the last */
extern _Atomic long long cf_prof_ns[CF_PROF_N], cf_prof_n[CF_PROF_N];
extern _Atomic int cf_prof_h[CF_PROF_N][CF_PROF_BUCKETS];
static inline void cf_prof_add(int step, long long ns)
{
	long long b = ns / 100;
	cf_prof_h[step][b < CF_PROF_BUCKETS ? b : CF_PROF_BUCKETS - 1]++;
	cf_prof_ns[step] += ns;
	cf_prof_n[step]++;
}
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
		cf_prof_add(CF_PROF_##step, now_ - cf_prof_last);                                 \
		cf_prof_last = now_;                                                              \
	} while (0)
#define CF_PROF_FROM(step, t0)                                                                    \
	do {                                                                                      \
		long long now_ = cf_prof_now();                                                   \
		cf_prof_add(CF_PROF_##step, now_ - (t0));                                         \
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
