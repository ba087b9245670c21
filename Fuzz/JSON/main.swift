import CFuzzDriver
#if canImport(Glibc)
import Glibc
#endif

exit(fuzz_run(CommandLine.argc, CommandLine.unsafeArgv) { data, size in
    fuzzJSON(UnsafeBufferPointer(start: data, count: size))
    return 0
})
