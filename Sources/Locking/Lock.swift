#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value that threads take turns with, behind a plain pthread mutex: the lock every product module uses in place
/// of the standard library's `Mutex`.
///
/// On Linux, Swift 6.3's `Mutex` is a priority-inheritance futex. Releasing one that has a waiter hands it straight
/// to that waiter, which on a busy machine with few cores has often not run yet: the lock stays taken by a thread
/// that is not running, every thread that comes for it meanwhile spins 1,000 `pause`s and then queues in the kernel
/// too, and the next release hands it on again. Under steady requests that convoy feeds itself. A `perf` profile of
/// two instances behind nginx on 2 cores found 6–8 % of the server's CPU spinning in it, nearly all on the lock of
/// the remembered login attempts, which every callback takes twice for well under a microsecond.
/// (swiftlang/swift#88440; later toolchains use a plain futex.) A plain mutex leaves a released lock free, so
/// whichever thread is running takes it, and a woken waiter that finds it taken again simply waits again.
///
/// Its methods are inlinable, so that each use is specialized for its value in the module that uses it rather than
/// run through generic code across the module boundary.
public struct Lock<State>: @unchecked Sendable {
    @usableFromInline let buffer: StateAndMutex

    @inlinable
    public init(_ state: State) {
        buffer = unsafeDowncast(StateAndMutex.create(minimumCapacity: 1) { _ in state }, to: StateAndMutex.self)
        buffer.withUnsafeMutablePointerToElements { mutex in
            mutex.initialize(to: pthread_mutex_t())
            let result = pthread_mutex_init(mutex, nil)
            precondition(result == 0, "pthread_mutex_init failed (\(result))")
        }
    }

    /// Runs `body` with the value while holding the lock. Not reentrant: `body` must not take the same lock.
    @inlinable
    public func withLock<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
        try buffer.withUnsafeMutablePointers { (state, mutex) throws(Failure) -> Result in
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&state.pointee)
        }
    }

    /// Runs `body` only if the lock is free now; nil (and `body` not run) when another thread holds it.
    @inlinable
    public func withLockIfAvailable<Result, Failure: Error>(
        _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result? {
        try buffer.withUnsafeMutablePointers { (state, mutex) throws(Failure) -> Result? in
            guard pthread_mutex_trylock(mutex) == 0 else { return nil }
            defer { pthread_mutex_unlock(mutex) }
            return try body(&state.pointee)
        }
    }

    /// The value and the mutex in one allocation: the mutex must not move while in use, and a lock made per
    /// request (a suspended request's outcome) costs one allocation, not two.
    @usableFromInline
    final class StateAndMutex: ManagedBuffer<State, pthread_mutex_t> {
        deinit {
            withUnsafeMutablePointers { _, mutex in
                pthread_mutex_destroy(mutex)
                _ = mutex.deinitialize(count: 1)
            }
        }
    }
}
