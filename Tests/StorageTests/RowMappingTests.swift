import Foundation
import Testing
@testable import Storage

extension StoreBehaviour {
    @Suite("Rows by column name") struct RowsByName {
        @Test("a row decodes the same whatever order the query lists its columns in", arguments: Backend.allCases)
        func anyColumnOrder(backend: Backend) throws {
            try withFreshStore(backend) { fixture in
                let user = try fixture.store.write {
                    try $0.upsertAppleUser(appleProfile(sub: "s", email: "a@example.com", name: "Kim"), now: t0).user
                }
                let mapping = TableMapping.users
                let reversed = mapping.columns.reversed().joined(separator: ", ")
                let decoded = try fixture.sqlConnection().query("SELECT \(reversed) FROM users") { try mapping.decode($0) }
                #expect(decoded == [user])
            }
        }

        @Test("a missing column is an error that names it, not a wrong value", arguments: Backend.allCases)
        func missingColumn(backend: Backend) throws {
            try withFreshStore(backend) { fixture in
                _ = try fixture.store.write { try $0.upsertAppleUser(appleProfile(sub: "s"), now: t0) }
                let connection = try fixture.sqlConnection()
                let error = #expect(throws: StoreError.self) {
                    try connection.query("SELECT id, provider FROM users") { try TableMapping.users.decode($0) }
                }
                #expect(error?.description.contains("no column provider_user_id") == true)
            }
        }
    }
}
