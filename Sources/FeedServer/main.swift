import FeedServerKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let environment = Dictionary(
    CommandLine.arguments.isEmpty ? [] : ProcessEnvironment.pairs(), uniquingKeysWith: { first, _ in first })
AllocatorTuning.apply(environment: environment)
exit(ServerCommand.run(arguments: Array(CommandLine.arguments.dropFirst()), environment: environment))
