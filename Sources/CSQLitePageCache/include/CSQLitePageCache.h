#ifndef CSQLITEPAGECACHE_H
#define CSQLITEPAGECACHE_H

#include <sqlite3.h>

/* SQLite's own page cache (pcache1) behind a thin wrapper that skips the truncations that cannot remove anything.

   At the end of every transaction SQLite truncates the connection's page cache to the database's size. pcache1
   remembers the largest page number it has held, and when that is beyond the database by more than its hash table
   has slots it visits every slot and every cached page. The B-tree's rebalancing, which a page split under random
   keys does often, parks a page under the number of the locking page (1 GiB into the file, page 524,289 with
   2 KiB pages) while it swaps two page numbers; pcache1 then remembers 524,289 until the next truncation, and that
   COMMIT walks the whole cache. On the one writer connection, with its 8 MiB cache, that walk was about a tenth of
   the writer's time under sign-ins.

   The wrapper keeps its own record of the largest page number a page may have (every number a page was fetched
   under, or moved to, other than that parking number), and whether a page may be parked there: a truncation that
   can remove no page is not passed on. The record only ever errs upward (pages pcache1 drops or recycles on its own
   stay counted), so every truncation that could remove a page still reaches pcache1.

   Installs the wrapper (SQLITE_CONFIG_PCACHE2). Returns SQLITE_OK; SQLITE_MISUSE when SQLite was initialized
   before, or SQLITE_ERROR when its default cache lacks xShrink (then SQLite keeps its own page cache unwrapped).
   Call it once, before anything initializes SQLite. */
int bridge_sqlite_install_page_cache(void);

/* The wrapper's methods, for tests that drive a cache directly; their xCreate works once the wrapper is installed. */
const sqlite3_pcache_methods2 *bridge_sqlite_page_cache_methods(void);

/* Page caches the wrapper has made so far in this process (SQLite makes one per open database file). For tests. */
long bridge_sqlite_page_caches_created(void);

/* Truncations of `cache` (made by the wrapper's xCreate) that were passed on to SQLite's page cache. For tests. */
long bridge_sqlite_page_cache_truncations_passed_on(sqlite3_pcache *cache);

#endif
