/// The platform limits a widget feed runs into on a device, in one table with their sources.
///
/// docs/widget-limits.md explains each one at length; keep the two in step.
public enum PlatformLimits {
    /// WidgetKit's largest image, in pixels (width × height). WidgetKit refuses to archive a
    /// timeline entry with a larger image and the widget shows its placeholder instead.
    public static let iosImageAreaPixels = 718_080

    /// The memory ceiling of an iOS widget extension (30 MiB, as jetsam counts megabytes). Past
    /// it the system kills the extension; decoded images are not all it holds, so this is a
    /// ceiling for the images alone, not a target.
    public static let iosExtensionMemoryBytes = 30 << 20

    /// Android's bitmap budget for one `RemoteViews` update: screen width × height × 4 bytes
    /// (ARGB_8888) × 1.5, that is 6 bytes per screen pixel; nil when the product overflows.
    public static func androidBitmapMemoryBytes(screen: ScreenSize) -> Int? {
        let (pixels, overflowA) = screen.width.multipliedReportingOverflow(by: screen.height)
        let (bytes, overflowB) = pixels.multipliedReportingOverflow(by: 6)
        return overflowA || overflowB ? nil : bytes
    }

    /// The default Android screen (`--android-screen`): 1080 × 2400, a common phone today.
    public static let defaultAndroidScreen = ScreenSize(width: 1080, height: 2400)

    /// One row of the table: a limit, where its figure comes from, and what exceeding it does.
    public struct Limit: Sendable, Equatable {
        /// The warning code a feed over this limit gets.
        public var code: LintCode
        /// The limit, in words.
        public var summary: String
        /// Where the figure comes from.
        public var source: String
        /// What the platform does when a widget exceeds it.
        public var consequence: String
    }

    /// Every limit the publish checks, with its source (the same rows as docs/widget-limits.md).
    public static let table: [Limit] = [
        Limit(
            code: .iosImageArea,
            summary: "an image of at most 718,080 pixels (width × height)",
            source:
                "WidgetKit's own log message, quoted on Apple's developer forums "
                + "(https://developer.apple.com/forums/thread/773785): \"Widget archival failed due to image "
                + "being too large [9] - (1024, 1024), totalArea: 1048576 > max[718080.000000]\"",
            consequence: "the timeline entry is not archived and the widget shows its placeholder"),
        Limit(
            code: .iosExtensionMemory,
            summary: "at most 30 MiB of memory for the whole widget extension",
            source:
                "observed jetsam limit of widget extensions, not documented by Apple; WidgetBridge's README gives "
                + "the same figure (\"a memory ceiling around 30 MB\")",
            consequence: "the system kills the extension; the widget keeps its last snapshot or shows the placeholder"),
        Limit(
            code: .androidBitmapMemory,
            summary: "bitmaps of one RemoteViews update at most screen width × height × 4 × 1.5 bytes",
            source:
                "AppWidgetManager.updateAppWidget "
                + "(https://developer.android.com/reference/android/appwidget/AppWidgetManager): a RemoteViews "
                + "may hold no more bitmap memory than fills the screen 1.5 times, screen width × height × "
                + "4 × 1.5 bytes; Android 17 enforces it as 6 × width × height bytes for apps targeting "
                + "API 37 (https://developer.android.com/about/versions/17/behavior-changes-17)",
            consequence:
                "the update is rejected (an IllegalArgumentException from Android 17 on, a logged warning before) "
                + "and the widget keeps its old content or shows the error layout"
        ),
    ]
}

/// A screen size in pixels (`--android-screen 1080x2400`).
public struct ScreenSize: Sendable, Equatable {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    /// Creates a size.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// Parses `WxH` (for example `1080x2400`), each side 1 to 100,000 pixels; nil otherwise.
    public init?(parsing text: String) {
        let sides = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard sides.count == 2, let width = Int(sides[0]), let height = Int(sides[1]),
            (1...100_000).contains(width), (1...100_000).contains(height)
        else { return nil }
        self.init(width: width, height: height)
    }

    /// `1080x2400`.
    public var description: String { "\(width)x\(height)" }
}
