#ifndef C_PKCS12_LEGACY_H
#define C_PKCS12_LEGACY_H

#include <stddef.h>

/// Decrypts what a PKCS #12 file encrypted with one of its own legacy password-based schemes
/// (pbeWithSHAAnd3-KeyTripleDES-CBC, pbeWithSHAAnd40BitRC2-CBC and their kin, RFC 7292
/// appendix C), with OpenSSL's libcrypto and its legacy provider, in a library context of its
/// own: swift-crypto has neither cipher.
///
/// `algorithm` is the DER of the AlgorithmIdentifier, `passphrase` UTF-8.
/// Returns 0 with `*plaintext` allocated (free it with `kc_pkcs12_legacy_free`), -1 when the
/// algorithm is malformed or not one of these, -2 when the data does not decrypt (a wrong
/// passphrase, or damage), -3 when OpenSSL's libcrypto (`libcrypto.so.3`, loaded on the first
/// call) or its legacy provider cannot be loaded.
int kc_pkcs12_legacy_decrypt(const unsigned char *algorithm, size_t algorithm_length,
                             const char *passphrase, size_t passphrase_length,
                             const unsigned char *ciphertext, size_t ciphertext_length,
                             unsigned char **plaintext, size_t *plaintext_length);

/// Zeroes and frees a plaintext `kc_pkcs12_legacy_decrypt` gave.
void kc_pkcs12_legacy_free(unsigned char *plaintext, size_t length);

#endif
