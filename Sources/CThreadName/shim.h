// Naming the calling thread on Linux. `pthread_setname_np` is declared only under _GNU_SOURCE,
// which the Glibc module is built without, and `prctl` is variadic, which Swift cannot call.
#include <sys/prctl.h>

/// Names the calling thread (`prctl(PR_SET_NAME)`: at most 15 bytes are kept); 0 on success.
static inline int CThreadName_set_current(const char *name) { return prctl(PR_SET_NAME, name, 0, 0, 0); }
