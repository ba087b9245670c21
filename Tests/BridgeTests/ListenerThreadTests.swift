import Bridge
import Foundation
import HTTPServer
import Testing
import TestSupport

/// How many listener threads the server picks for its store (see `ServerConfiguration.defaultListenerThreads`).
@Suite("Listener threads")
struct ListenerThreadTests {
    static let cores = ProcessInfo.processInfo.activeProcessorCount

    @Test("on SQLite, read in this process, the server runs two listener threads per core (at least four) and serves")
    func sqlite() throws {
        let harness = try BridgeHarness(listening: true)
        #expect(harness.server.http.configuration.threadPoolSize == min(256, max(4, 2 * Self.cores)))
        let browser = TestBrowser(harness)
        #expect(try browser.signIn().status == 303)
        #expect(try browser.get("/session").status == 200)
    }

    @Test("a listener thread count given explicitly is kept")
    func explicitCount() throws {
        var listener = ServerConfiguration()
        listener.threadPoolSize = 3
        let harness = try BridgeHarness(listener: listener, listening: true)
        #expect(harness.server.http.configuration.threadPoolSize == 3)
        #expect(try TestBrowser(harness).signIn().status == 303)
    }
}
