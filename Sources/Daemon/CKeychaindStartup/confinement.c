#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "CKeychaindStartup.h"

int kc_limit_memory(unsigned long long bytes) {
    struct rlimit limit = { .rlim_cur = bytes, .rlim_max = bytes };
    return setrlimit(RLIMIT_DATA, &limit);
}

// linux/landlock.h, spelled here so the build needs no kernel headers of a particular age.
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_EXECUTE (1ULL << 0)
#define LL_WRITE_FILE (1ULL << 1)
#define LL_READ_FILE (1ULL << 2)
#define LL_READ_DIR (1ULL << 3)
#define LL_REMOVE_DIR (1ULL << 4)
#define LL_REMOVE_FILE (1ULL << 5)
#define LL_MAKE_CHAR (1ULL << 6)
#define LL_MAKE_DIR (1ULL << 7)
#define LL_MAKE_REG (1ULL << 8)
#define LL_MAKE_SOCK (1ULL << 9)
#define LL_MAKE_FIFO (1ULL << 10)
#define LL_MAKE_BLOCK (1ULL << 11)
#define LL_MAKE_SYM (1ULL << 12)
#define LL_REFER (1ULL << 13)
#define LL_TRUNCATE (1ULL << 14)

struct ll_ruleset_attr {
    uint64_t handled_access_fs;
};

struct __attribute__((packed)) ll_path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
};

#define LL_FILE_RIGHTS (LL_EXECUTE | LL_WRITE_FILE | LL_READ_FILE | LL_TRUNCATE)

static uint64_t handled;

static int allow(int ruleset, const char *path, uint64_t access) {
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT || errno == EACCES ? 0 : -1;
    struct stat info;
    if (fstat(fd, &info) != 0) {
        close(fd);
        return -1;
    }
    if (!S_ISDIR(info.st_mode)) access &= LL_FILE_RIGHTS;
    struct ll_path_beneath_attr rule = { .allowed_access = access & handled, .parent_fd = fd };
    long result = rule.allowed_access == 0 ? 0 : syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &rule, 0);
    close(fd);
    return result == 0 ? 0 : -1;
}

int kc_landlock_abi(void) {
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
    return abi < 0 ? 0 : (int)abi;
}

// True when `path` is `root` or beneath it.
static int within(const char *path, const char *root) {
    size_t length = strlen(root);
    if (length == 1 && root[0] == '/') return 1;
    return strncmp(path, root, length) == 0 && (path[length] == '\0' || path[length] == '/');
}

int kc_landlock_confine(const char *own_directory, const char *private_root) {
    if (own_directory == NULL || own_directory[0] != '/' || strlen(own_directory) >= 4096 || private_root == NULL
        || !within(own_directory, private_root)) {
        errno = EINVAL;
        return -1;
    }
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
    // No Landlock in this kernel, turned off, or refused by a seccomp filter (a service
    // manager's): nothing is confined, as ``kc_landlock_abi`` reports.
    if (abi < 0) return errno == ENOSYS || errno == EOPNOTSUPP || errno == EPERM ? 0 : -1;
    handled = LL_EXECUTE | LL_WRITE_FILE | LL_READ_FILE | LL_READ_DIR | LL_REMOVE_DIR | LL_REMOVE_FILE | LL_MAKE_CHAR
        | LL_MAKE_DIR | LL_MAKE_REG | LL_MAKE_SOCK | LL_MAKE_FIFO | LL_MAKE_BLOCK | LL_MAKE_SYM;
    if (abi >= 2) handled |= LL_REFER;
    if (abi >= 3) handled |= LL_TRUNCATE;
    struct ll_ruleset_attr attributes = { .handled_access_fs = handled };
    int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attributes, sizeof attributes, 0);
    if (ruleset < 0) return -1;
    int failed = allow(ruleset, "/", LL_READ_DIR) != 0;
    // Walk down to own_directory: at each ancestor, every other entry may be read, but beneath
    // the private root (a keychain's directory, or every user's), none.
    char ancestor[4096] = "/";
    const char *rest = own_directory + 1;
    while (!failed && *rest != '\0') {
        const char *slash = strchr(rest, '/');
        size_t length = slash ? (size_t)(slash - rest) : strlen(rest);
        char next[256];
        if (length == 0 || length >= sizeof next) {
            errno = EINVAL;
            failed = 1;
            break;
        }
        memcpy(next, rest, length);
        next[length] = '\0';
        if (!within(ancestor, private_root)) {
            DIR *directory = opendir(ancestor);
            if (directory == NULL) {
                failed = 1;
                break;
            }
            struct dirent *entry;
            while (!failed && (entry = readdir(directory)) != NULL) {
                if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
                if (strcmp(entry->d_name, next) == 0) continue;
                char path[4096];
                if (snprintf(path, sizeof path, "%s%s%s", ancestor, strcmp(ancestor, "/") == 0 ? "" : "/",
                        entry->d_name) >= (int)sizeof path)
                    continue;
                uint64_t access = LL_EXECUTE | LL_READ_FILE | LL_READ_DIR;
                if (strcmp(path, "/dev") == 0) access |= LL_WRITE_FILE;
                failed = allow(ruleset, path, access) != 0;
            }
            closedir(directory);
        }
        size_t used = strlen(ancestor);
        if (snprintf(ancestor + used, sizeof ancestor - used, "%s%s", strcmp(ancestor, "/") == 0 ? "" : "/", next)
            >= (int)(sizeof ancestor - used)) {
            errno = ENAMETOOLONG;
            failed = 1;
        }
        rest = slash ? slash + 1 : rest + length;
    }
    if (!failed) failed = allow(ruleset, own_directory, handled) != 0;
    if (!failed && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) failed = 1;
    if (!failed && syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) failed = 1;
    int saved = errno;
    close(ruleset);
    errno = saved;
    return failed ? -1 : (int)abi;
}

int kc_die_with_parent(void) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) return -1;
    if (getppid() == 1) {
        errno = ESRCH;
        return -1;
    }
    return 0;
}
