import FuzzChecks

#if FUZZING
import CLibFuzzer
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `feed-fuzz <target> [arguments]`.
///
/// Built normally, it replays inputs: every file named (or inside a folder named) goes through
/// the target's property check. Built by scripts/fuzz.sh (`-sanitize=fuzzer,address -DFUZZING`)
/// it hands the arguments to libFuzzer instead. One binary serves every target because
/// libFuzzer's `LLVMFuzzerRunDriver` takes the function to fuzz as an argument; its own `main`
/// cannot be used, since SwiftPM links every executable with `main` bound to ours.
@main
enum FeedFuzz {
    static func main() {
        var arguments = CommandLine.arguments
        guard arguments.count >= 2, let target = FuzzTargets.named(arguments[1]) else {
            usage()
            exit(arguments.count >= 2 && arguments[1] == "list" ? 0 : 2)
        }
        arguments.remove(at: 1)
        #if FUZZING
        exit(Fuzzing.run(target, arguments: arguments))
        #else
        exit(Replay.run(target, paths: Array(arguments.dropFirst())))
        #endif
    }

    private static func usage() {
        var text = "usage: feed-fuzz <target> [files or folders to replay | libFuzzer arguments]\n\ntargets:\n"
        for target in FuzzTargets.all { text += "  \(target.name): \(target.summary)\n" }
        printError(text)
    }
}

/// Writes `text` to standard error in one `write(2)`.
func printError(_ text: String) {
    var bytes = Array(text.utf8)
    _ = bytes.withUnsafeMutableBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
}

#if FUZZING
/// The target libFuzzer is driving (set once, before the driver starts).
nonisolated(unsafe) private var driven: FuzzTarget?

/// libFuzzer's per-input callback; also the symbol its own (unused) `main` refers to.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let target = driven else { return 0 }
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    do {
        try target.check(input)
    } catch {
        // libFuzzer turns the abort into a crash report and saves the input.
        printError("\n\(target.name): property violated: \(error)\n")
        abort()
    }
    return 0
}

enum Fuzzing {
    /// Runs libFuzzer on `target` with `arguments` (argv[0] first).
    static func run(_ target: FuzzTarget, arguments: [String]) -> Int32 {
        driven = target
        var argc = Int32(arguments.count)
        let argv = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: arguments.count + 1)
        for (index, argument) in arguments.enumerated() { argv[index] = strdup(argument) }
        argv[arguments.count] = nil
        var argvPointer: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
        return LLVMFuzzerRunDriver(&argc, &argvPointer, fuzzOneInput)
    }
}
#else
enum Replay {
    /// Runs every input under `paths` through `target`; 0 when every property held.
    static func run(_ target: FuzzTarget, paths: [String]) -> Int32 {
        var inputs = 0
        var failures = 0
        for file in paths.flatMap(files(under:)) {
            guard let bytes = readFile(file) else {
                printError("\(file): cannot read\n")
                failures += 1
                continue
            }
            inputs += 1
            do {
                try target.check(bytes)
            } catch {
                printError("\(file): \(target.name): property violated: \(error)\n")
                failures += 1
            }
        }
        print("\(target.name): \(inputs) inputs replayed, \(failures) failed")
        return failures == 0 ? 0 : 1
    }

    /// `path` itself, or the regular files in it (sorted) when it is a folder.
    private static func files(under path: String) -> [String] {
        guard let folder = opendir(path) else { return [path] }
        defer { closedir(folder) }
        var names: [String] = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if !name.hasPrefix(".") { names.append(path + "/" + name) }
        }
        return names.sorted()
    }

    private static func readFile(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            bytes.append(contentsOf: chunk[..<count])
            if count < chunk.count { return ferror(file) == 0 ? bytes : nil }
        }
    }
}
#endif
