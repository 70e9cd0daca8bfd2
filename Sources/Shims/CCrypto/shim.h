#ifndef INKY_CCRYPTO_SHIM_H
#define INKY_CCRYPTO_SHIM_H
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/err.h>
#include <openssl/crypto.h>
#include <openssl/kdf.h>
#include <openssl/core_names.h>
#include <openssl/params.h>

/* Control codes are macros; Swift does not import them. */
static inline int inky_evp_ctrl_gcm_set_ivlen(void) { return EVP_CTRL_GCM_SET_IVLEN; }
static inline int inky_evp_ctrl_gcm_get_tag(void) { return EVP_CTRL_GCM_GET_TAG; }
static inline int inky_evp_ctrl_gcm_set_tag(void) { return EVP_CTRL_GCM_SET_TAG; }
static inline const char *inky_openssl_version(void) { return OpenSSL_version(OPENSSL_VERSION); }

/* HKDF is reached through EVP_KDF, which takes its inputs as an OSSL_PARAM array whose
   names are string macros. The array only borrows the name and data pointers until
   EVP_KDF_derive returns, so it is built here, on this frame, where every pointer stays
   valid for the whole call; Swift's String-to-char* bridging would dangle. The context
   itself is created and freed by the Swift caller, which owns it. HKDF-SHA256, extract
   then expand (RFC 5869); an empty salt means "HashLen zero bytes", as in the RFC. */
static inline int inky_hkdf_sha256_derive(EVP_KDF_CTX *ctx,
                                          const unsigned char *key, size_t key_len,
                                          const unsigned char *salt, size_t salt_len,
                                          const unsigned char *info, size_t info_len,
                                          unsigned char *out, size_t out_len) {
    static const unsigned char empty[1] = {0};
    OSSL_PARAM params[5];
    OSSL_PARAM *p = params;
    *p++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA256", 0);
    *p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)(key ? key : empty), key_len);
    if (salt_len > 0) {
        *p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)salt, salt_len);
    }
    *p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)(info ? info : empty), info_len);
    *p = OSSL_PARAM_construct_end();
    return EVP_KDF_derive(ctx, out, out_len, params);
}
#endif
