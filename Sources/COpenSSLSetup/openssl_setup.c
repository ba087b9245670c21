// OpenSSL registers OPENSSL_cleanup with atexit on its first initialization. That cleanup frees OpenSSL's global
// locks and tables while other threads may still be inside OpenSSL (a verification on a worker, libpq), and those
// threads then crash the exiting process (SIGSEGV, SIGBUS) instead of letting it exit with its status. The memory
// is the kernel's to reclaim at exit anyway, so OpenSSL is initialized here, before main and before libpq or JOSE
// first use it, with OPENSSL_INIT_NO_ATEXIT: only the first initialization decides whether the handler is registered.
#include "COpenSSLSetup.h"
#include <openssl/crypto.h>

__attribute__((constructor))
static void openssl_setup_without_exit_cleanup(void) {
    OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL);
}
