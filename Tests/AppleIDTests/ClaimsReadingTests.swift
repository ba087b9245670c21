import Foundation
import JSON
import Testing
@testable import AppleID

@Suite("Claims read from an object's members or from its dictionary")
struct ClaimsReadingTests {
    private static let documents = [
        #"{"iss":"https://appleid.apple.com","aud":"com.example.web","sub":"001.abc","iat":1764500000,"exp":1764600000,"#
            + #""auth_time":1764499990,"nonce":"n-1","c_hash":"h","email":"a@privaterelay.appleid.com","email_verified":"true","#
            + #""is_private_email":true,"real_user_status":2,"jti":"j","transfer_sub":"t.1","events":"{\"type\":\"x\"}","#
            + #""nonce_supported":true,"unknown_claim":[1,2]}"#,
        #"{"aud":["a","b"],"iss":"x","exp":1.5e9,"email":"","email_verified":false,"is_private_email":"FALSE"}"#,
        #"{"sub":"s","real_user_status":1.5,"iat":1764500000}"#,
        #"{}"#,
    ]

    @Test("every claim reads the same either way", arguments: documents)
    func same(document: String) throws {
        let bytes = Array(document.utf8)
        guard case let .object(dictionary) = try JSONValue.parse(bytes) else { Issue.record("not an object"); return }
        let fromMembers = try AppleClaims(members: JSONValue.parseObjectMembers(bytes))
        #expect(fromMembers == (try AppleClaims(dictionary)))
    }

    @Test("a claim of the wrong type is refused the same way, whichever is read first", arguments: [
        #"{"iat":"soon","exp":"later"}"#, #"{"exp":"later","iat":"soon"}"#, #"{"auth_time":true,"iat":-1}"#,
    ])
    func sameRefusal(document: String) throws {
        let bytes = Array(document.utf8)
        guard case let .object(dictionary) = try JSONValue.parse(bytes) else { Issue.record("not an object"); return }
        var fromDictionary: TokenRejection?
        var fromMembers: TokenRejection?
        do { _ = try AppleClaims(dictionary) } catch { fromDictionary = error }
        do { _ = try AppleClaims(members: JSONValue.parseObjectMembers(bytes)) } catch let error as TokenRejection { fromMembers = error }
        #expect(fromDictionary != nil)
        #expect(fromMembers == fromDictionary)
    }
}
