#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "CKeychainSupport.h"

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010
#endif

/// The seals a change number's memory carries: it keeps its size (a reader's mapping never
/// faults), and nobody but its maker, who mapped it before, can write it.
static const int change_number_seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL;

int kc_change_number_create(uint64_t **number) {
    int descriptor = memfd_create("keychain-changes", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (descriptor < 0) return -1;
    void *mapping = MAP_FAILED;
    if (ftruncate(descriptor, sizeof(uint64_t)) == 0) {
        mapping = mmap(NULL, sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0);
    }
    if (mapping == MAP_FAILED || fcntl(descriptor, F_ADD_SEALS, change_number_seals) != 0) {
        int saved = errno;
        if (mapping != MAP_FAILED) munmap(mapping, sizeof(uint64_t));
        close(descriptor);
        errno = saved;
        return -1;
    }
    *number = mapping;
    return descriptor;
}

const uint64_t *kc_change_number_map(int descriptor) {
    struct stat status;
    int seals = fcntl(descriptor, F_GET_SEALS);
    if (seals < 0 || fstat(descriptor, &status) != 0) return NULL;
    if ((seals & change_number_seals) != change_number_seals || !S_ISREG(status.st_mode)
        || status.st_size != (off_t)sizeof(uint64_t)) {
        errno = EBADF;
        return NULL;
    }
    void *mapping = mmap(NULL, sizeof(uint64_t), PROT_READ, MAP_SHARED, descriptor, 0);
    return mapping == MAP_FAILED ? NULL : mapping;
}

void kc_change_number_unmap(const uint64_t *number) {
    munmap((void *)number, sizeof(uint64_t));
}

void kc_change_number_advance(uint64_t *number) {
    __atomic_add_fetch(number, 1, __ATOMIC_SEQ_CST);
}

uint64_t kc_change_number_read(const uint64_t *number) {
    return __atomic_load_n(number, __ATOMIC_SEQ_CST);
}
