#define _GNU_SOURCE
#include "CKeychainSupport.h"
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <linux/keyctl.h>

int32_t kc_user_keyring_add(const char *description, const void *payload, size_t length) {
    return (int32_t)syscall(SYS_add_key, "user", description, payload, length, KEY_SPEC_USER_KEYRING);
}

int32_t kc_user_keyring_search(const char *description) {
    return (int32_t)syscall(SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, "user", description, 0);
}

long kc_keyring_read(int32_t serial, void *buffer, size_t length) {
    return syscall(SYS_keyctl, KEYCTL_READ, serial, buffer, length);
}

int kc_keyring_invalidate(int32_t serial) {
    return (int)syscall(SYS_keyctl, KEYCTL_INVALIDATE, serial);
}

int kc_keyring_restrict_to_owner(int32_t serial) {
    /* KEY_POS_ALL | KEY_USR_ALL */
    return (int)syscall(SYS_keyctl, KEYCTL_SETPERM, serial, 0x3f3f0000);
}

int kc_set_not_dumpable(void) {
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

int kc_set_dumpable(void) {
    return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

int kc_is_dumpable(void) {
    return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
}
