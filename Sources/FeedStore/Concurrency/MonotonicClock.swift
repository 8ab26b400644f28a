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
}
