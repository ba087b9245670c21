#include "CSQLiteWALBuffer.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

/* See CSQLiteWALBuffer.h for what this VFS is for. Every method forwards to the default VFS's file; only a WAL
   file's writes are held back, and the methods below say where they are written. */

#define VFS_NAME "bridge-wal-buffer"
/* A WAL frame's header; the WAL file's own header is 32 bytes, so a write of this size is a frame header. */
#define FRAME_HEADER_BYTES 24
/* The default VFS writes at most 0x1ffff bytes per call (it masks the length: a larger write comes back short and
   is reported as a full disk), so at most 124 KiB is held: when the next write would not fit, what is held is
   written first. A commit of 600 KiB is five write calls. */
#define MAX_HELD_BYTES ((size_t)124 * 1024)

typedef struct BufferedFile BufferedFile;
struct BufferedFile {
    sqlite3_file base;
    /* The default VFS's file, in the memory right after this struct. */
    sqlite3_file *real;
    /* For a database file, its connection's WAL file while that is open; for a WAL file, its database file. */
    BufferedFile *companion;
    int isWAL;
    /* WAL only: bytes SQLite wrote that are not in the file yet, for [heldOffset, heldOffset + heldLength). */
    unsigned char *held;
    sqlite3_int64 heldOffset;
    size_t heldLength;
    /* The last write was the header of a commit frame: the next one, its page, completes the transaction. */
    int commitPageNext;
    /* WAL only: write calls made to the file (BRIDGE_SQLITE_FCNTL_WAL_WRITE_CALLS). */
    sqlite3_int64 writeCalls;
};

static sqlite3_vfs *defaultVFS;
static sqlite3_vfs bufferVFS;
static const sqlite3_io_methods bufferMethods;
static pthread_once_t registration = PTHREAD_ONCE_INIT;
static int registrationResult = SQLITE_ERROR;

static int writeHeld(BufferedFile *file) {
    if (file->heldLength == 0) return SQLITE_OK;
    file->writeCalls += 1;
    int rc = file->real->pMethods->xWrite(file->real, file->held, (int)file->heldLength, file->heldOffset);
    /* On failure SQLite fails the transaction and writes its frames again in the next one. */
    file->heldLength = 0;
    return rc;
}

/* Before anything else looks at a database file's WAL: what the commit path did not write (only frames of a
   transaction that has not committed can be left) is written, so the file is what SQLite believes it wrote. */
static void writeCompanionHeld(BufferedFile *database) {
    if (database->companion != NULL) (void)writeHeld(database->companion);
}

static int isCommitFrameHeader(const void *data, int amount) {
    if (amount != FRAME_HEADER_BYTES) return 0;
    const unsigned char *bytes = data;
    /* Bytes 4-7: the database size in pages after a commit, zero in every other frame. */
    return (bytes[4] | bytes[5] | bytes[6] | bytes[7]) != 0;
}

static int hold(BufferedFile *file, const void *data, int amount, sqlite3_int64 offset) {
    size_t needed = file->heldLength + (size_t)amount;
    if (file->held == NULL) {
        file->held = malloc(MAX_HELD_BYTES);
        if (file->held == NULL) return SQLITE_NOMEM;
    }
    if (file->heldLength == 0) file->heldOffset = offset;
    memcpy(file->held + file->heldLength, data, (size_t)amount);
    file->heldLength = needed;
    return SQLITE_OK;
}

static int bufferedWrite(sqlite3_file *handle, const void *data, int amount, sqlite3_int64 offset) {
    BufferedFile *file = (BufferedFile *)handle;
    if (!file->isWAL) return file->real->pMethods->xWrite(file->real, data, amount, offset);
    int completesCommit = file->commitPageNext;
    file->commitPageNext = isCommitFrameHeader(data, amount);
    int contiguous = file->heldLength == 0 || offset == file->heldOffset + (sqlite3_int64)file->heldLength;
    if (!contiguous || file->heldLength + (size_t)amount > MAX_HELD_BYTES) {
        int rc = writeHeld(file);
        if (rc != SQLITE_OK) {
            file->commitPageNext = 0;
            return rc;
        }
    }
    /* SQLite's WAL writes are a frame header or a page (64 KiB at most), so each fits once the rest is written. */
    if ((size_t)amount > MAX_HELD_BYTES || hold(file, data, amount, offset) != SQLITE_OK) {
        /* Too large to hold, or no memory to hold it: written now, after what is held. */
        int rc = writeHeld(file);
        if (rc == SQLITE_OK) {
            file->writeCalls += 1;
            rc = file->real->pMethods->xWrite(file->real, data, amount, offset);
        }
        if (rc != SQLITE_OK) file->commitPageNext = 0;
        return rc;
    }
    /* The commit frame's page is the transaction's last frame: the COMMIT returns only after this write. */
    if (completesCommit) return writeHeld(file);
    return SQLITE_OK;
}

