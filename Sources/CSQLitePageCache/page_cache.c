#include "CSQLitePageCache.h"

#include <stddef.h>

/* See CSQLitePageCache.h for why this wrapper exists. Every method but xTruncate forwards to SQLite's default page
   cache; xFetch and xRekey also note the page numbers they hand out. */

/* Where SQLite's B-tree parks a page while it swaps two page numbers: the page holding the locking byte, which
   SQLite never stores data in (PENDING_BYTE, 0x40000000, unless a test build moved it). If it were elsewhere the
   wrapper would only skip fewer truncations: a page moved to any other number counts toward the largest. */
#define LOCKING_BYTE_OFFSET 0x40000000u

typedef struct WrappedCache {
    sqlite3_pcache *inner;
    /* No page has a number above this, except perhaps one at parkingNumber. */
    unsigned int largestNumber;
    unsigned int parkingNumber;
    /* A page may be at parkingNumber (moved there, or fetched there); cleared by a truncation that removes it. */
    int parkingInUse;
    long truncationsPassedOn;
} WrappedCache;

static sqlite3_pcache_methods2 defaults;
static int installed;
static long cachesCreated;

static void noteNumber(WrappedCache *cache, unsigned int number) {
    if (number == cache->parkingNumber) {
        cache->parkingInUse = 1;
    } else if (number > cache->largestNumber) {
        cache->largestNumber = number;
    }
}

static int wrappedInit(void *unused) {
    (void)unused;
    return defaults.xInit(defaults.pArg);
}

static void wrappedShutdown(void *unused) {
    (void)unused;
    if (defaults.xShutdown != NULL) defaults.xShutdown(defaults.pArg);
}

static sqlite3_pcache *wrappedCreate(int pageSize, int extraSize, int purgeable) {
    if (!installed) return NULL;
    WrappedCache *cache = sqlite3_malloc(sizeof *cache);
    if (cache == NULL) return NULL;
    cache->inner = defaults.xCreate(pageSize, extraSize, purgeable);
    if (cache->inner == NULL) {
        sqlite3_free(cache);
        return NULL;
    }
    cache->largestNumber = 0;
    cache->parkingNumber = pageSize > 0 ? LOCKING_BYTE_OFFSET / (unsigned int)pageSize + 1 : 0;
    cache->parkingInUse = 0;
    cache->truncationsPassedOn = 0;
    __atomic_add_fetch(&cachesCreated, 1, __ATOMIC_RELAXED);
    return (sqlite3_pcache *)cache;
}

static void wrappedCachesize(sqlite3_pcache *handle, int pages) {
    defaults.xCachesize(((WrappedCache *)handle)->inner, pages);
}

static int wrappedPagecount(sqlite3_pcache *handle) {
    return defaults.xPagecount(((WrappedCache *)handle)->inner);
}

static sqlite3_pcache_page *wrappedFetch(sqlite3_pcache *handle, unsigned int number, int createFlag) {
    WrappedCache *cache = (WrappedCache *)handle;
    sqlite3_pcache_page *page = defaults.xFetch(cache->inner, number, createFlag);
    /* Without createFlag a page found is one already noted; with it, the page may be new. */
    if (page != NULL && createFlag != 0) noteNumber(cache, number);
    return page;
}

static void wrappedUnpin(sqlite3_pcache *handle, sqlite3_pcache_page *page, int discard) {
    defaults.xUnpin(((WrappedCache *)handle)->inner, page, discard);
}

static void wrappedRekey(sqlite3_pcache *handle, sqlite3_pcache_page *page, unsigned int from, unsigned int to) {
    WrappedCache *cache = (WrappedCache *)handle;
    defaults.xRekey(cache->inner, page, from, to);
    /* Two pages never share a number, so the page moved away from the parking number was the one there. */
    if (from == cache->parkingNumber) cache->parkingInUse = 0;
    noteNumber(cache, to);
}

static void wrappedTruncate(sqlite3_pcache *handle, unsigned int limit) {
    WrappedCache *cache = (WrappedCache *)handle;
    int parkedPageGoes = cache->parkingInUse && cache->parkingNumber >= limit;
    if (cache->largestNumber < limit && !parkedPageGoes) return;  /* no page numbered limit or above */
    cache->truncationsPassedOn += 1;
    defaults.xTruncate(cache->inner, limit);
    if (cache->largestNumber >= limit) cache->largestNumber = limit > 0 ? limit - 1 : 0;
    if (parkedPageGoes) cache->parkingInUse = 0;
}

static void wrappedDestroy(sqlite3_pcache *handle) {
    WrappedCache *cache = (WrappedCache *)handle;
    defaults.xDestroy(cache->inner);
    sqlite3_free(cache);
}

/* Installed only over a default cache that has xShrink. */
static void wrappedShrink(sqlite3_pcache *handle) {
    defaults.xShrink(((WrappedCache *)handle)->inner);
}

static const sqlite3_pcache_methods2 wrappedMethods = {
    1, NULL, wrappedInit, wrappedShutdown, wrappedCreate, wrappedCachesize, wrappedPagecount, wrappedFetch,
    wrappedUnpin, wrappedRekey, wrappedTruncate, wrappedDestroy, wrappedShrink,
};

int bridge_sqlite_install_page_cache(void) {
    if (installed) return SQLITE_OK;
    int rc = sqlite3_config(SQLITE_CONFIG_GETPCACHE2, &defaults);
    if (rc != SQLITE_OK) return rc;
    if (defaults.iVersion < 1 || defaults.xShrink == NULL) return SQLITE_ERROR;
    rc = sqlite3_config(SQLITE_CONFIG_PCACHE2, &wrappedMethods);
    if (rc == SQLITE_OK) installed = 1;
    return rc;
}

const sqlite3_pcache_methods2 *bridge_sqlite_page_cache_methods(void) {
    return &wrappedMethods;
}

long bridge_sqlite_page_cache_truncations_passed_on(sqlite3_pcache *cache) {
    return ((WrappedCache *)cache)->truncationsPassedOn;
}

long bridge_sqlite_page_caches_created(void) {
    return __atomic_load_n(&cachesCreated, __ATOMIC_RELAXED);
}
