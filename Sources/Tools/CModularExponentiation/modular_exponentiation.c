#include "CModularExponentiation.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>
#include <openssl/bn.h>

/// libcrypto's functions this file calls, found at the first exponentiation. The library is
/// loaded then, not linked, as CPKCS12Legacy does: keychainctl starts for one lookup far more
/// often than it serves the Secret Service. Each pointer has the type of OpenSSL's own
/// declaration, so a mismatch does not compile.
static struct {
    __typeof__(BN_CTX_new) *context_new;
    __typeof__(BN_CTX_free) *context_free;
    __typeof__(BN_new) *new_number;
    __typeof__(BN_bin2bn) *from_bytes;
    __typeof__(BN_bn2binpad) *to_bytes;
    __typeof__(BN_mod_exp_mont_consttime) *mod_exp;
    __typeof__(BN_clear_free) *clear_free;
    __typeof__(BN_set_flags) *set_flags;
    __typeof__(BN_MONT_CTX_new) *montgomery_new;
    __typeof__(BN_MONT_CTX_set) *montgomery_set;
    __typeof__(BN_MONT_CTX_free) *montgomery_free;
} crypto;

static int crypto_loaded;
static pthread_once_t crypto_once = PTHREAD_ONCE_INIT;

/// Loads libcrypto (OpenSSL 3's soname) and finds every function, or leaves `crypto_loaded` 0.
static void load_crypto(void) {
    void *library = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) return;
#define FIND(field, symbol) \
    if ((*(void **)&crypto.field = dlsym(library, #symbol)) == NULL) return;
    FIND(context_new, BN_CTX_new)
    FIND(context_free, BN_CTX_free)
    FIND(new_number, BN_new)
    FIND(from_bytes, BN_bin2bn)
    FIND(to_bytes, BN_bn2binpad)
    FIND(mod_exp, BN_mod_exp_mont_consttime)
    FIND(clear_free, BN_clear_free)
    FIND(set_flags, BN_set_flags)
    FIND(montgomery_new, BN_MONT_CTX_new)
    FIND(montgomery_set, BN_MONT_CTX_set)
    FIND(montgomery_free, BN_MONT_CTX_free)
#undef FIND
    crypto_loaded = 1;
}

/// The Montgomery form of the first modulus used, kept for every later exponentiation with it:
/// every Secret Service session uses the same prime, and setting the form up again (an inverse
/// and a division) was a twelfth of each exponentiation. Read-only once set; another modulus gets
/// no kept form (OpenSSL makes one for the call).
static BN_MONT_CTX *montgomery;
static uint8_t montgomery_modulus[1 << 10];
static size_t montgomery_modulus_length;
static pthread_mutex_t montgomery_lock = PTHREAD_MUTEX_INITIALIZER;

/// The kept Montgomery form of `m` (the `modulus_length` bytes at `modulus`), made at the first
/// call; NULL for another modulus than the first, or when it cannot be made.
static BN_MONT_CTX *montgomery_form(
    const BIGNUM *m, const uint8_t *modulus, size_t modulus_length, BN_CTX *context) {
    if (modulus_length > sizeof(montgomery_modulus)) return NULL;
    pthread_mutex_lock(&montgomery_lock);
    if (montgomery == NULL) {
        BN_MONT_CTX *made = crypto.montgomery_new();
        if (made != NULL && crypto.montgomery_set(made, m, context) == 1) {
            montgomery = made;
            memcpy(montgomery_modulus, modulus, modulus_length);
            montgomery_modulus_length = modulus_length;
        } else if (made != NULL) {
            crypto.montgomery_free(made);
        }
    }
    BN_MONT_CTX *form = montgomery != NULL && montgomery_modulus_length == modulus_length
            && memcmp(montgomery_modulus, modulus, modulus_length) == 0
        ? montgomery
        : NULL;
    pthread_mutex_unlock(&montgomery_lock);
    return form;
}

int kc_modular_exponentiation(
    const uint8_t *base, size_t base_length, const uint8_t *exponent, size_t exponent_length,
    const uint8_t *modulus, size_t modulus_length, uint8_t *result) {
    pthread_once(&crypto_once, load_crypto);
    if (!crypto_loaded || base_length > 1 << 16 || exponent_length > 1 << 16 || modulus_length > 1 << 16) return 0;
    int done = 0;
    BN_CTX *context = crypto.context_new();
    BIGNUM *b = crypto.from_bytes(base, (int)base_length, NULL);
    BIGNUM *e = crypto.from_bytes(exponent, (int)exponent_length, NULL);
    BIGNUM *m = crypto.from_bytes(modulus, (int)modulus_length, NULL);
    BIGNUM *r = crypto.new_number();
    if (context != NULL && b != NULL && e != NULL && m != NULL && r != NULL) {
        crypto.set_flags(e, BN_FLG_CONSTTIME);
        BN_MONT_CTX *form = montgomery_form(m, modulus, modulus_length, context);
        done = crypto.mod_exp(r, b, e, m, context, form) == 1
            && crypto.to_bytes(r, result, (int)modulus_length) == (int)modulus_length;
    }
    if (r != NULL) crypto.clear_free(r);
    if (m != NULL) crypto.clear_free(m);
    if (e != NULL) crypto.clear_free(e);
    if (b != NULL) crypto.clear_free(b);
    if (context != NULL) crypto.context_free(context);
    return done;
}
