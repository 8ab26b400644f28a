// The calling thread's name and time slice on Linux. `pthread_setname_np` is declared only under
// _GNU_SOURCE, which the Glibc module is built without; `prctl` and `syscall` are variadic, which
// Swift cannot call; glibc has no wrapper for `sched_setattr`.
#include <linux/sched/types.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/// Names the calling thread (`prctl(PR_SET_NAME)`: at most 15 bytes are kept); 0 on success.
static inline int CThreadScheduling_set_name(const char *name) { return prctl(PR_SET_NAME, name, 0, 0, 0); }

/// Sets the calling thread's time slice under the fair scheduler (`sched_attr.sched_runtime`,
/// Linux 6.12 and later; 0 restores the default), keeping its policy (`SCHED_OTHER`) and
/// `nice` value. Threads it starts afterwards inherit it. 0 on success, else -1 and errno.
static inline int CThreadScheduling_set_slice(unsigned long long nanoseconds, int nice) {
    struct sched_attr attributes;
    memset(&attributes, 0, sizeof attributes);
    attributes.size = sizeof attributes;
    attributes.sched_policy = 0;  // SCHED_OTHER
    attributes.sched_nice = nice;
    attributes.sched_runtime = nanoseconds;
    return (int)syscall(SYS_sched_setattr, 0, &attributes, 0);
}

/// The calling thread's time slice in nanoseconds (`sched_getattr`), 0 when the kernel cannot say.
static inline unsigned long long CThreadScheduling_slice(void) {
    struct sched_attr attributes;
    memset(&attributes, 0, sizeof attributes);
    if (syscall(SYS_sched_getattr, 0, &attributes, sizeof attributes, 0) != 0) return 0;
    return attributes.sched_runtime;
}
