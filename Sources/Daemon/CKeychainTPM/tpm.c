#include "CKeychainTPM.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>

/// tpm2-tss's functions this file calls, found when the first TPM opens. Each pointer has the
/// type of the library's own declaration, so a mismatch does not compile.
static struct {
    __typeof__(Tss2_TctiLdr_Initialize) *tcti_initialize;
    __typeof__(Tss2_TctiLdr_Finalize) *tcti_finalize;
    __typeof__(Esys_Initialize) *initialize;
    __typeof__(Esys_Finalize) *finalize;
    __typeof__(Esys_Free) *free;
    __typeof__(Esys_CreatePrimary) *create_primary;
    __typeof__(Esys_Create) *create;
    __typeof__(Esys_Load) *load;
    __typeof__(Esys_Unseal) *unseal;
    __typeof__(Esys_FlushContext) *flush;
    __typeof__(Esys_NV_DefineSpace) *nv_define;
    __typeof__(Esys_NV_UndefineSpace) *nv_undefine;
    __typeof__(Esys_NV_Increment) *nv_increment;
    __typeof__(Esys_NV_Read) *nv_read;
    __typeof__(Esys_TR_FromTPMPublic) *from_public;
    __typeof__(Esys_TR_SetAuth) *set_auth;
    __typeof__(Esys_TR_Close) *close_handle;
    __typeof__(Tss2_MU_TPM2B_PUBLIC_Marshal) *public_marshal;
    __typeof__(Tss2_MU_TPM2B_PUBLIC_Unmarshal) *public_unmarshal;
    __typeof__(Tss2_MU_TPM2B_PRIVATE_Marshal) *private_marshal;
    __typeof__(Tss2_MU_TPM2B_PRIVATE_Unmarshal) *private_unmarshal;
    __typeof__(Tss2_RC_Decode) *decode;
} tss;

static int tss_loaded;
static char tss_missing[128];
static pthread_once_t tss_once = PTHREAD_ONCE_INIT;

static void *open_library(const char *name) {
    void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) snprintf(tss_missing, sizeof tss_missing, "%s cannot be loaded (install libtss2-dev)", name);
    return library;
}

