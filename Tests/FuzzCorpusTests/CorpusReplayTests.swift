import Foundation
import FuzzChecks
import Testing

/// Every committed fuzz input (seeds and `regression-*` inputs in Fuzz/Corpus/<target>/)
/// satisfies its target's properties, in every `swift test` run and without a fuzzing build.
@Suite struct CorpusReplayTests {
    static let corpus = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/Corpus")

    @Test(arguments: FuzzTargets.all.map(\.name))
    func committedInputsKeepTheirProperties(_ name: String) throws {
        let target = try #require(FuzzTargets.named(name))
        let folder = Self.corpus.appendingPathComponent(name)
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { !$0.hasPrefix(".") }
            .sorted()
        #expect(files.count >= 3, "Fuzz/Corpus/\(name) has seeds")
        for file in files {
            let bytes = try [UInt8](Data(contentsOf: folder.appendingPathComponent(file)))
            do {
                try target.check(bytes)
            } catch {
                Issue.record("Fuzz/Corpus/\(name)/\(file): \(error)")
            }
        }
    }
}
