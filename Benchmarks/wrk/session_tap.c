// An LD_PRELOAD tap for wrk in `scripts/bench signin`: writes the value of every `asb_session` cookie the
// server sets to $SESSION_TAP_FILE, one `asb_session=VALUE` line each, so the benchmark can check afterwards
// that each sign-in's session works. It is needed because wrk hands a Lua `response()` its headers as a table
// keyed by name, which keeps only the last Set-Cookie of an answer, and a sign-in's 303 sets the session
// cookie first and then expires the binding cookie.
//
// It wraps read(2), which wrk uses for its sockets, and looks for the header in what each read returned.
// A header split across two reads would be missed and show up as a sign-in without a working session
// (never as a false success). Build: gcc -O2 -shared -fPIC -o session_tap.so session_tap.c -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static ssize_t (*real_read)(int, void *, size_t);
static FILE *out;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static const char marker[] = "\r\nSet-Cookie: asb_session=";

__attribute__((constructor)) static void tap_open(void) {
    real_read = (ssize_t (*)(int, void *, size_t)) dlsym(RTLD_NEXT, "read");
    const char *path = getenv("SESSION_TAP_FILE");
    if (path && (out = fopen(path, "w")) != NULL) setvbuf(out, NULL, _IOFBF, 1 << 20);
}

__attribute__((destructor)) static void tap_close(void) {
    pthread_mutex_lock(&out_lock);
    if (out) fclose(out);
    out = NULL;
    pthread_mutex_unlock(&out_lock);
}

static void scan(const char *data, size_t length) {
    const char *end = data + length;
    const char *at = data;
    while (at < end && (at = memmem(at, (size_t) (end - at), marker, sizeof marker - 1)) != NULL) {
        const char *value = at + sizeof marker - 1;
        const char *stop = value;
        while (stop < end && *stop != ';' && *stop != '\r') stop++;
        if (stop < end && stop > value) {
            pthread_mutex_lock(&out_lock);
            if (out) fprintf(out, "asb_session=%.*s\n", (int) (stop - value), value);
            pthread_mutex_unlock(&out_lock);
        }
        at = stop;
    }
}

ssize_t read(int fd, void *buffer, size_t count) {
    if (!real_read) real_read = (ssize_t (*)(int, void *, size_t)) dlsym(RTLD_NEXT, "read");
    ssize_t got = real_read(fd, buffer, count);
    if (got > 0 && out) scan((const char *) buffer, (size_t) got);
    return got;
}
