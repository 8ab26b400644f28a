import Foundation

/// A fresh folder under the system temp dir, removed when the test's scope ends.
final class TemporaryDirectory {
    let path: String

    init(_ label: String = "feedstore") {
        let base = FileManager.default.temporaryDirectory.path
        path = "\(base)/\(label)-\(UUID().uuidString)"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// Copies a fixture case folder (read-only in shared/) into this folder, writable.
    func copyFixture(_ name: String) -> String {
        let source = Fixtures.directory + "/" + name
        let destination = path + "/" + name
        try! FileManager.default.copyItem(atPath: source, toPath: destination)
        makeWritable(destination)
        return destination
    }

    private func makeWritable(_ root: String) {
        let enumerator = FileManager.default.enumerator(atPath: root)
        try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: root)
        while let item = enumerator?.nextObject() as? String {
            let full = root + "/" + item
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory)
            try? FileManager.default.setAttributes(
                [.posixPermissions: isDirectory.boolValue ? 0o755 : 0o644], ofItemAtPath: full)
        }
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// The WidgetBridge fixtures and rotation vectors copied into this test target's resources.
enum Fixtures {
    static var directory: String { Bundle.module.resourcePath! + "/Fixtures/widgetbridge-v1" }
    static var rotationVectors: String { Bundle.module.resourcePath! + "/Fixtures/rotation-vectors.json" }

    static func expected() -> [String: Any] {
        let data = FileManager.default.contents(atPath: directory + "/expected.json")!
        return try! JSONSerialization.jsonObject(with: data) as! [String: Any]
    }
}

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
