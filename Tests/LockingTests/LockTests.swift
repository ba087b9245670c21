import Foundation
import Locking
import Testing

@Suite("Lock") struct LockTests {
    @Test("withLock gives one thread at a time the value, and what it returns")
    func exclusive() async {
        let counter = Lock(0)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask { for _ in 0..<10_000 { counter.withLock { $0 += 1 } } }
            }
        }
        #expect(counter.withLock { $0 } == 80_000)
        #expect(counter.withLock { value -> String in value = 7; return "set" } == "set")
        #expect(counter.withLock { $0 } == 7)
    }

    @Test("an error thrown inside withLock reaches the caller and leaves the lock free")
    func throwing() {
        struct Refused: Error {}
        let lock = Lock([1, 2])
        #expect(throws: Refused.self) { try lock.withLock { _ throws(Refused) in throw Refused() } }
        #expect(lock.withLockIfAvailable { $0 } == [1, 2])
    }

    @Test("withLockIfAvailable runs nothing while another thread holds the lock")
    func ifAvailable() {
        let lock = Lock("free")
        let (held, release) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        Thread.detachNewThread {
            lock.withLock { _ in
                held.signal()
                release.wait()
            }
        }
        held.wait()
        var ran = false
        #expect(lock.withLockIfAvailable { _ in ran = true } == nil)
        #expect(!ran)
        release.signal()
        #expect(lock.withLock { $0 } == "free")
    }

    /// The reason this type exists: a released lock is free for the thread that runs, not handed to a waiter
    /// that the kernel has yet to schedule (as Swift 6.3's priority-inheritance `Mutex` does on Linux: its
    /// ownership passes inside the unlock system call, so the releasing thread can never take it straight back).
    @Test("a released lock is free for whichever thread runs, even with a thread waiting for it")
    func releasedLockIsFree() {
        let lock = Lock(0)
        var retakenAtOnce = 0
        let rounds = 20
        for _ in 0..<rounds {
            let (started, done) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
            let waiterAt = lock.withLock { _ -> Int in
                Thread.detachNewThread {
                    started.signal()
                    lock.withLock { $0 += 1 }  // blocks until the holder lets go
                    done.signal()
                }
                started.wait()
                Thread.sleep(forTimeInterval: 0.02)  // the waiter is asleep in the kernel by now
                return 0
            }
            // The lock was let go just now, with the waiter asleep: take it straight back.
            if lock.withLockIfAvailable({ _ in waiterAt }) != nil { retakenAtOnce += 1 }
            done.wait()
        }
        #expect(lock.withLock { $0 } == rounds)
        // A woken thread needs microseconds to run again, the retake takes nanoseconds: nearly every round.
        #expect(retakenAtOnce >= rounds / 2, "retaken at once in \(retakenAtOnce) of \(rounds) rounds")
    }
}
