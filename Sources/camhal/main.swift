import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// camhal: the command-line tool (its verbs: Verbs.swift).

// A file size limit (ulimit -f) makes a too-long write fail with EFBIG, which the output policy
// reports and cleans up after, instead of SIGXFSZ killing the process with its temporary file left.
signal(SIGXFSZ, SIG_IGN)
exit(await CLI.main(arguments: Array(CommandLine.arguments.dropFirst()), verbs: CLI.verbs))
