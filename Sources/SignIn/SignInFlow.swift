import Storage

/// How a sign-in reached the server. Stored with its session as the raw value.
public enum SignInFlow: String, Sendable, Equatable {
    /// Apple's form_post to the web Services ID.
    case web
    /// An app's webview handed a native Sign in with Apple result (bundle-ID audience) to the callback.
    case webviewNative = "webview-native"
    /// The JSON API.
    case api

    /// The stored flow of a session the OpenID provider's token endpoint opened for a client's code.
    package static let providerSession = "openid"
}

extension Session {
    /// The flow this session was opened by; a value this version does not know reads as the web flow.
    package var signInFlow: SignInFlow { SignInFlow(rawValue: flow) ?? .web }
}