static int bufferedClose(sqlite3_file *handle) {
    BufferedFile *file = (BufferedFile *)handle;
    int rc = SQLITE_OK;
    if (file->isWAL) rc = writeHeld(file);
    if (file->companion != NULL) file->companion->companion = NULL;
    file->companion = NULL;
    free(file->held);
    file->held = NULL;
    int closed = file->real->pMethods->xClose(file->real);
    return rc != SQLITE_OK ? rc : closed;
}

/* Whatever reads or changes the WAL file sees what is held first. */
#define WRITE_HELD_FIRST(file)                                   \
    do {                                                         \
        if ((file)->isWAL) {                                     \
            int heldResult = writeHeld(file);                    \
            if (heldResult != SQLITE_OK) return heldResult;      \
        }                                                        \
    } while (0)

static int bufferedRead(sqlite3_file *handle, void *data, int amount, sqlite3_int64 offset) {
    BufferedFile *file = (BufferedFile *)handle;
    WRITE_HELD_FIRST(file);
    return file->real->pMethods->xRead(file->real, data, amount, offset);
}

static int bufferedTruncate(sqlite3_file *handle, sqlite3_int64 size) {
    BufferedFile *file = (BufferedFile *)handle;
    WRITE_HELD_FIRST(file);
    return file->real->pMethods->xTruncate(file->real, size);
}

static int bufferedSync(sqlite3_file *handle, int flags) {
    BufferedFile *file = (BufferedFile *)handle;
    WRITE_HELD_FIRST(file);
    return file->real->pMethods->xSync(file->real, flags);
}

static int bufferedFileSize(sqlite3_file *handle, sqlite3_int64 *size) {
    BufferedFile *file = (BufferedFile *)handle;
    WRITE_HELD_FIRST(file);
    return file->real->pMethods->xFileSize(file->real, size);
}

static int bufferedLock(sqlite3_file *handle, int level) {
    BufferedFile *file = (BufferedFile *)handle;
    return file->real->pMethods->xLock(file->real, level);
}

static int bufferedUnlock(sqlite3_file *handle, int level) {
    BufferedFile *file = (BufferedFile *)handle;
    return file->real->pMethods->xUnlock(file->real, level);
}

static int bufferedCheckReservedLock(sqlite3_file *handle, int *reserved) {
    BufferedFile *file = (BufferedFile *)handle;
    return file->real->pMethods->xCheckReservedLock(file->real, reserved);
}

static int bufferedFileControl(sqlite3_file *handle, int op, void *argument) {
    BufferedFile *file = (BufferedFile *)handle;
    if (op == SQLITE_FCNTL_VFSNAME) {
        /* SQLite's convention for a shim: its name in front of the underlying VFS's. */
        int rc = file->real->pMethods->xFileControl(file->real, op, argument);
        char **name = argument;
        if (rc == SQLITE_OK && *name != NULL) {
            char *combined = sqlite3_mprintf(VFS_NAME "/%s", *name);
            sqlite3_free(*name);
            *name = combined;
        } else {
            *name = sqlite3_mprintf(VFS_NAME);
            rc = SQLITE_OK;
        }
        return rc;
    }
    if (op == BRIDGE_SQLITE_FCNTL_WAL_WRITE_CALLS) {
        /* Asked of the database file (sqlite3_file_control names a database), answered for its WAL. */
        if (file->isWAL || file->companion == NULL) return SQLITE_NOTFOUND;
        *(sqlite3_int64 *)argument = file->companion->writeCalls;
        return SQLITE_OK;
    }
    WRITE_HELD_FIRST(file);
    return file->real->pMethods->xFileControl(file->real, op, argument);
}

static int bufferedSectorSize(sqlite3_file *handle) {
    BufferedFile *file = (BufferedFile *)handle;
    return file->real->pMethods->xSectorSize(file->real);
}

static int bufferedDeviceCharacteristics(sqlite3_file *handle) {
    BufferedFile *file = (BufferedFile *)handle;
    return file->real->pMethods->xDeviceCharacteristics(file->real);
}

/* The wal-index (shared memory) methods are called on the database file, for its WAL. */

static int bufferedShmMap(sqlite3_file *handle, int region, int size, int extend, void volatile **memory) {
    BufferedFile *file = (BufferedFile *)handle;
    if (file->real->pMethods->iVersion < 2 || file->real->pMethods->xShmMap == NULL) return SQLITE_IOERR_SHMMAP;
    return file->real->pMethods->xShmMap(file->real, region, size, extend, memory);
}

