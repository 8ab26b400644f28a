#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Checks the result of a pthread call that cannot fail in a correct program.
///
/// The locks and conditions here are always initialised before use, never destroyed while held
/// and never taken recursively, so a non-zero result (`EINVAL`, `EDEADLK`, `EPERM`) means memory
/// is corrupt or the code is wrong: going on would break mutual exclusion silently, so the
/// process stops with the call's name and error instead (as swift-nio's locks do).
@inlinable @inline(__always)
func checkPthread(_ result: Int32, _ call: StaticString) {
    if result != 0 { pthreadFailed(result, call) }
}

@usableFromInline @inline(never)
func pthreadFailed(_ result: Int32, _ call: StaticString) -> Never {
    fatalError("\(call) failed: \(String(cString: strerror(result))) (\(result))")
}
