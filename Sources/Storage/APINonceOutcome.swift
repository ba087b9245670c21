/// What `consumeAPINonce` found; only `.consumed` lets the sign-in go on.
public enum APINonceOutcome: Equatable, Sendable {
    case consumed
    case unknown
    case expired
    case alreadyUsed
}
