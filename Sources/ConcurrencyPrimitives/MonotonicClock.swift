#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Monotonic time, for durations and revalidation intervals (never steps with the wall clock).
public enum MonotonicClock {
    /// Nanoseconds from an arbitrary fixed point (`clock_gettime(CLOCK_MONOTONIC)`).
    public static func nanos() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    /// The same clock as of the last timer tick (`CLOCK_MONOTONIC_COARSE`: a few milliseconds
    /// behind at most, and cheaper to read), for deadlines measured in seconds.
    public static func coarseNanos() -> Int64 {
        #if os(Linux)
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
        #else
        return nanos()
        #endif
    }
}
