// The low-level SHA-256 calls (SHA256_Init/Update/Final) are deprecated in OpenSSL 3 in favour of EVP, but remain
// supported; JOSE uses them where a sign-in hashes short values, for which EVP's per-call context costs as much as
// the hash itself.
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include "openssl/evp.h"
#include "openssl/rsa.h"
#include "openssl/ec.h"
#include "openssl/err.h"
#include "openssl/rand.h"
#include "openssl/crypto.h"
#include "openssl/core_names.h"
#include "openssl/param_build.h"
#include "openssl/pem.h"
#include "openssl/bn.h"
#include "openssl/ecdsa.h"
#include "openssl/hmac.h"
#include "openssl/x509.h"
#include "openssl/kdf.h"
#include "openssl/sha.h"
