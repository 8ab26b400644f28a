/// A store command's options and operands. The options it shares with the server (the root,
/// retention, limits, the Android screen) are the server's own, environment variables included,
/// so a publish from the command line keeps, limits and lints exactly as the server on that root.
struct StoreCommandOptions: Equatable {
    typealias UsageError = ServerOptions.UsageError

    let name: StoreCommand.Name
    /// The shared options as the server reads them.
    var server = ServerOptions()
    /// What is left once the options are taken, in order.
    var operands: [String] = []
    /// `--strict`: any warning refuses the publish, or fails the lint.
    var strict = false
    /// `--schema-version N`: the publish's version over `meta.json`'s; a read's reader version.
    var schemaVersion: Int?
    /// `--images`: nil for what the kind of PATH does by default.
    var images: Images?

    /// `--images pack` packs under the default budget (a folder's default), `raw` stores the
    /// files as they are (a tar's default).
    enum Images: String, Equatable {
        case pack, raw
    }

    /// What the command line asks for.
    enum Parsed: Equatable {
        case help
        case run(StoreCommandOptions)
    }

    /// An option of the command itself, not the server's.
    struct Own {
        let flag: String
        let placeholder: String
        let help: String
        var isSwitch = false
        let apply: (inout StoreCommandOptions, String) throws(UsageError) -> Void
    }

    /// Parses the arguments after the command's name: options before, between or after the
    /// operands, `--` ending them (a PATH may then start with `-`).
    static func parse(
        _ name: StoreCommand.Name, _ arguments: [String], environment: [String: String]
    ) throws(UsageError) -> Parsed {
        var result = StoreCommandOptions(name: name)
        try result.server.apply(environment: environment, flags: name.sharedFlags)
        var index = 0
        var operandsOnly = false
        while index < arguments.count {
            let argument = arguments[index]
            if operandsOnly || argument == "-" || !argument.hasPrefix("-") {
                result.operands.append(argument)
                index += 1
                continue
            }
            if argument == "--" {
                operandsOnly = true
                index += 1
                continue
            }
            if argument == "--help" || argument == "-h" { return .help }
            let (flag, inline) = ServerOptions.splitFlag(argument)
            if let own = name.ownOptions.first(where: { $0.flag == flag }) {
                let value = try ServerOptions.value(
                    of: flag, inline: inline, isSwitch: own.isSwitch, takesDashedValue: false, arguments: arguments,
                    index: &index)
                try own.apply(&result, value)
                index += 1
                continue
            }
            guard try result.server.apply(arguments, at: &index, flags: name.sharedFlags) else {
                throw UsageError(description: "unknown option '\(argument)' (see feed-server \(name.rawValue) --help)")
            }
        }
        let expected = name.operands.split(separator: " ")
        guard result.operands.count == expected.count else {
            throw UsageError(
                description:
                    "takes \(name.operands) (got \(result.operands.count) operand(s); see feed-server "
                    + "\(name.rawValue) --help)")
        }
        return .run(result)
    }
}

extension StoreCommand.Name {
    /// The server options the command takes (with their environment variables).
    var sharedFlags: Set<String> {
        let limits: Set = ["--max-payload-bytes"]
        let packing: Set = ["--max-body-bytes", "--max-parts", "--max-image-pixels", "--android-screen"]
        switch self {
        case .publish: return limits.union(packing).union(["--root", "--keep-previous", "--grace-seconds"])
        case .lint: return limits.union(packing)
        case .read, .export: return limits.union(["--root"])
        }
    }

    /// The command's own options.
    var ownOptions: [StoreCommandOptions.Own] {
        let strict = StoreCommandOptions.Own(
            flag: "--strict", placeholder: "",
            help:
                self == .lint
                ? "exit with status 1 when there is any warning"
                : "refuse the publish when there is any warning "
                    + "(as ?lint=strict: 422, nothing written, exit status 1)",
            isSwitch: true
        ) { (options, text) throws(StoreCommandOptions.UsageError) in
            options.strict = try ServerOptions.boolean(text, "--strict")
        }
        let schema = StoreCommandOptions.Own(
            flag: "--schema-version", placeholder: "N",
            help:
                self == .publish
                ? "the payload's schema version (default: meta.json's, else 1)"
                : "apply the reader rules for schema version N (default: the newest readable generation of any)"
        ) { (options, text) throws(StoreCommandOptions.UsageError) in
            options.schemaVersion = try ServerOptions.integer(text, "--schema-version", 0...Int(Int32.max))
        }
        let images = StoreCommandOptions.Own(
            flag: "--images", placeholder: "pack|raw",
            help: "pack a folder's or tar's images under the default budget, or store them as they are (default: "
                + "pack for a folder, raw for a tar)"
        ) { (options, text) throws(StoreCommandOptions.UsageError) in
            guard let images = StoreCommandOptions.Images(rawValue: text) else {
                throw StoreCommandOptions.UsageError(description: "--images must be pack or raw (got '\(text)')")
            }
            options.images = images
        }
        switch self {
        case .publish: return [strict, schema, images]
        case .lint: return [strict, images]
        case .read, .export: return [schema]
        }
    }
}