static int bufferedShmLock(sqlite3_file *handle, int offset, int count, int flags) {
    BufferedFile *file = (BufferedFile *)handle;
    if (file->real->pMethods->iVersion < 2 || file->real->pMethods->xShmLock == NULL) return SQLITE_IOERR_SHMLOCK;
    /* Before the write lock goes to another connection, the file holds everything this one wrote. */
    if (flags & SQLITE_SHM_UNLOCK) writeCompanionHeld(file);
    return file->real->pMethods->xShmLock(file->real, offset, count, flags);
}

static void bufferedShmBarrier(sqlite3_file *handle) {
    BufferedFile *file = (BufferedFile *)handle;
    /* SQLite publishes a new wal-index header only after a barrier: readers then read the frames it names. */
    writeCompanionHeld(file);
    if (file->real->pMethods->iVersion >= 2 && file->real->pMethods->xShmBarrier != NULL) {
        file->real->pMethods->xShmBarrier(file->real);
    }
}

static int bufferedShmUnmap(sqlite3_file *handle, int deleteFlag) {
    BufferedFile *file = (BufferedFile *)handle;
    writeCompanionHeld(file);
    if (file->real->pMethods->iVersion < 2 || file->real->pMethods->xShmUnmap == NULL) return SQLITE_OK;
    return file->real->pMethods->xShmUnmap(file->real, deleteFlag);
}

static int bufferedFetch(sqlite3_file *handle, sqlite3_int64 offset, int amount, void **pointer) {
    BufferedFile *file = (BufferedFile *)handle;
    if (file->real->pMethods->iVersion < 3 || file->real->pMethods->xFetch == NULL) {
        *pointer = NULL;
        return SQLITE_OK;
    }
    WRITE_HELD_FIRST(file);
    return file->real->pMethods->xFetch(file->real, offset, amount, pointer);
}

static int bufferedUnfetch(sqlite3_file *handle, sqlite3_int64 offset, void *pointer) {
    BufferedFile *file = (BufferedFile *)handle;
    if (file->real->pMethods->iVersion < 3 || file->real->pMethods->xUnfetch == NULL) return SQLITE_OK;
    return file->real->pMethods->xUnfetch(file->real, offset, pointer);
}

static const sqlite3_io_methods bufferMethods = {
    3,
    bufferedClose,
    bufferedRead,
    bufferedWrite,
    bufferedTruncate,
    bufferedSync,
    bufferedFileSize,
    bufferedLock,
    bufferedUnlock,
    bufferedCheckReservedLock,
    bufferedFileControl,
    bufferedSectorSize,
    bufferedDeviceCharacteristics,
    bufferedShmMap,
    bufferedShmLock,
    bufferedShmBarrier,
    bufferedShmUnmap,
    bufferedFetch,
    bufferedUnfetch,
};

static int bufferedOpen(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *handle, int flags, int *outFlags) {
    (void)vfs;
    BufferedFile *file = (BufferedFile *)handle;
    memset(file, 0, sizeof *file);
    file->real = (sqlite3_file *)(file + 1);
    int rc = defaultVFS->xOpen(defaultVFS, name, file->real, flags, outFlags);
    /* SQLite closes a file whose pMethods is set even when opening failed. */
    file->base.pMethods = file->real->pMethods != NULL ? &bufferMethods : NULL;
    if (rc != SQLITE_OK || name == NULL || !(flags & SQLITE_OPEN_WAL)) return rc;
    sqlite3_file *database = sqlite3_database_file_object(name);
    /* Only a WAL whose database file came through this VFS is held back: its barrier is the one seen here. */
    if (database != NULL && database->pMethods == &bufferMethods) {
        file->isWAL = 1;
        file->companion = (BufferedFile *)database;
        ((BufferedFile *)database)->companion = file;
    }
    return rc;
}

static void registerOnce(void) {
    defaultVFS = sqlite3_vfs_find(NULL);
    if (defaultVFS == NULL) {
        registrationResult = SQLITE_ERROR;
        return;
    }
    bufferVFS = *defaultVFS;
    bufferVFS.pNext = NULL;
    bufferVFS.zName = VFS_NAME;
    bufferVFS.pAppData = defaultVFS->pAppData;
    bufferVFS.szOsFile = (int)sizeof(BufferedFile) + defaultVFS->szOsFile;
    bufferVFS.xOpen = bufferedOpen;
    registrationResult = sqlite3_vfs_register(&bufferVFS, 0);
}

int bridge_sqlite_register_wal_buffer_vfs(void) {
    pthread_once(&registration, registerOnce);
    return registrationResult;
}

const char *bridge_sqlite_wal_buffer_vfs_name(void) { return VFS_NAME; }
