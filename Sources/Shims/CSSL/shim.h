#ifndef INKY_CSSL_SHIM_H
#define INKY_CSSL_SHIM_H
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/bio.h>
#include <openssl/x509.h>

/* Settings libssl spells as macros over SSL_CTX_ctrl or with SSL_OP_BIT(n); Swift imports
   neither, so each is one function here. */

/* TLS 1.2 at least; client-started renegotiation refused (TLS 1.2's costly handshake on demand);
   no compression (CRIME); the server's order of ciphers, which is OpenSSL's secure default list;
   finite-field DHE groups chosen by the key's strength. Returns 1 on success. */
static inline int inky_ssl_ctx_harden(SSL_CTX *ctx) {
    if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) return 0;
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE);
    if (SSL_CTX_set_dh_auto(ctx, 1) != 1) return 0;
    return 1;
}

/* A memory BIO answers "retry" when empty instead of end of file: the bytes have not come yet. */
static inline void inky_bio_set_mem_retry_when_empty(BIO *bio) { BIO_set_mem_eof_return(bio, -1); }

/* The reason of a packed error code (a static inline in 3.x, a macro before). */
static inline int inky_err_reason(unsigned long code) { return ERR_GET_REASON(code); }
static inline int inky_err_is_ssl(unsigned long code) { return ERR_GET_LIB(code) == ERR_LIB_SSL; }
static inline int inky_err_is_x509(unsigned long code) { return ERR_GET_LIB(code) == ERR_LIB_X509; }
#endif
