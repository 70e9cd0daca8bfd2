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
#endif
