#ifndef COPENSSL_SETUP_H
#define COPENSSL_SETUP_H

// Nothing to call: linking this target runs its constructor (openssl_setup.c) before main.

#endif
