// The calling thread's name and scheduling on Linux. `pthread_setname_np` is declared only under
// _GNU_SOURCE, which the Glibc module is built without; `prctl` and `syscall` are variadic, which
// Swift cannot call; glibc has no wrapper for `sched_getattr`/`sched_setattr`.
#include <linux/sched/types.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/// Names the calling thread (`prctl(PR_SET_NAME)`: at most 15 bytes are kept); 0 on success.
static inline int CThreadScheduling_set_name(const char *name) { return prctl(PR_SET_NAME, name, 0, 0, 0); }

/// The calling thread's scheduling attributes; 0 on success, else -1 and errno.
static inline int CThreadScheduling_get(struct sched_attr *attributes) {
    memset(attributes, 0, sizeof *attributes);
    return (int)syscall(SYS_sched_getattr, 0, attributes, sizeof *attributes, 0);
}

/// Sets the calling thread's scheduling attributes; 0 on success, else -1 and errno.
static inline int CThreadScheduling_set(struct sched_attr *attributes) {
    attributes->size = sizeof *attributes;
    return (int)syscall(SYS_sched_setattr, 0, attributes, 0);
}

/// Whether a policy is the fair scheduler's (SCHED_OTHER, SCHED_BATCH), whose threads have a
/// nice value and, from Linux 6.12, a time slice (`sched_runtime`).
static inline int CThreadScheduling_is_fair(unsigned int policy) { return policy == 0 || policy == 3; }
