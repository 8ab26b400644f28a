import FeedStore
import Testing

/// The seed layout's path rules, one set for the seed folder and the archive reader alike.
@Suite struct SeedLayoutTests {
    private func place(_ path: String, folder: Bool = false) -> Result<SeedLayout.Place, SeedLayoutError> {
        Result { () throws(SeedLayoutError) in try SeedLayout.classify(path, isFolder: folder) }
    }

    @Test func theLayoutsPathsHaveTheirPlaces() {
        #expect(place("payload.json") == .success(.payload))
        #expect(place("./meta.json") == .success(.meta))
        #expect(place("assets/sun.jpg") == .success(.asset("sun.jpg")))
        for folder in [".", "./", "assets", "assets/", "./assets/"] {
            #expect(place(folder, folder: true) == .success(.folder), "\(folder)")
        }
        for outside in ["notes.txt", "assets/sub/x.jpg", "assets//x.jpg", "payload.json/", "x/payload.json"] {
            #expect(place(outside) == .failure(.outsideLayout), "\(outside)")
        }
        #expect(place("assets/sub", folder: true) == .failure(.outsideLayout))
        #expect(
            place("assets/a b.png")
                == .failure(
                    .unsafeAssetName("a b.png", reason: "may contain only ASCII letters, digits, '-', '_' and '.'")))
    }

    /// What editors leave is skipped before the name is judged (nobody chose `sun.jpg~`), by a
    /// seed folder and an archive alike, so `tar -C folder .` of a seed folder is the same scenario.
    @Test func editorLeftoversAreSkipped() {
        for name in [".DS_Store", "sun.jpg~", ".sun.jpg.swp", "notes.swx", "._sun.jpg"] {
            #expect(place("assets/" + name) == .success(.skipped), "\(name)")
        }
        for path in ["./.DS_Store", "._payload.json", ".git/config", "./.git/objects/ab"] {
            #expect(place(path) == .success(.skipped), "\(path)")
        }
        #expect(place("./.git/", folder: true) == .success(.skipped))
        #expect(place("assets/./x.jpg") == .failure(.outsideLayout), "a '.' component is no leftover")
    }
}
