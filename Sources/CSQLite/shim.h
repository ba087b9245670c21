#include "sqlite3.h"

/* sqlite3_config is variadic, which Swift cannot call: fixed-arity wrappers for the settings the store makes
   once, before SQLite initializes. */

/* Memory statistics off: with them on, every allocation SQLite makes takes one process-wide mutex to count it,
   and the store never reads the counts. Returns SQLITE_OK, or SQLITE_MISUSE once SQLite is initialized. */
static inline int bridge_sqlite_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
