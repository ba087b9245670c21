import Foundation
import Testing
@testable import HTTPServer

@Suite("File descriptor table")
struct FileDescriptorTableTests {
    /// The size of this process's descriptor table, as the kernel reports it.
    static func tableSize() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("FDSize:") })
        return try #require(Int(line.dropFirst("FDSize:".count).trimmingCharacters(in: .whitespaces)))
    }

    static func softLimit() -> Int {
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        return Int(clamping: limit.rlim_cur)
    }

    @Test("reserving grows the table to the size asked for, within the open-file limit, at once")
    func grows() throws {
        let wanted = min(Self.softLimit(), 1 << 15)
        FileDescriptorTable.reserve(wanted)
        #expect(try Self.tableSize() >= wanted)
    }

    @Test("reserving leaves open descriptors open, and a request past the limit stops at the limit")
    func leavesDescriptorsAlone() throws {
        let file = open("/dev/null", O_RDONLY | O_CLOEXEC)
        #expect(file >= 0)
        defer { close(file) }
        FileDescriptorTable.reserve(Self.softLimit() * 2)
        #expect(fcntl(file, F_GETFD) >= 0)
        #expect(try Self.tableSize() >= min(Self.softLimit(), 1 << 15))
    }
}
