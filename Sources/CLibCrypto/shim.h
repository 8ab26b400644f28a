// OpenSSL's EVP digest interface: the only part of libcrypto FeedStore uses (SHA-256).
#include <openssl/evp.h>
