#if canImport(CAllocator)
import CAllocator
#endif

/// How the process asks glibc's allocator to give memory back.
///
/// glibc serves a large block with its own mapping and unmaps it when freed, but after the first
/// such free it raises that threshold to the freed block's size (up to 32 MiB), so later bodies,
/// renders and parses of a few MiB come from the heap arenas, which keep them after they are
/// freed: eight 4–6 MiB feeds read and deleted left 170–190 MiB resident for good. A fixed
/// threshold of 1 MiB stops the raising (and with it the trim threshold's), so every block from
/// 1 MiB up is returned the moment it is freed, at the cost of one mapping per such block.
public enum AllocatorTuning {
    /// Blocks from this many bytes up get a mapping of their own.
    public static let mmapThresholdBytes: Int32 = 1 << 20

    /// Fixes the threshold, unless the environment sets glibc's own (`MALLOC_MMAP_THRESHOLD_`, or
    /// `glibc.malloc.mmap_threshold` in `GLIBC_TUNABLES`), which then decides.
    public static func apply(environment: [String: String]) {
        #if canImport(CAllocator)
        guard environment["MALLOC_MMAP_THRESHOLD_"] == nil,
            environment["GLIBC_TUNABLES"]?.contains("glibc.malloc.mmap_threshold") != true
        else { return }
        _ = CAllocator_fix_mmap_threshold(mmapThresholdBytes)
        #endif
    }
}
