#ifndef C_KEYCHAIN_TPM_H
#define C_KEYCHAIN_TPM_H

#include <stddef.h>
#include <stdint.h>

/// A connection to a TPM 2.0 through tpm2-tss's ESAPI, which is loaded when the first one
/// opens (libtss2-esys, -tctildr, -mu and -rc, as Debian's libtss2-dev names them): a keychain
/// without a TPM never loads it. One connection is used by one thread at a time.
typedef struct kc_tpm kc_tpm;

/// The most bytes kc_tpm_seal seals, and the most a sealed blob takes.
#define KC_TPM_MAXIMUM_SECRET 64
#define KC_TPM_MAXIMUM_BLOB 1024
/// Room for an error message.
#define KC_TPM_MESSAGE 256

/// Opens the TPM that `tcti` names, as tpm2-tss's TCTI loader reads it ("device:/dev/tpmrm0",
/// "swtpm:host=127.0.0.1,port=2321"). NULL on failure, with why in `message`.
kc_tpm *kc_tpm_open(const char *tcti, char *message);
void kc_tpm_close(kc_tpm *tpm);

/// Seals `secret` to this TPM: a keyed-hash object under the owner hierarchy's storage key
/// (ECC P-256, made again from the hierarchy's seed each time, so nothing is kept in the TPM),
/// fixed to this TPM, with an empty authorization and no dictionary-attack counting. Writes the
/// object's public and private parts, marshalled, to `blob`. 0 on success.
int kc_tpm_seal(kc_tpm *tpm, const uint8_t *secret, size_t length, uint8_t *blob, size_t *blob_length,
    char *message);
/// Unseals a blob kc_tpm_seal wrote into `secret` (KC_TPM_MAXIMUM_SECRET bytes). Fails on any
/// other TPM, and on this one after its owner hierarchy was cleared. 0 on success.
int kc_tpm_unseal(kc_tpm *tpm, const uint8_t *blob, size_t blob_length, uint8_t *secret, size_t *length,
    char *message);

/// Defines a monotonic counter at NV index `index` in the owner hierarchy, whose reads and
/// increments need `auth`, and increments it once (a counter reads only once incremented).
/// Returns 0, or 1 when the index is already defined.
int kc_tpm_define_counter(kc_tpm *tpm, uint32_t index, const uint8_t *auth, size_t auth_length, char *message);
/// Reads the counter at `index`, authorized by `auth`. 0 on success.
int kc_tpm_read_counter(kc_tpm *tpm, uint32_t index, const uint8_t *auth, size_t auth_length, uint64_t *value,
    char *message);
/// Increments the counter at `index`, authorized by `auth`. 0 on success.
int kc_tpm_increment_counter(kc_tpm *tpm, uint32_t index, const uint8_t *auth, size_t auth_length, char *message);
/// Removes the NV index `index` (owner authorization, which Linux leaves empty). 0 on success.
int kc_tpm_undefine(kc_tpm *tpm, uint32_t index, char *message);

#endif
