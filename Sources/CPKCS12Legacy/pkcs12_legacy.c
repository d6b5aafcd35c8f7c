#include "CPKCS12Legacy.h"

#include <limits.h>
#include <pthread.h>
#include <openssl/crypto.h>
#include <openssl/objects.h>
#include <openssl/pkcs12.h>
#include <openssl/provider.h>
#include <openssl/x509.h>

static OSSL_LIB_CTX *legacy_context;
static pthread_once_t legacy_once = PTHREAD_ONCE_INIT;

/// A library context with the legacy provider (RC2, DES) and the default one (SHA-1, the KDF),
/// so that the process's default context is left as it is.
static void load_legacy_context(void) {
    OSSL_LIB_CTX *context = OSSL_LIB_CTX_new();
    if (context == NULL) return;
    if (OSSL_PROVIDER_load(context, "legacy") == NULL || OSSL_PROVIDER_load(context, "default") == NULL) {
        OSSL_LIB_CTX_free(context);
        return;
    }
    legacy_context = context;
}

/// RFC 7292's own schemes: pkcs-12PbeIds, 1.2.840.113549.1.12.1.1 to .6.
static int is_pkcs12_pbe(const X509_ALGOR *algorithm) {
    const ASN1_OBJECT *object = NULL;
    X509_ALGOR_get0(&object, NULL, NULL, algorithm);
    switch (OBJ_obj2nid(object)) {
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
    X509_ALGOR *parsed = d2i_X509_ALGOR(NULL, &cursor, (long)algorithm_length);
    if (parsed == NULL || cursor != algorithm + algorithm_length || !is_pkcs12_pbe(parsed)) {
        X509_ALGOR_free(parsed);
        return -1;
    }
    unsigned char *output = NULL;
    int output_length = 0;
    unsigned char *result = PKCS12_pbe_crypt_ex(parsed, passphrase, (int)passphrase_length, ciphertext, (int)ciphertext_length,
                                                &output, &output_length, 0, legacy_context, NULL);
    X509_ALGOR_free(parsed);
    if (result == NULL || output_length < 0) {
        OPENSSL_free(output);
        return -2;
    }
    *plaintext = output;
    *plaintext_length = (size_t)output_length;
    return 0;
}

void kc_pkcs12_legacy_free(unsigned char *plaintext, size_t length) {
    if (plaintext == NULL) return;
    OPENSSL_cleanse(plaintext, length);
    OPENSSL_free(plaintext);
}
