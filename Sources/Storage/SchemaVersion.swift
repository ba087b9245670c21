/// The schema version this build migrates a database to, and the newest it opens: the last of `Migrations.all`.
public enum SchemaVersion {
    public static let current = Migrations.all.last?.version ?? 0
}