static void load_tss(void) {
    void *tctildr = open_library("libtss2-tctildr.so.0");
    void *esys = tctildr ? open_library("libtss2-esys.so.0") : NULL;
    void *mu = esys ? open_library("libtss2-mu.so.0") : NULL;
    void *rc = mu ? open_library("libtss2-rc.so.0") : NULL;
    if (rc == NULL) return;
#define FIND(library, field, symbol) \
    if ((*(void **)&tss.field = dlsym(library, #symbol)) == NULL) { \
        snprintf(tss_missing, sizeof tss_missing, "tpm2-tss lacks %s", #symbol); \
        return; \
    }
    FIND(tctildr, tcti_initialize, Tss2_TctiLdr_Initialize)
    FIND(tctildr, tcti_finalize, Tss2_TctiLdr_Finalize)
    FIND(esys, initialize, Esys_Initialize)
    FIND(esys, finalize, Esys_Finalize)
    FIND(esys, free, Esys_Free)
    FIND(esys, create_primary, Esys_CreatePrimary)
    FIND(esys, create, Esys_Create)
    FIND(esys, load, Esys_Load)
    FIND(esys, unseal, Esys_Unseal)
    FIND(esys, flush, Esys_FlushContext)
    FIND(esys, nv_define, Esys_NV_DefineSpace)
    FIND(esys, nv_undefine, Esys_NV_UndefineSpace)
    FIND(esys, nv_increment, Esys_NV_Increment)
    FIND(esys, nv_read, Esys_NV_Read)
    FIND(esys, from_public, Esys_TR_FromTPMPublic)
    FIND(esys, set_auth, Esys_TR_SetAuth)
    FIND(esys, close_handle, Esys_TR_Close)
    FIND(mu, public_marshal, Tss2_MU_TPM2B_PUBLIC_Marshal)
    FIND(mu, public_unmarshal, Tss2_MU_TPM2B_PUBLIC_Unmarshal)
    FIND(mu, private_marshal, Tss2_MU_TPM2B_PRIVATE_Marshal)
    FIND(mu, private_unmarshal, Tss2_MU_TPM2B_PRIVATE_Unmarshal)
    FIND(rc, decode, Tss2_RC_Decode)
#undef FIND
    tss_loaded = 1;
}

struct kc_tpm {
    TSS2_TCTI_CONTEXT *tcti;
    ESYS_CONTEXT *esys;
};

/// Writes "`what`: tpm2-tss's text for `rc`" to `message` and returns `rc` (never 0).
static int failed(TSS2_RC rc, const char *what, char *message) {
    snprintf(message, KC_TPM_MESSAGE, "%s: %s", what, tss.decode(rc));
    return rc == 0 ? -1 : (int)rc;
}

kc_tpm *kc_tpm_open(const char *tcti, char *message) {
    pthread_once(&tss_once, load_tss);
    if (!tss_loaded) {
        snprintf(message, KC_TPM_MESSAGE, "%s", tss_missing);
        return NULL;
    }
    kc_tpm *tpm = calloc(1, sizeof *tpm);
    if (tpm == NULL) return NULL;
    TSS2_RC rc = tss.tcti_initialize(tcti, &tpm->tcti);
    if (rc == TSS2_RC_SUCCESS) rc = tss.initialize(&tpm->esys, tpm->tcti, NULL);
    if (rc != TSS2_RC_SUCCESS) {
        failed(rc, tcti, message);
        kc_tpm_close(tpm);
        return NULL;
    }
    return tpm;
}

void kc_tpm_close(kc_tpm *tpm) {
    if (tpm == NULL) return;
    if (tpm->esys != NULL) tss.finalize(&tpm->esys);
    if (tpm->tcti != NULL) tss.tcti_finalize(&tpm->tcti);
    free(tpm);
}

/// The owner hierarchy's storage key, made from its seed: the same key every time on this TPM
/// until the hierarchy is cleared.
static TSS2_RC primary(kc_tpm *tpm, ESYS_TR *handle) {
    TPM2B_SENSITIVE_CREATE sensitive = {0};
    TPM2B_PUBLIC template = {
        .publicArea = {
            .type = TPM2_ALG_ECC,
            .nameAlg = TPM2_ALG_SHA256,
            .objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN
                | TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT | TPMA_OBJECT_NODA,
            .parameters.eccDetail = {
                .symmetric = {.algorithm = TPM2_ALG_AES, .keyBits.aes = 128, .mode.aes = TPM2_ALG_CFB},
                .scheme = {.scheme = TPM2_ALG_NULL},
                .curveID = TPM2_ECC_NIST_P256,
                .kdf = {.scheme = TPM2_ALG_NULL},
            },
        },
    };
    TPM2B_DATA outside = {0};
    TPML_PCR_SELECTION pcrs = {0};
    return tss.create_primary(tpm->esys, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &sensitive,
        &template, &outside, &pcrs, handle, NULL, NULL, NULL, NULL);
}

int kc_tpm_seal(kc_tpm *tpm, const uint8_t *secret, size_t length, uint8_t *blob, size_t *blob_length,
    char *message) {
    if (length > KC_TPM_MAXIMUM_SECRET) return failed(0, "the secret is too long to seal", message);
    ESYS_TR parent = ESYS_TR_NONE;
    TSS2_RC rc = primary(tpm, &parent);
    if (rc != TSS2_RC_SUCCESS) return failed(rc, "making the storage key", message);
    TPM2B_SENSITIVE_CREATE sensitive = {.sensitive.data.size = (UINT16)length};
    memcpy(sensitive.sensitive.data.buffer, secret, length);
    TPM2B_PUBLIC template = {
        .publicArea = {
            .type = TPM2_ALG_KEYEDHASH,
            .nameAlg = TPM2_ALG_SHA256,
            .objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_USERWITHAUTH
                | TPMA_OBJECT_NODA,
            .parameters.keyedHashDetail.scheme.scheme = TPM2_ALG_NULL,
        },
    };
    TPM2B_DATA outside = {0};
    TPML_PCR_SELECTION pcrs = {0};
    TPM2B_PRIVATE *sealed = NULL;
    TPM2B_PUBLIC *public = NULL;
    rc = tss.create(tpm->esys, parent, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &sensitive, &template, &outside,
        &pcrs, &sealed, &public, NULL, NULL, NULL);
    explicit_bzero(&sensitive, sizeof sensitive);
    tss.flush(tpm->esys, parent);
    if (rc != TSS2_RC_SUCCESS) return failed(rc, "sealing", message);
    size_t offset = 0;
    rc = tss.public_marshal(public, blob, KC_TPM_MAXIMUM_BLOB, &offset);
    if (rc == TSS2_RC_SUCCESS) rc = tss.private_marshal(sealed, blob, KC_TPM_MAXIMUM_BLOB, &offset);
    tss.free(sealed);
    tss.free(public);
    if (rc != TSS2_RC_SUCCESS) return failed(rc, "writing the sealed object", message);
    *blob_length = offset;
    return 0;
}

int kc_tpm_unseal(kc_tpm *tpm, const uint8_t *blob, size_t blob_length, uint8_t *secret, size_t *length,
    char *message) {
    TPM2B_PUBLIC public = {0};
    TPM2B_PRIVATE sealed = {0};
    size_t offset = 0;
    TSS2_RC rc = tss.public_unmarshal(blob, blob_length, &offset, &public);
    if (rc == TSS2_RC_SUCCESS) rc = tss.private_unmarshal(blob, blob_length, &offset, &sealed);
    if (rc != TSS2_RC_SUCCESS || offset != blob_length) return failed(rc, "reading the sealed object", message);
    ESYS_TR parent = ESYS_TR_NONE;
    rc = primary(tpm, &parent);
    if (rc != TSS2_RC_SUCCESS) return failed(rc, "making the storage key", message);
    ESYS_TR object = ESYS_TR_NONE;
    rc = tss.load(tpm->esys, parent, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &sealed, &public, &object);
    tss.flush(tpm->esys, parent);
    if (rc != TSS2_RC_SUCCESS) return failed(rc, "loading the sealed object", message);
    TPM2B_SENSITIVE_DATA *data = NULL;
    rc = tss.unseal(tpm->esys, object, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &data);
    tss.flush(tpm->esys, object);
    if (rc != TSS2_RC_SUCCESS) return failed(rc, "unsealing", message);
    int result = 0;
    if (data->size > KC_TPM_MAXIMUM_SECRET) {
        result = failed(0, "the unsealed secret is too long", message);
    } else {
        memcpy(secret, data->buffer, data->size);
        *length = data->size;
    }
    explicit_bzero(data, sizeof *data);
    tss.free(data);
    return result;
}

/// The ESAPI handle of NV index `index`, its authorization set to `auth`.
static TSS2_RC nv_handle(kc_tpm *tpm, uint32_t index, const uint8_t *auth, size_t auth_length, ESYS_TR *handle) {
    if (auth_length > sizeof(((TPM2B_AUTH *)0)->buffer)) return TSS2_ESYS_RC_BAD_VALUE;
    TSS2_RC rc = tss.from_public(tpm->esys, index, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, handle);
    if (rc != TSS2_RC_SUCCESS || auth == NULL) return rc;
    TPM2B_AUTH value = {.size = (UINT16)auth_length};
    memcpy(value.buffer, auth, auth_length);
    rc = tss.set_auth(tpm->esys, *handle, &value);
    explicit_bzero(&value, sizeof value);
    return rc;
}

int kc_tpm_define_counter(kc_tpm *tpm, uint32_t index, const uint8_t *auth, size_t auth_length, char *message) {
    if (auth_length > sizeof(((TPM2B_AUTH *)0)->buffer)) return failed(0, "the counter's authorization is too long", message);
    TPM2B_AUTH value = {.size = (UINT16)auth_length};
    memcpy(value.buffer, auth, auth_length);
    TPM2B_NV_PUBLIC public = {
        .nvPublic = {
            .nvIndex = index,
            .nameAlg = TPM2_ALG_SHA256,
            .attributes = (TPM2_NT_COUNTER << TPMA_NV_TPM2_NT_SHIFT) | TPMA_NV_AUTHWRITE | TPMA_NV_AUTHREAD
                | TPMA_NV_NO_DA,
            .dataSize = 8,
        },
    };
    ESYS_TR handle = ESYS_TR_NONE;
    TSS2_RC rc = tss.nv_define(tpm->esys, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &value,
        &public, &handle);
    explicit_bzero(&value, sizeof value);
    // TPM_RC_NV_DEFINED, from the TPM or through a resource manager.
    if ((rc & 0xFFF) == TPM2_RC_NV_DEFINED) return 1;
    if (rc != TSS2_RC_SUCCESS) return failed(rc, "defining the counter", message);
    tss.close_handle(tpm->esys, &handle);
    return kc_tpm_increment_counter(tpm, index, auth, auth_length, message);
}

int kc_tpm_read_counter(kc_tpm *tpm, uint32_t index, const uint8_t *auth, size_t auth_length, uint64_t *value,
    char *message) {
    ESYS_TR handle = ESYS_TR_NONE;
    TSS2_RC rc = nv_handle(tpm, index, auth, auth_length, &handle);
    if (rc != TSS2_RC_SUCCESS) return failed(rc, "finding the counter", message);
    TPM2B_MAX_NV_BUFFER *data = NULL;
    rc = tss.nv_read(tpm->esys, handle, handle, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, 8, 0, &data);
    tss.close_handle(tpm->esys, &handle);
    if (rc != TSS2_RC_SUCCESS) return failed(rc, "reading the counter", message);
    int result = 0;
    if (data->size != 8) {
        result = failed(0, "the counter is not 8 bytes", message);
    } else {
        uint64_t read = 0;
        for (int i = 0; i < 8; i++) read = read << 8 | data->buffer[i];
        *value = read;
    }
    tss.free(data);
    return result;
}

int kc_tpm_increment_counter(kc_tpm *tpm, uint32_t index, const uint8_t *auth, size_t auth_length, char *message) {
    ESYS_TR handle = ESYS_TR_NONE;
    TSS2_RC rc = nv_handle(tpm, index, auth, auth_length, &handle);
    if (rc != TSS2_RC_SUCCESS) return failed(rc, "finding the counter", message);
    rc = tss.nv_increment(tpm->esys, handle, handle, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE);
    tss.close_handle(tpm->esys, &handle);
    return rc == TSS2_RC_SUCCESS ? 0 : failed(rc, "incrementing the counter", message);
}

int kc_tpm_undefine(kc_tpm *tpm, uint32_t index, char *message) {
    ESYS_TR handle = ESYS_TR_NONE;
    TSS2_RC rc = nv_handle(tpm, index, NULL, 0, &handle);
    if (rc != TSS2_RC_SUCCESS) return failed(rc, "finding the index", message);
    rc = tss.nv_undefine(tpm->esys, ESYS_TR_RH_OWNER, handle, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE);
    if (rc != TSS2_RC_SUCCESS) tss.close_handle(tpm->esys, &handle);
    return rc == TSS2_RC_SUCCESS ? 0 : failed(rc, "removing the index", message);
}
