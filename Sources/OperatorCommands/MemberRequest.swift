import Storage

/// One request from the command line: `apple-signin-bridge members find|export|delete|groups …`.
public enum MemberRequest: Equatable, Sendable {
    /// How `find` names the member: Apple's `sub` (at most one member) or an email (possibly several).
    public enum Lookup: Equatable, Sendable {
        case sub(String)
        case email(String)
    }

    case find(Lookup)
    case export(memberID: Int64)
    /// Deletes only when `confirmed` (`--yes`); otherwise says what would be deleted.
    case delete(memberID: Int64, confirmed: Bool)
    /// Shows the member's groups (forward auth's `?group=`), after the change when one is given.
    case groups(memberID: Int64, change: GroupChange?)

    /// What `members groups` does to the member's groups.
    public enum GroupChange: Equatable, Sendable {
        case add(String)
        case remove(String)
    }

    public static let usage = "usage: apple-signin-bridge members find (--sub SUB | --email EMAIL)"
        + " | export --id ID | delete --id ID --yes | groups --id ID [--add GROUP | --remove GROUP] [--config FILE]"

    /// The action word, for the audit line.
    package var action: String {
        switch self {
        case .find: "find"
        case .export: "export"
        case .delete: "delete"
        case .groups: "groups"
        }
    }

    /// The member an export or deletion names.
    package var memberID: Int64? {
        switch self {
        case .find: nil
        case let .export(memberID), let .delete(memberID, _), let .groups(memberID, _): memberID
        }
    }

    /// `words`: what follows `members` that is not an option (the action). `options`: the options given, value options
    /// by name (`id`), flags with their dashes (`--yes`). Options every command takes (`config`, `resources`) pass.
    public static func parse(words: [String], options: [String: String]) throws(MemberRequestError) -> MemberRequest {
        guard let action = words.first else { throw .usage(usage) }
        guard words.count == 1 else { throw .usage("members \(action) takes no word \"\(words[1])\"; \(usage)") }
        let accepted: Set<String> = switch action {
        case "find": ["sub", "email"]
        case "export": ["id"]
        case "delete": ["id", "--yes"]
        case "groups": ["id", "add", "remove"]
        default: throw .usage("unknown members action \"\(action)\"; \(usage)")
        }
        let sharedOptions: Set<String> = ["config", "resources"]
        if let other = options.keys.sorted().first(where: { !accepted.contains($0) && !sharedOptions.contains($0) }) {
            throw .usage("members \(action) does not take \(other.hasPrefix("--") ? other : "--" + other); \(usage)")
        }
        switch action {
        case "find":
            switch (options["sub"], options["email"]) {
            case let (sub?, nil): return .find(.sub(try nonEmpty(sub, "--sub")))
            case let (nil, email?): return .find(.email(try nonEmpty(email, "--email")))
            case (_?, _?): throw .usage("members find takes --sub or --email, not both")
            case (nil, nil): throw .usage("members find needs --sub SUB or --email EMAIL")
            }
        case "export":
            return .export(memberID: try memberID(options["id"], action))
        case "groups":
            let change: GroupChange? = switch (options["add"], options["remove"]) {
            case let (group?, nil): .add(try groupName(group, "--add"))
            case let (nil, group?): .remove(try groupName(group, "--remove"))
            case (_?, _?): throw .usage("members groups takes --add or --remove, not both")
            case (nil, nil): nil
            }
            return .groups(memberID: try memberID(options["id"], action), change: change)
        default:
            return .delete(memberID: try memberID(options["id"], action), confirmed: options["--yes"] != nil)
        }
    }

    private static func nonEmpty(_ value: String, _ option: String) throws(MemberRequestError) -> String {
        guard !value.isEmpty else { throw .usage("\(option) needs a value") }
        return value
    }

    private static func groupName(_ value: String, _ option: String) throws(MemberRequestError) -> String {
        guard StoreInput.isGroupName(value) else {
            throw .usage("\(option) needs a group name: 1 to 64 of A-Z a-z 0-9 . _ : @ -, starting with a letter or digit")
        }
        return value
    }

    /// Member ids are positive whole numbers (the `memberId` the JSON API and `members find` show).
    private static func memberID(_ value: String?, _ action: String) throws(MemberRequestError) -> Int64 {
        guard let value else { throw .usage("members \(action) needs --id ID (the memberId that members find prints)") }
        guard let id = Int64(value), id > 0 else {
            throw .usage("--id must be a member id, a positive whole number")
        }
        return id
    }
}

/// A request that cannot be run as written; nothing was looked up.
public enum MemberRequestError: Error, Equatable, CustomStringConvertible {
    case usage(String)

    public var description: String {
        switch self {
        case let .usage(message): message
        }
    }
}
