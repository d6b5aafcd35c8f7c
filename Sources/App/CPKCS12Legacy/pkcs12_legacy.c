#include "CPKCS12Legacy.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <openssl/crypto.h>
#include <openssl/objects.h>
#include <openssl/pkcs12.h>
#include <openssl/provider.h>
#include <openssl/x509.h>

/// libcrypto's functions this file calls, found when a legacy file is first decrypted. The
/// library is loaded then, not linked: loading and relocating it was a fifth of the start of
/// every program that links the Security module (a whole `keychainctl find-generic-password
/// -w` 4.4 → 3.3 ms), and almost none of them ever imports a legacy PKCS #12 file. Each
/// pointer has the type of OpenSSL's own declaration, so a mismatch does not compile.
static struct {
    __typeof__(OSSL_LIB_CTX_new) *lib_ctx_new;
    __typeof__(OSSL_LIB_CTX_free) *lib_ctx_free;
    __typeof__(OSSL_PROVIDER_load) *provider_load;
    __typeof__(d2i_X509_ALGOR) *d2i_algorithm;
    __typeof__(X509_ALGOR_get0) *algorithm_get0;
    __typeof__(X509_ALGOR_free) *algorithm_free;
    __typeof__(OBJ_obj2nid) *obj2nid;
    __typeof__(PKCS12_pbe_crypt_ex) *pbe_crypt_ex;
    __typeof__(CRYPTO_free) *crypto_free;
    __typeof__(OPENSSL_cleanse) *cleanse;
} crypto;

static OSSL_LIB_CTX *legacy_context;
static pthread_once_t legacy_once = PTHREAD_ONCE_INIT;

/// Loads libcrypto (OpenSSL 3's soname, as the linker would have recorded it) and finds every
/// function, or leaves everything unset.
static int load_crypto(void) {
    void *library = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) return 0;
#define FIND(field, symbol) \
    if ((*(void **)&crypto.field = dlsym(library, #symbol)) == NULL) return 0;
    FIND(lib_ctx_new, OSSL_LIB_CTX_new)
    FIND(lib_ctx_free, OSSL_LIB_CTX_free)
    FIND(provider_load, OSSL_PROVIDER_load)
    FIND(d2i_algorithm, d2i_X509_ALGOR)
    FIND(algorithm_get0, X509_ALGOR_get0)
    FIND(algorithm_free, X509_ALGOR_free)
    FIND(obj2nid, OBJ_obj2nid)
    FIND(pbe_crypt_ex, PKCS12_pbe_crypt_ex)
    FIND(crypto_free, CRYPTO_free)
    FIND(cleanse, OPENSSL_cleanse)
#undef FIND
    return 1;
}

/// A library context with the legacy provider (RC2, DES) and the default one (SHA-1, the KDF),
/// so that the process's default context is left as it is.
static void load_legacy_context(void) {
    if (!load_crypto()) return;
    OSSL_LIB_CTX *context = crypto.lib_ctx_new();
    if (context == NULL) return;
    if (crypto.provider_load(context, "legacy") == NULL || crypto.provider_load(context, "default") == NULL) {
        crypto.lib_ctx_free(context);
        return;
    }
    legacy_context = context;
}

/// RFC 7292's own schemes: pkcs-12PbeIds, 1.2.840.113549.1.12.1.1 to .6.
static int is_pkcs12_pbe(const X509_ALGOR *algorithm) {
    const ASN1_OBJECT *object = NULL;
    crypto.algorithm_get0(&object, NULL, NULL, algorithm);
    switch (crypto.obj2nid(object)) {
    case NID_pbe_WithSHA1And128BitRC4:
    case NID_pbe_WithSHA1And40BitRC4:
    case NID_pbe_WithSHA1And3_Key_TripleDES_CBC:
    case NID_pbe_WithSHA1And2_Key_TripleDES_CBC:
    case NID_pbe_WithSHA1And128BitRC2_CBC:
    case NID_pbe_WithSHA1And40BitRC2_CBC:
        return 1;
    default:
        return 0;
    }
}

int kc_pkcs12_legacy_decrypt(const unsigned char *algorithm, size_t algorithm_length,
                             const char *passphrase, size_t passphrase_length,
                             const unsigned char *ciphertext, size_t ciphertext_length,
                             unsigned char **plaintext, size_t *plaintext_length) {
    *plaintext = NULL;
    *plaintext_length = 0;
    if (algorithm_length > LONG_MAX || passphrase_length > INT_MAX || ciphertext_length > INT_MAX) return -1;
    pthread_once(&legacy_once, load_legacy_context);
    if (legacy_context == NULL) return -3;
    const unsigned char *cursor = algorithm;
    X509_ALGOR *parsed = crypto.d2i_algorithm(NULL, &cursor, (long)algorithm_length);
    if (parsed == NULL || cursor != algorithm + algorithm_length || !is_pkcs12_pbe(parsed)) {
        crypto.algorithm_free(parsed);
        return -1;
    }
    unsigned char *output = NULL;
    int output_length = 0;
    unsigned char *result = crypto.pbe_crypt_ex(parsed, passphrase, (int)passphrase_length, ciphertext, (int)ciphertext_length,
                                                &output, &output_length, 0, legacy_context, NULL);
    crypto.algorithm_free(parsed);
    if (result == NULL || output_length < 0) {
        crypto.crypto_free(output, OPENSSL_FILE, OPENSSL_LINE);
        return -2;
    }
    *plaintext = output;
    *plaintext_length = (size_t)output_length;
    return 0;
}

void kc_pkcs12_legacy_free(unsigned char *plaintext, size_t length) {
    if (plaintext == NULL) return;
    crypto.cleanse(plaintext, length);
    crypto.crypto_free(plaintext, OPENSSL_FILE, OPENSSL_LINE);
}
