/// Checks a generation the way the devices will: its images against the platform limits
/// (`PlatformLimits`), its payload's image names against its assets. Pure: fed with what a
/// publish already knows, it reads no file.
public struct FeedLint: Sendable, Equatable {
    /// The Android screen whose bitmap budget applies (`--android-screen`).
    public var androidScreen: ScreenSize

    /// Creates the checker; the default screen is `PlatformLimits.defaultAndroidScreen`.
    public init(androidScreen: ScreenSize = PlatformLimits.defaultAndroidScreen) {
        self.androidScreen = androidScreen
    }

    /// One image of the generation, as the publish knows it.
    public struct Asset: Sendable, Equatable {
        /// Its file name.
        public var name: String
        /// Pixel width; nil or 0 when unknown (the size checks then leave it out).
        public var width: Int?
        /// Pixel height; nil or 0 when unknown.
        public var height: Int?

        /// Creates an asset description.
        public init(name: String, width: Int?, height: Int?) {
            self.name = name
            self.width = width
            self.height = height
        }

        /// Width × height, nil when unknown or when it overflows.
        var area: Int? {
            guard let width, let height, width > 0, height > 0 else { return nil }
            let (area, overflow) = width.multipliedReportingOverflow(by: height)
            return overflow ? nil : area
        }

        /// What a device holds in memory to draw it (RGBA, 4 bytes per pixel); 0 when unknown,
        /// `Int.max` when it overflows.
        var decodedBytes: Int {
            guard let width, let height, width > 0, height > 0 else { return 0 }
            return Saturating.product([width, height, 4])
        }
    }

    /// Every warning for a generation, in the order of `LintCode`'s cases (per asset in the
    /// order given, per missing name in payload order). `skipped` maps the names of uploaded
    /// images the budget left out to the reason, so a payload naming one is told why.
    /// Unbounded: a server answers with `report(…limit:)`.
    public func warnings(payload: JSONNode, assets: [Asset], skipped: [String: String] = [:]) -> [LintWarning] {
        report(payload: payload, assets: assets, skipped: skipped, limit: .max).warnings
    }

    /// The warnings `warnings(payload:assets:skipped:)` gives, the first `limit` spelled out and
    /// every one counted: a payload naming a million missing files costs counting, not a million
    /// sentences (each warning's detail is a few hundred bytes).
    ///
    /// With a `profile`, each item's image is checked (`item-image-missing`, in place of
    /// `asset-not-found` for the same file) and, for a stated profile, titles, unused assets and
    /// the empty state too (`ProfileFindings`).
    public func report(
        payload: JSONNode, assets: [Asset], skipped: [String: String] = [:], limit: Int, profile: LintProfile? = nil
    ) -> LintReport {
        var report = LintReport(limit: limit)
        report.profile = profile
        for asset in assets {
            guard let area = asset.area, area > PlatformLimits.iosImageAreaPixels else { continue }
            report.add(.iosImageArea) { imageAreaWarning(asset) }
        }
        let decoded = assets.reduce(0) { Saturating.sum($0, $1.decodedBytes) }
        let counted = assets.filter { $0.decodedBytes > 0 }.count
        if decoded > PlatformLimits.iosExtensionMemoryBytes {
            report.add(.iosExtensionMemory) { iosMemoryWarning(decoded: decoded, images: counted) }
        }
        if let budget = PlatformLimits.androidBitmapMemoryBytes(screen: androidScreen), decoded > budget {
            report.add(.androidBitmapMemory) { androidMemoryWarning(decoded: decoded, images: counted, budget: budget) }
        }
        let references = PayloadReferences(payload: payload, assetNames: assets.map(\.name))
        let findings = profile.map { ProfileFindings($0, payload: payload, assetNames: Set(assets.map(\.name))) }
        let reported = findings?.reportedNames ?? []
        for missing in references.missing where !reported.contains(missing.fileName) {
            report.add(.assetNotFound) { missingAssetWarning(missing, assets: assets, skipped: skipped) }
        }
        // A stated image rule says which assets items use: `asset-unused` then replaces this
        // guess from names and stems.
        let statesImages = profile.map { !$0.isInferred && $0.profile.image != nil && findings?.itemsFound == true }
        if statesImages != true {
            let used = findings?.used ?? []
            for asset in assets where !references.referenced.contains(asset.name) && !used.contains(asset.name) {
                report.add(.assetUnreferenced) { unreferencedWarning(asset) }
            }
        }
        findings?.addWarnings(to: &report, assets: assets, referenced: references.named, skipped: skipped)
        return report
    }

    // MARK: The platform limits

    /// The warning for an asset whose area is above the limit (`report` checks that first).
    private func imageAreaWarning(_ asset: Asset) -> LintWarning {
        let limit = PlatformLimits.iosImageAreaPixels
        let width = asset.width ?? 0
        let height = asset.height ?? 0
        let area = asset.area ?? 0
        return LintWarning(
            code: .iosImageArea,
            detail:
                "\(asset.name) is \(width) × \(height) = \(Figures.grouped(area)) pixels; WidgetKit refuses images "
                + "above "
                + "\(Figures.grouped(limit)) pixels (\"Widget archival failed due to image being too large\") and "
                + "the widget shows its placeholder. "
                + "Publish it with maxDimension=\(Self.largestLongSide(width: width, height: height)) or less.",
            asset: asset.name, limit: limit, actual: area)
    }

