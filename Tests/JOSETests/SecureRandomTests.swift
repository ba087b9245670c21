import Foundation
import Testing
@testable import JOSE

@Suite struct SecureRandomTests {
    @Test("every size gets that many bytes, and small draws across many refills of the reserve never repeat")
    func drawsNeverRepeat() {
        #expect(SecureRandom.bytes(0).isEmpty)
        for size in [1, 16, 32, 63, 64, 65, 4096, 5000] { #expect(SecureRandom.bytes(size).count == size) }
        // 20,000 draws of 32 bytes is about 156 refills of a 4 KiB reserve; a byte served twice, or a reserve
        // handed out before it is filled, would show as a repeat or as all zeros.
        var seen = Set<[UInt8]>()
        for _ in 0..<20_000 {
            let token = SecureRandom.bytes(32)
            #expect(token != [UInt8](repeating: 0, count: 32))
            seen.insert(token)
        }
        #expect(seen.count == 20_000)
        // Draws of sizes that do not divide the reserve leave a tail behind; the next draw must not reuse it.
        var odd = Set<[UInt8]>()
        for _ in 0..<2_000 { odd.insert(SecureRandom.bytes(48)) }
        #expect(odd.count == 2_000)
    }

    @Test("threads drawing at once never get the same bytes")
    func concurrentDrawsAreDistinct() async {
        let tokens = await withTaskGroup(of: [[UInt8]].self) { group in
            for _ in 0..<8 {
                group.addTask { (0..<2_000).map { _ in SecureRandom.bytes(32) } }
            }
            var all: [[UInt8]] = []
            for await part in group { all += part }
            return all
        }
        #expect(Set(tokens).count == 16_000)
    }

    @Test("the bytes look uniform: each bit is set about half the time")
    func bitsAreBalanced() {
        var ones = 0
        let draws = 4_000
        for _ in 0..<draws { ones += SecureRandom.bytes(32).reduce(0) { $0 + $1.nonzeroBitCount } }
        let share = Double(ones) / Double(draws * 256)
        #expect(abs(share - 0.5) < 0.005)
    }
}
