#if canImport(CAllocator)
import CAllocator
#endif

#if canImport(Glibc)
import Glibc
#endif

/// How the process asks glibc's allocator to give memory back.
///
/// glibc serves a large block with its own mapping and unmaps it when freed, but after the first
/// such free it raises that threshold to the freed block's size (up to 32 MiB), so later bodies,
/// renders and parses of a few MiB come from the heap arenas, which keep them after they are
/// freed: eight 4–6 MiB feeds read and deleted left 170–190 MiB resident for good. A fixed
/// threshold of 1 MiB stops the raising (and with it the trim threshold's), so every block from
/// 1 MiB up is returned the moment it is freed, at the cost of one mapping per such block.
///
/// glibc also gives threads up to eight arenas per core, each keeping what its threads freed.
/// Images are decoded on many threads (the pack's, the prefetch's, libvips' workers): one photo
/// publish left 15 arenas, and 48 photos peaked 10 MiB higher than with one arena per core, which
/// is as many as can allocate at once.
public enum AllocatorTuning {
    /// Blocks from this many bytes up get a mapping of their own.
    public static let mmapThresholdBytes: Int32 = 1 << 20

    /// The most arenas: one per core, at least two.
    public static var arenaLimit: Int32 {
        #if canImport(Glibc)
        return Int32(clamping: max(2, sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        #else
        return 2
        #endif
    }

    /// Fixes the threshold and the arena limit, unless the environment sets glibc's own
    /// (`MALLOC_MMAP_THRESHOLD_`, `MALLOC_ARENA_MAX`, or either in `GLIBC_TUNABLES`), which then
    /// decides.
    public static func apply(environment: [String: String]) {
        #if canImport(CAllocator)
        let tunables = environment["GLIBC_TUNABLES"] ?? ""
        if environment["MALLOC_MMAP_THRESHOLD_"] == nil, !tunables.contains("glibc.malloc.mmap_threshold") {
            _ = CAllocator_fix_mmap_threshold(mmapThresholdBytes)
        }
        if environment["MALLOC_ARENA_MAX"] == nil, !tunables.contains("glibc.malloc.arena_max") {
            _ = CAllocator_set_arena_max(arenaLimit)
        }
        #endif
    }
}
