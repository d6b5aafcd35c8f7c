#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "CKeychainSupport.h"

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

// linux/openat2.h's struct open_how and its flags, spelled here so the build needs no kernel
// headers of a particular age.
struct kc_open_how {
    uint64_t flags;
    uint64_t mode;
    uint64_t resolve;
};
#define KC_RESOLVE_NO_MAGICLINKS 0x02
#define KC_RESOLVE_NO_SYMLINKS 0x04
#define KC_RESOLVE_BENEATH 0x08

int kc_open_unnamed(const char *directory) {
    return open(directory, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
}

int kc_openat_beneath(int directory, const char *name, int flags, unsigned int mode) {
    struct kc_open_how how = {
        .flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC),
        .mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0,
        .resolve = KC_RESOLVE_BENEATH | KC_RESOLVE_NO_SYMLINKS | KC_RESOLVE_NO_MAGICLINKS,
    };
    long fd = syscall(SYS_openat2, directory, name, &how, sizeof how);
    if (fd >= 0 || (errno != ENOSYS && errno != EPERM)) return (int)fd;
    // A kernel before 5.6 (or a seccomp filter that refuses openat2): one component only, never
    // through a link.
    if (strchr(name, '/') != NULL || strcmp(name, "..") == 0 || strcmp(name, ".") == 0) {
        errno = EXDEV;
        return -1;
    }
    return openat(directory, name, flags | O_NOFOLLOW | O_CLOEXEC, mode);
}
