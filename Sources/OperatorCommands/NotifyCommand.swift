import AppleID
import Foundation
import Webhooks

/// `apple-signin-bridge notify --to URL --event TYPE --sub SUB [--client-id ID]`: a server-to-server notification as
/// Apple sends it, signed by a running Apple ID simulator (`simulator`, or `dev`'s) with its keys, posted to `URL`
/// (a bridge's `/apple/notifications`), so that Apple → bridge → webhook → the operator's backend runs on one
/// machine. Prints what the endpoint answered.
public enum NotifyCommand {
    public static let usage = "usage: apple-signin-bridge notify --to URL --event consent-revoked|account-delete|email-disabled|email-enabled --sub SUB [--client-id ID]"

    /// What `--event` takes: Apple's notification types.
    package static let events = ["consent-revoked", "account-delete", "email-disabled", "email-enabled"]

    public struct InputError: Error, CustomStringConvertible {
        public let description: String
    }

    /// The simulator is APPLE_ID_URL when set, else `http://127.0.0.1:SIMULATOR_PORT` (8081 when unset, as `dev`'s
    /// with the default port); the audience `--client-id`, else APPLE_SERVICES_ID, the first APPLE_BUNDLE_IDS, or
    /// `dev`'s default Services ID.
    public static func run(options: [String: String], environment: [String: String], output: (String) -> Void) throws -> Int32 {
        guard let to = options["to"], let target = URL(string: to), let scheme = target.scheme, ["http", "https"].contains(scheme),
              target.host != nil else {
            throw InputError(description: "notify needs --to URL: the bridge's notification endpoint, such as http://127.0.0.1:8080/apple/notifications")
        }
        guard let event = options["event"], events.contains(event) else {
            throw InputError(description: "notify needs --event, one of \(events.joined(separator: ", "))")
        }
        guard let subject = options["sub"], !subject.isEmpty else {
            throw InputError(description: "notify needs --sub SUB: the person's Apple user id (the simulator's users: 001234.simulated.ada, …)")
        }
        let bundleIDs = (environment["APPLE_BUNDLE_IDS"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let audience = [options["client-id"], environment["APPLE_SERVICES_ID"], bundleIDs.first { !$0.isEmpty }]
            .compactMap { $0 }.first { !$0.isEmpty } ?? "dev.applesigninbridge.web"
        let simulator = environment["APPLE_ID_URL"].flatMap { $0.isEmpty ? nil : $0 }
            ?? "http://127.0.0.1:\(environment["SIMULATOR_PORT"] ?? "8081")"

        let minted: HTTPExchange
        do {
            minted = try URLSessionTransport().postForm(simulator + "/__simulator/notifications",
                                                        fields: [("type", event), ("sub", subject), ("aud", audience)])
        } catch {
            output("notify: the Apple ID simulator at \(simulator) did not answer (\(error.description)); start it with apple-signin-bridge simulator or dev")
            return 1
        }
        guard minted.status == 200 else {
            output("notify: the Apple ID simulator at \(simulator) refused to sign it: HTTP \(minted.status) \(String(decoding: minted.body, as: UTF8.self))")
            return 1
        }
        switch URLSessionWebhookTransport().exchange(target, headers: [], body: minted.body) {
        case .success(let answer):
            let said = String(decoding: answer.body.prefix(500), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            output("notify: sent \(event) for sub \(subject) (aud \(audience)), signed by the simulator at \(simulator), to \(to): HTTP \(answer.status) \(said)")
            return (200...299).contains(answer.status) ? 0 : 1
        case .failure(let reason):
            output("notify: \(to) did not answer: \(reason.description)")
            return 1
        }
    }
}
