// glibc's allocator controls (<malloc.h>, which the Glibc module does not export).
#include <malloc.h>

/// Fixes the size from which glibc gives a block a mapping of its own (M_MMAP_THRESHOLD), which
/// also stops glibc from raising it after frees; 1 on success, 0 otherwise.
static inline int CAllocator_fix_mmap_threshold(int bytes) { return mallopt(M_MMAP_THRESHOLD, bytes); }

/// Caps how many arenas glibc keeps for the process's threads (M_ARENA_MAX); 1 on success, 0 otherwise.
static inline int CAllocator_set_arena_max(int count) { return mallopt(M_ARENA_MAX, count); }

/// Bytes usable in a block from malloc: for a block with a mapping of its own, its request rounded
/// up to whole pages (less the header), which tells such blocks apart.
static inline size_t CAllocator_usable_size(void *block) { return malloc_usable_size(block); }
