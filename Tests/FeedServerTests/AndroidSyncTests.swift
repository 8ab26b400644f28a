import FeedImagingTesting
import Foundation
import Testing

@testable import FeedServerKit

/// `scripts/android-sync.sh` as the server's hook, against a stand-in `adb` that behaves as adb
/// does where the sync depends on it: `adb shell` joins its words with single spaces for the
/// device's shell to parse again, and `adb push` copies a folder *into* an existing folder.
@Suite struct AndroidSyncTests {
    private static let package = "com.example.quotes"
    private static let receiver = package + "/.QuoteWidgetReceiver"

    /// A device folder, its app's data folder and scratch folder, and the stand-in tools.
    private struct Device {
        let root: String
        var app: String { root + "/data/data/" + AndroidSyncTests.package }
        var scratch: String { root + "/data/local/tmp" }
        var adb: String { root + "/adb" }
        var broadcasts: [String] {
            ((try? String(contentsOfFile: root + "/broadcasts.log", encoding: .utf8)) ?? "")
                .split(separator: "\n").map(String.init)
        }

        init(in scratch: ScratchDirectory) throws {
            root = scratch.path + "/device"
            let manager = FileManager.default
            for folder in [root + "/bin", root + "/data/data/" + AndroidSyncTests.package, root + "/data/local/tmp"] {
                try manager.createDirectory(atPath: folder, withIntermediateDirectories: true)
            }
            try write(
                adb,
                """
                #!/bin/sh
                set -eu
                here=$(dirname "$0")
                case "$1" in
                push)
                  source=$2 target=$3
                  [ -d "$target" ] && target="$target/$(basename "$source")"
                  mkdir -p "$(dirname "$target")"
                  cp -R "$source" "$target" ;;
                shell)
                  shift
                  DEVICE="$here" PATH="$here/bin:$PATH" exec sh -c "$*" ;;
                *) echo "stand-in adb: $1 is not played" >&2; exit 1 ;;
                esac
                """)
            try write(root + "/bin/run-as", "#!/bin/sh\ncd \"$DEVICE/data/data/$1\" || exit 1\nshift\nexec \"$@\"\n")
            try write(root + "/bin/am", "#!/bin/sh\necho \"$*\" >> \"$DEVICE/broadcasts.log\"\n")
        }

        private func write(_ path: String, _ text: String) throws {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            chmod(path, 0o755)
        }
    }

    private static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/android-sync.sh").path
    }

    private func hook(_ device: Device, widgetIDs: String? = nil) -> String {
        "ANDROID_PACKAGE=\(Self.package) ANDROID_RECEIVER=\(Self.receiver) ADB=\(device.adb) "
            + "ANDROID_TMP=\(device.scratch) " + (widgetIDs.map { "ANDROID_WIDGET_IDS=\($0) " } ?? "")
            + "sh \(Self.script)"
    }

    private func names(_ path: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }

    private func publish(_ client: HTTPTestClient, _ text: String) throws -> String {
        var body = MultipartBody()
        body.field("payload", #"{"text":"\#(text)","image":"q1.png"}"#, contentType: "application/json")
        body.file("image", filename: "q1.png", try TestImages.png(width: 40, height: 30))
        return try #require(try client.putMultipart("/feeds/widgetbridge", body).json["generationId"] as? String)
    }

    @Test func theAppsFolderBecomesTheGroupFolderAndTheWidgetIsAskedToRedraw() throws {
        let scratch = ScratchDirectory()
        let device = try Device(in: scratch)
        try withTestServer(configure: { $0.onPublish = hook(device) }) { server, client in
            let group = server.options.root + "/widgetbridge"
            let onDevice = device.app + "/files/widgetbridge"
            var firstWritten: Date?
            for (round, text) in ["first", "second", "third"].enumerated() {
                let id = try publish(client, text)
                try waitUntil { device.broadcasts.count == round + 1 }
                let pointer = FileManager.default.contents(atPath: onDevice + "/current.json")
                #expect(pointer == FileManager.default.contents(atPath: group + "/current.json"), "\(text)")
                #expect(names(onDevice) == ["current.json", "generations"], "nothing nested, no temporary pointer")
                #expect(names(onDevice + "/generations") == names(group + "/generations"))
                #expect(
                    FileManager.default.contents(atPath: onDevice + "/generations/\(id)/assets/q1.png")
                        == FileManager.default.contents(atPath: group + "/generations/\(id)/assets/q1.png"))
                #expect(names(device.scratch).isEmpty, "the temporary path is removed")
                // A generation on the device is never written again (a widget may be reading it).
                let feed = onDevice + "/generations/\(names(onDevice + "/generations").first ?? "")/feed.json"
                let written = try FileManager.default.attributesOfItem(atPath: feed)[.modificationDate] as? Date
                if round == 0 { firstWritten = written } else if round == 1 { #expect(written == firstWritten) }
            }
            // Another group is not this widget's: nothing reaches the device.
            let before = FileManager.default.contents(atPath: onDevice + "/current.json")
            #expect(try client.put("/feeds/quotes", json: #"{"text":"other"}"#).status == 201)
            usleep(500_000)
            #expect(
                device.broadcasts.count == 3
                    && FileManager.default.contents(atPath: onDevice + "/current.json") == before)
            #expect(
                device.broadcasts.allSatisfy {
                    $0 == "broadcast -a androidx.glance.appwidget.action.DEBUG_UPDATE -n \(Self.receiver)"
                }, "\(device.broadcasts)")

            #expect(try client.request("DELETE", "/feeds/widgetbridge").status == 204)
            try waitUntil { device.broadcasts.count == 4 }
            #expect(names(onDevice).isEmpty, "after a DELETE the widget shows its empty state")
        }
    }

    @Test func withWidgetIDsAnAppWidgetProviderGetsItsUpdateBroadcast() throws {
        let scratch = ScratchDirectory()
        let device = try Device(in: scratch)
        try withTestServer(configure: { $0.onPublish = hook(device, widgetIDs: "3,7") }) { _, client in
            _ = try publish(client, "one")
            try waitUntil { device.broadcasts.count == 1 }
            #expect(
                device.broadcasts == [
                    "broadcast -a android.appwidget.action.APPWIDGET_UPDATE -n \(Self.receiver) --eia appWidgetIds 3,7"
                ])
        }
    }

    @Test func aPackageNameAdbWouldMangleIsRefusedBeforeAnythingRuns() throws {
        let scratch = ScratchDirectory()
        let device = try Device(in: scratch)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [Self.script]
        process.environment = [
            "PATH": "/usr/bin:/bin", "FEED_GROUP_DIR": scratch.path, "ANDROID_PACKAGE": "com.example; rm -rf x",
            "ADB": device.adb,
        ]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 1)
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(message.contains("ANDROID_PACKAGE") && message.contains("adb would mangle"), "\(message)")
        #expect(device.broadcasts.isEmpty)
    }
}
