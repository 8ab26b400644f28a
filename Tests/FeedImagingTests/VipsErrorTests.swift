import CVips
import ConcurrencyPrimitives
import FeedStore
import Foundation
import Testing

@testable import FeedImaging

/// libvips' words for a process out of threads or memory are the server's fault, not the image's.
@Suite struct VipsErrorTests {
    @Test func threadAndMemoryFailuresAreTheServers() {
        #expect(VipsErrorIsolation.isServerFault("vips_threadpool_run: unable to create thread"))
        #expect(VipsErrorIsolation.isServerFault("Error creating thread: Resource temporarily unavailable"))
        #expect(VipsErrorIsolation.isServerFault("vips_tracked_malloc: out of memory --- size == 48MB"))
        #expect(VipsErrorIsolation.isServerFault("VipsJpeg: Insufficient memory (case 4)"))
        #expect(VipsErrorIsolation.isServerFault("vips__region_start: unable to calloc 4096 bytes"))
        #expect(VipsErrorIsolation.isServerFault("webpload: VP8_STATUS_OUT_OF_MEMORY"))
        #expect(!VipsErrorIsolation.isServerFault("VipsJpeg: Premature end of input file"))
        #expect(!VipsErrorIsolation.isServerFault("VipsForeignLoad: \"x.jpg\" is not a known file format"))
    }

    /// A failure being diagnosed holds the gate exclusively for a whole decode, on a lowered
    /// thread; a header probe (run by publishes and reads at normal priority) does not wait for it.
    @Test func aHeaderProbeDoesNotWaitForAFailureBeingDiagnosed() throws {
        try Vips.start()
        let calls = Lock(0)
        let diagnosing = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        try DetachedThread.start {
            _ = try? VipsErrorIsolation.run("a failing decode") { () -> Int? in
                if calls.withLock({
                    $0 += 1
                    return $0
                }) == 2 {  // the re-run, holding the gate exclusively
                    diagnosing.signal()
                    _ = release.wait(timeout: .now() + 30)
                }
                return nil
            }
            finished.signal()
        }
        #expect(diagnosing.wait(timeout: .now() + 10) == .success)
        let probed = Lock<Int?>(nil)
        try DetachedThread.start {
            let value = VipsErrorIsolation.runProbe { 42 }
            probed.withLock { $0 = value }
        }
        var waited = 0
        while probed.withLock({ $0 }) == nil, waited < 5_000 {
            usleep(1_000)
            waited += 1
        }
        #expect(probed.withLock { $0 } == 42, "the probe waited for the diagnosis")
        release.signal()
        #expect(finished.wait(timeout: .now() + 10) == .success)
    }

    /// A probe that fails while a failure is diagnosed writes into libvips' one buffer; the
    /// diagnosis is made again, so its text is its own.
    @Test func aProbeFailingDuringADiagnosisLeavesItsTextOut() throws {
        try Vips.start()
        /// libvips' text for a file that is not there, written straight into its buffer (a
        /// buffer's "not in a known format" would not do: that lookup empties the buffer first).
        @Sendable func failHeaderRead(_ path: String = "/nonexistent/diagnosed.jpg") {
            var header = CVips_Header()
            _ = CVips_read_header_file(path, &header)
        }
        // The text alone, read through the gate (other suites decode in parallel).
        var alone = ""
        do {
            _ = try VipsErrorIsolation.run("a failing decode") { () -> Int? in
                failHeaderRead()
                return nil
            }
        } catch {
            alone = "\(error)"
        }
        #expect(alone.contains("diagnosed.jpg"))
        let calls = Lock(0)
        let diagnosing = DispatchSemaphore(value: 0)
        let probed = DispatchSemaphore(value: 0)
        let outcome = Lock<String?>(nil)
        try DetachedThread.start {
            do {
                _ = try VipsErrorIsolation.run("a failing decode") { () -> Int? in
                    if calls.withLock({
                        $0 += 1
                        return $0
                    }) == 2 {  // the first run holding the gate exclusively
                        diagnosing.signal()
                        _ = probed.wait(timeout: .now() + 30)
                    }
                    failHeaderRead()
                    return nil
                }
            } catch {
                outcome.withLock { $0 = "\(error)" }
            }
        }
        #expect(diagnosing.wait(timeout: .now() + 10) == .success)
        VipsErrorIsolation.runProbe { failHeaderRead("/nonexistent/probed.jpg") }
        probed.signal()
        var waited = 0
        while outcome.withLock({ $0 }) == nil, waited < 10_000 {
            usleep(1_000)
            waited += 1
        }
        #expect(outcome.withLock { $0 } == alone)
        #expect(calls.withLock { $0 } >= 3, "one diagnosis beside the probe, one alone")
    }

    @Test func fileNamesInLibvipsTextsLoseTheirFolders() {
        let text = #"VipsForeignLoad: "/root/data/.uploads/u-1/part-3" is not a known file format"#
        #expect(VipsErrorIsolation.withoutFolders(text) == #"VipsForeignLoad: "part-3" is not a known file format"#)
        #expect(VipsErrorIsolation.withoutFolders(#"a "/x/y" b "/z" c"#) == #"a "y" b "z" c"#)
        #expect(VipsErrorIsolation.withoutFolders(#"open "/tmp/unterminated"#) == #"open "unterminated"#)
        #expect(
            VipsErrorIsolation.withoutFolders("VipsJpeg: Premature end of input file")
                == "VipsJpeg: Premature end of input file")
    }
}
