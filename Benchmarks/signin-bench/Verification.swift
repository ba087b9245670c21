import Foundation

/// After the load: does each session cookie the 303s carried open `GET /session` (200) for a bench user,
/// and is every such user a different one? A sign-in counts only if its session works.
struct Verification {
    let bridgePort: Int
    let cookies: [String]
    let workers: Int
    let subjectPrefix: String
    let count: Int

    struct Outcome {
        var checked = 0
        var worked = 0
        var duplicates = 0
        var firstProblem: String?
    }

    func run() -> Outcome {
        let results = Outputs(files: 1)
        let problems = Outputs(files: 1)
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            let connection = KeepAliveConnection(port: bridgePort)
            for index in stride(from: worker, to: cookies.count, by: workers) {
                switch check(cookies[index], connection: connection) {
                case let .success(subject): results.add(Array(subject.utf8), file: 0, index: index)
                case let .failure(problem): problems.add(Array(problem.description.utf8), file: 0, index: index)
                }
            }
        }
        let subjects = results.all(file: 0).map { String(decoding: $0, as: UTF8.self) }
        let distinct = Set(subjects).count
        var outcome = Outcome(checked: cookies.count, worked: distinct, duplicates: subjects.count - distinct)
        outcome.firstProblem = problems.all(file: 0).first.map { String(decoding: $0, as: UTF8.self) }
        if outcome.firstProblem == nil, outcome.duplicates > 0 {
            outcome.firstProblem = "\(outcome.duplicates) sessions showed a user another session also showed"
        }
        return outcome
    }

    struct Problem: Error, CustomStringConvertible {
        let description: String
    }

    /// The subject the session page shows, if the session works and belongs to a bench user.
    func check(_ cookie: String, connection: KeepAliveConnection) -> Result<String, Problem> {
        let request = "GET /session HTTP/1.1\r\nHost: 127.0.0.1:\(bridgePort)\r\nAccept: text/html\r\nCookie: \(cookie)\r\n\r\n"
        guard let answer = try? connection.exchange(Array(request.utf8)) else {
            return .failure(Problem(description: "GET /session got no answer"))
        }
        guard answer.status == 200 else { return .failure(Problem(description: "GET /session answered \(answer.status)")) }
        let html = answer.text
        guard let start = html.range(of: "<dt>Apple user ID</dt><dd><code class=\"break\">") else {
            return .failure(Problem(description: "the session page shows no Apple user ID"))
        }
        let rest = html[start.upperBound...]
        guard let end = rest.range(of: "</code>") else { return .failure(Problem(description: "unterminated user ID")) }
        let subject = String(rest[..<end.lowerBound])
        guard subject.hasPrefix(subjectPrefix), let number = Int(subject.dropFirst(subjectPrefix.count)),
              (0..<count).contains(number) else {
            return .failure(Problem(description: "the session page shows a user this run did not sign in"))
        }
        return .success(subject)
    }
}
