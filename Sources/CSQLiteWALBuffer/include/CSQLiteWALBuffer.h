#ifndef CSQLITEWALBUFFER_H
#define CSQLITEWALBUFFER_H

/* A VFS in front of SQLite's default one that gathers the writes of one transaction to a WAL file and hands them
   to the file system in pieces of up to 124 KiB, the last one when the transaction's commit frame is complete.

   SQLite writes every WAL frame as two pwrite calls (its 24-byte header, then the page), so a commit of 300
   frames of 2 KiB is 600 system calls; here it is five. The frames are kept in memory until a piece is full or
   the commit frame's page arrives; the COMMIT returns only after that write, and its failure is the COMMIT's
   failure. Anything else that touches the WAL file (a read, a sync, a truncate, its size), and the wal-index
   barrier and unlocks of its database connection, write what is kept first, so no reader can see a commit whose
   frames are not in the file. Durability is unchanged: a frame reaches the kernel before the COMMIT that contains it returns.

   Returns SQLITE_OK once the VFS named bridge_sqlite_wal_buffer_vfs_name() is registered (not as the default),
   or SQLite's error. Safe to call from several threads and more than once. */
int bridge_sqlite_register_wal_buffer_vfs(void);

const char *bridge_sqlite_wal_buffer_vfs_name(void);

/* sqlite3_file_control(db, "main", BRIDGE_SQLITE_FCNTL_WAL_WRITE_CALLS, &count) sets the sqlite3_int64 count to
   the write calls made to the connection's open WAL file so far (SQLITE_NOTFOUND when none is open through this
   VFS). For tests and benchmarks. */
#define BRIDGE_SQLITE_FCNTL_WAL_WRITE_CALLS 1000001

#endif