    private func iosMemoryWarning(decoded: Int, images: Int) -> LintWarning {
        let limit = PlatformLimits.iosExtensionMemoryBytes
        return LintWarning(
            code: .iosExtensionMemory,
            detail:
                "The generation's \(images) image(s) need \(Figures.mebibytes(decoded)) decoded (width × height × 4 "
                + "each); an iOS widget "
                + "extension is killed above about \(Figures.mebibytes(limit)) in all, and the images are not all "
                + "it holds. "
                + "Send fewer or smaller images, or let the budget enforce a ceiling with maxDecodedBytes.",
            limit: limit, actual: decoded)
    }

    private func androidMemoryWarning(decoded: Int, images: Int, budget: Int) -> LintWarning {
        LintWarning(
            code: .androidBitmapMemory,
            detail:
                "The generation's \(images) image(s) need \(Figures.mebibytes(decoded)) decoded; one RemoteViews "
                + "update may carry at most "
                + "\(androidScreen.width) × \(androidScreen.height) × 4 × 1.5 = \(Figures.mebibytes(budget)) of "
                + "bitmaps (--android-screen \(androidScreen.description)), "
                + "so an update drawing all of them is rejected and the widget keeps its old content or shows its "
                + "error layout.",
            limit: budget, actual: decoded)
    }

    /// The largest long side (the budget's `maxDimension`) at which the image, scaled with its
    /// aspect ratio kept, stays within WidgetKit's area.
    static func largestLongSide(width: Int, height: Int) -> Int {
        let long = max(width, height)
        let short = min(width, height)
        let scale = (Double(PlatformLimits.iosImageAreaPixels) / (Double(long) * Double(short))).squareRoot()
        var side = max(1, Int(Double(long) * scale))
        // The short side is rounded when the image is scaled: step down until the area fits.
        while side > 1,
            side * max(1, Int((Double(short) * Double(side) / Double(long)).rounded()))
                > PlatformLimits.iosImageAreaPixels
        {
            side -= 1
        }
        return side
    }

    // MARK: Payload and assets

    private func missingAssetWarning(
        _ missing: PayloadReferences.Missing, assets: [Asset], skipped: [String: String]
    ) -> LintWarning {
        let name = missing.fileName
        var detail = "'\(missing.string)' at \(missing.pointer.isEmpty ? "the payload's root" : missing.pointer)"
        if missing.isMemberName { detail = "The member name " + detail } else { detail = "The string " + detail }
        if missing.string != name { detail += " (its last path component, '\(name)')" }
        detail += " names an image file that is not an asset of this generation, so the widget finds no file for it"
        if missing.count > 1 { detail += " (named in \(missing.count) places)" }
        detail += "."
        if let reason = skipped[name] {
            detail += " It was uploaded but not stored: \(reason)."
        } else if let other = assets.first(where: { $0.name.lowercased() == name.lowercased() }) {
            detail += " Did you mean '\(other.name)'? Asset names are case-sensitive (Android's file system is)."
        } else if let problem = SafeName.problem(with: name) {
            detail += " It can never be one: an asset name \(problem)."
        } else if assets.isEmpty {
            detail += " This publish has no assets at all: " + LintWarning.noAssetsAdvice
        }
        return LintWarning(code: .assetNotFound, detail: detail, asset: name, pointer: missing.pointer)
    }

    private func unreferencedWarning(_ asset: Asset) -> LintWarning {
        var detail = "No payload string names \(asset.name)"
        if let dot = asset.name.lastIndex(of: "."), dot != asset.name.startIndex {
            detail += " (nor its stem '\(asset.name[..<dot])', from which a widget could build the name)"
        }
        detail +=
            ", so no widget will look for it: it is stored and sent for nothing. Name it in the payload, or leave "
            + "it out."
        return LintWarning(code: .assetUnreferenced, detail: detail, asset: asset.name)
    }
}

/// Arithmetic on figures from clients and disk that must never trap.
enum Saturating {
    /// a + b, or `Int.max` on overflow.
    static func sum(_ a: Int, _ b: Int) -> Int {
        let (value, overflow) = a.addingReportingOverflow(b)
        return overflow ? Int.max : value
    }

    /// The product, or `Int.max` on overflow (factors are not negative).
    static func product(_ factors: [Int]) -> Int {
        var result = 1
        for factor in factors {
            let (value, overflow) = result.multipliedReportingOverflow(by: factor)
            if overflow { return Int.max }
            result = value
        }
        return result
    }
}

/// Figures as people read them.
enum Figures {
    /// `1048576` → `1,048,576`.
    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return value < 0 ? "-" + result : result
    }

    /// Bytes in MiB with one decimal: `31457280` → `30.0 MiB`.
    static func mebibytes(_ bytes: Int) -> String {
        let tenths = Int((Double(bytes) / 104_857.6).rounded())
        return "\(tenths / 10).\(tenths % 10) MiB"
    }
}
