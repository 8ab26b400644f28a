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
}
