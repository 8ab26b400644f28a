import FeedStore
import Testing

/// The seed layout's path rules, as the seed folder and the archive reader each apply them.
@Suite struct SeedLayoutTests {
    private func place(
        _ path: String, folder: Bool = false, _ reader: SeedLayout.Reader
    )
        -> Result<SeedLayout.Place, SeedLayoutError>
    {
        Result { () throws(SeedLayoutError) in try SeedLayout.classify(path, isFolder: folder, for: reader) }
    }

    @Test(arguments: [SeedLayout.Reader.seedFolder, .archive])
    func theLayoutsPathsHaveTheirPlaces(_ reader: SeedLayout.Reader) {
        #expect(place("payload.json", reader) == .success(.payload))
        #expect(place("./meta.json", reader) == .success(.meta))
        #expect(place("assets/sun.jpg", reader) == .success(.asset("sun.jpg")))
        for folder in [".", "./", "assets", "assets/", "./assets/"] {
            #expect(place(folder, folder: true, reader) == .success(.folder), "\(folder)")
        }
        for outside in ["notes.txt", "assets/sub/x.jpg", "assets//x.jpg", "payload.json/", "x/payload.json"] {
            #expect(place(outside, reader) == .failure(.outsideLayout), "\(outside)")
        }
        #expect(place("assets/sub", folder: true, reader) == .failure(.outsideLayout))
        #expect(
            place("assets/a b.png", reader)
                == .failure(
                    .unsafeAssetName("a b.png", reason: "may contain only ASCII letters, digits, '-', '_' and '.'")))
    }

    /// A seed folder skips what editors leave before judging the name (nobody chose `sun.jpg~`);
    /// an archive judges the name first and then refuses what a seed folder would skip.
    @Test func editorLeftoversAreSkippedInASeedFolderAndRefusedInAnArchive() {
        for name in [".DS_Store", "sun.jpg~", ".sun.jpg.swp", "notes.swx"] {
            #expect(place("assets/" + name, .seedFolder) == .success(.skipped), "\(name)")
        }
        #expect(place("assets/.DS_Store", .archive) == .failure(.editorLeftover(".DS_Store")))
        #expect(
            place("assets/sun.jpg~", .archive)
                == .failure(
                    .unsafeAssetName("sun.jpg~", reason: "may contain only ASCII letters, digits, '-', '_' and '.'")))
    }
}
