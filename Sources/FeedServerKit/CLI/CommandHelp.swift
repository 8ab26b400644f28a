/// The `--help` texts: the server's and each store command's.
extension ServerOptions {
    /// `feed-server --help`.
    static var helpText: String {
        var lines = [
            "feed-server \(version): a WidgetBridge-compatible widget feed store over HTTP.",
            "",
            "Usage: feed-server [options]",
            "       feed-server publish|lint|read|export ...   the store offline (feed-server <command> --help)",
            "",
            "Options (each also settable from the environment variable shown):",
        ]
        lines += optionLines()
        lines += [
            "  -h, --help".padding(to: 32) + "show this help", "  --version".padding(to: 32) + "print the version", "",
            "Exit status: 0 after a clean shutdown (SIGINT/SIGTERM), 2 on bad options, an unusable root or a port "
                + "in use, or a seed group not published under --seed-strict.",
        ]
        return lines.joined(separator: "\n")
    }
}

extension StoreCommand.Name {
    /// The operands, as the usage line names them.
    var operands: String {
        switch self {
        case .publish: "GROUP PATH"
        case .lint: "PATH"
        case .read, .export: "GROUP"
        }
    }

    /// What the command does, for its help.
    var summary: [String] {
        switch self {
        case .publish:
            [
                "Publishes PATH to GROUP under ROOT (created when missing) as PUT /feeds/{group} does, under the same",
                "group lock as a running server, and prints the answer's JSON. PATH is a seed-layout group folder",
                "(payload.json, optional meta.json, assets/<name>; images packed as a multipart publish packs them),",
                "a tar in that layout (assets stored as they are, as PUT /feeds/{group}/archive does), or a JSON",
                "payload file.",
            ]
        case .lint:
            [
                "Checks PATH (a seed-layout group folder, a tar in that layout, or a JSON payload file) against the",
                "platform limits, its images packed as a publish would pack them; writes nothing. Prints the",
                "warnings as JSON on stdout and one line each on stderr.",
            ]
        case .read:
            [
                "Prints what readers of GROUP under ROOT get, as JSON: the served generation as GET /feeds/{group}",
                "answers it (null when none is readable) and every candidate skipped on the way, with its reason.",
            ]
        case .export:
            [
                "Writes the served generation of GROUP under ROOT to stdout as a tar in the seed layout, as",
                "GET /feeds/{group}/archive sends it.",
            ]
        }
    }

    /// The exit statuses of the command.
    var exitStatus: String {
        switch self {
        case .publish: "0 published or unchanged, 1 refused (the problem's JSON on stdout), 2 usage"
        case .lint: "0 no warning (or warnings without --strict), 1 warnings with --strict or a refused feed, 2 usage"
        case .read: "0 a generation is served, 1 none is readable, 2 usage"
        case .export: "0 written, 1 nothing to export or a failed write, 2 usage"
        }
    }

    /// `feed-server <command> --help`.
    var helpText: String {
        var lines = ["Usage: feed-server \(rawValue) [options] \(operands)", ""] + summary
        lines += ["", "Options (before or after the operands; -- ends them):"]
        lines += ownOptions.map { "  \($0.flag) \($0.placeholder)".padding(to: 32) + $0.help }
        lines += ServerOptions.optionLines(flags: sharedFlags)
        lines += ["  -h, --help".padding(to: 32) + "show this help", "", "Exit status: \(exitStatus)."]
        return lines.joined(separator: "\n")
    }
}

extension String {
    /// The text, then blanks up to `width` columns (at least one), for help lines.
    func padding(to width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}
