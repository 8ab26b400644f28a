// OpenSSL's EVP digest interface (SHA-256), and the library's initialisation, which FeedStore
// calls first so that exit does not tear OpenSSL down under threads still hashing.
#include <openssl/crypto.h>
#include <openssl/evp.h>
