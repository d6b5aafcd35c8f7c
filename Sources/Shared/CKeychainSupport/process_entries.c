#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include "CKeychainSupport.h"

// The most of a process's environment block copied (its variables and their values).
#define ENVIRONMENT_LIMIT (1u << 20)

static int inspector = -1;
static pthread_mutex_t inspector_lock = PTHREAD_MUTEX_INITIALIZER;

// One inspection asked over the inspector's channel, and its answer (with the descriptor
// attached when `error` is 0).
struct inspection {
    int32_t pid;
    int32_t entry;
};
struct inspection_answer {
    int32_t error;
};

// Reads what `descriptor` holds into `text` (at most `size` - 1 bytes), ended by a zero byte.
static ssize_t read_text(int descriptor, char *text, size_t size) {
    size_t used = 0;
    while (used + 1 < size) {
        ssize_t count = read(descriptor, text + used, size - 1 - used);
        if (count < 0 && errno == EINTR) continue;
        if (count < 0) return -1;
        if (count == 0) break;
        used += (size_t)count;
    }
    text[used] = '\0';
    return (ssize_t)used;
}

// 0 when the process `directory` (its /proc/PID) is `owner`'s: its real or effective uid (the
// "Uid:" line of its status); -1 with errno EPERM when it is another user's.
static int owned_by(int directory, long long owner) {
    int descriptor = openat(directory, "status", O_RDONLY | O_CLOEXEC);
    if (descriptor < 0) return -1;
    char text[4096];
    ssize_t length = read_text(descriptor, text, sizeof text);
    close(descriptor);
    if (length < 0) return -1;
    const char *line = strstr(text, "\nUid:");
    if (line == NULL) {
        errno = EINVAL;
        return -1;
    }
    char *end = NULL;
    errno = 0;
    unsigned long real = strtoul(line + 5, &end, 10);
    unsigned long effective = strtoul(end, NULL, 10);
    if (errno != 0) return -1;
    if ((long long)real == owner || (long long)effective == owner) return 0;
    errno = EPERM;
    return -1;
}

// The environment block process `pid` (/proc/PID at `directory`) started with: its `environ`
// file, or, where that is its owner's alone, a copy of that stretch of its memory (fields 50
// and 51 of its stat, `process_vm_readv`) in a sealed memfd. The copy is wiped.
static int environment(int pid, int directory) {
    int file = openat(directory, "environ", O_RDONLY | O_CLOEXEC);
    if (file >= 0 || (errno != EACCES && errno != EPERM)) return file;
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pidfd < 0) return -1;
    int stat = openat(directory, "stat", O_RDONLY | O_CLOEXEC);
    char text[4096];
    ssize_t length = stat < 0 ? -1 : read_text(stat, text, sizeof text);
    if (stat >= 0) close(stat);
    // The stat read through `directory` shows the process is alive, so `pidfd` is that process.
    char *fields = length < 0 ? NULL : strrchr(text, ')');
    unsigned long long start = 0, stop = 0;
    int found = 0;
    // Field N of proc(5) follows the (N - 2)th space after the command's closing parenthesis.
    char *cursor = fields == NULL ? NULL : strchr(fields, ' ');
    for (int field = 3; cursor != NULL && field <= 51; field++, cursor = strchr(cursor + 1, ' ')) {
        if (field == 50) start = strtoull(cursor + 1, NULL, 10);
        if (field == 51) {
            stop = strtoull(cursor + 1, NULL, 10);
            found = 1;
        }
    }
    if (!found || stop < start || stop - start > ENVIRONMENT_LIMIT) {
        close(pidfd);
        errno = fields == NULL ? errno : EINVAL;
        return -1;
    }
    size_t size = (size_t)(stop - start);
    unsigned char *block = malloc(size == 0 ? 1 : size);
    int copy = block == NULL ? -1 : memfd_create("environment", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    int failed = copy < 0;
    if (!failed && size > 0) {
        struct iovec local = { .iov_base = block, .iov_len = size };
        struct iovec remote = { .iov_base = (void *)(uintptr_t)start, .iov_len = size };
        failed = process_vm_readv(pid, &local, 1, &remote, 1, 0) != (ssize_t)size;
        // Still the process the stat was read from: its pid was not taken by another meanwhile.
        if (!failed && !kc_pidfd_is_alive(pidfd)) {
            errno = ESRCH;
            failed = 1;
        }
        for (size_t written = 0; !failed && written < size;) {
            ssize_t count = write(copy, block + written, size - written);
            if (count < 0 && errno == EINTR) continue;
            if (count <= 0) failed = 1;
            else written += (size_t)count;
        }
    }
    int saved = errno;
    if (block != NULL) {
        explicit_bzero(block, size);
        free(block);
    }
    close(pidfd);
    if (!failed && (lseek(copy, 0, SEEK_SET) != 0
            || fcntl(copy, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) != 0)) {
        saved = errno;
        failed = 1;
    }
    if (failed) {
        if (copy >= 0) close(copy);
        errno = saved == 0 ? EIO : saved;
        return -1;
    }
    return copy;
}

// `/.flatpak-info` in the root of the process at `directory`, when it is a regular file.
static int flatpak_info(int directory) {
    int root = openat(directory, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root < 0) return -1;
    int file = openat(root, ".flatpak-info", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    int saved = errno;
    close(root);
    struct stat info;
    if (file >= 0 && (fstat(file, &info) != 0 || !S_ISREG(info.st_mode))) {
        close(file);
        saved = EINVAL;
        file = -1;
    }
    errno = saved;
    return file;
}

int kc_process_open_directly(int pid, int entry, long long owner) {
    if (pid <= 0 || entry < KC_PROCESS_EXECUTABLE || entry > KC_PROCESS_FLATPAK_INFO) {
        errno = EINVAL;
        return -1;
    }
    char path[32];
    snprintf(path, sizeof path, "/proc/%d", pid);
    // Every entry is opened through this directory, which stays the one process's: once it
    // ends, its pid taken by another, the directory answers nothing.
    int directory = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (directory < 0) return -1;
    int opened = -1;
    if (owner < 0 || owned_by(directory, owner) == 0) {
        switch (entry) {
        case KC_PROCESS_EXECUTABLE: opened = openat(directory, "exe", O_PATH | O_CLOEXEC); break;
        case KC_PROCESS_MEMORY_MAP: opened = openat(directory, "maps", O_RDONLY | O_CLOEXEC); break;
        case KC_PROCESS_ROOT: opened = openat(directory, "root", O_PATH | O_DIRECTORY | O_CLOEXEC); break;
        case KC_PROCESS_USER_NAMESPACE: opened = openat(directory, "ns/user", O_RDONLY | O_CLOEXEC); break;
        case KC_PROCESS_ENVIRONMENT: opened = environment(pid, directory); break;
        case KC_PROCESS_EXECUTABLE_CONTENTS: opened = openat(directory, "exe", O_RDONLY | O_CLOEXEC); break;
        default: opened = flatpak_info(directory); break;
        }
    }
    int saved = errno;
    close(directory);
    errno = saved;
    return opened;
}

void kc_process_use_inspector(int channel) { inspector = channel; }

// The inspector is gone, or answered what no inspector answers: a worker that cannot know its
// clients serves none (its front starts another).
static void inspector_lost(const char *what) {
    fprintf(stderr, "keychaind: error: the process inspector %s: %s\n", what, strerror(errno));
    _exit(70);
}

int kc_process_open(int pid, int entry) {
    if (inspector < 0) return kc_process_open_directly(pid, entry, -1);
    struct inspection asked = { .pid = pid, .entry = entry };
    struct inspection_answer answer = { .error = 0 };
    char control[CMSG_SPACE(sizeof(int))];
    struct iovec part = { .iov_base = &answer, .iov_len = sizeof answer };
    struct msghdr message = {
        .msg_iov = &part, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control
    };
    pthread_mutex_lock(&inspector_lock);
    ssize_t sent;
    do sent = send(inspector, &asked, sizeof asked, MSG_NOSIGNAL);
    while (sent < 0 && errno == EINTR);
    if (sent != (ssize_t)sizeof asked) inspector_lost("takes no question");
    ssize_t received;
    do received = recvmsg(inspector, &message, MSG_CMSG_CLOEXEC);
    while (received < 0 && errno == EINTR);
    pthread_mutex_unlock(&inspector_lock);
    if (received != (ssize_t)sizeof answer || (message.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0) {
        if (received == 0) errno = EPIPE;
        inspector_lost("does not answer");
    }
    int descriptor = -1;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header != NULL; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_RIGHTS
            && header->cmsg_len == CMSG_LEN(sizeof(int)))
            memcpy(&descriptor, CMSG_DATA(header), sizeof descriptor);
    }
    if (answer.error != 0) {
        if (descriptor >= 0) close(descriptor);
        errno = answer.error;
        return -1;
    }
    if (descriptor < 0) {
        errno = EPROTO;
        inspector_lost("answered without a descriptor");
    }
    return descriptor;
}

void kc_process_serve_inspections(int channel, long long owner) {
    for (;;) {
        unsigned char buffer[sizeof(struct inspection) + 1];
        ssize_t received = recv(channel, buffer, sizeof buffer, 0);
        if (received < 0 && errno == EINTR) continue;
        if (received <= 0) return;
        struct inspection asked;
        struct inspection_answer answer = { .error = 0 };
        int descriptor = -1;
        if (received != (ssize_t)sizeof asked) {
            answer.error = EINVAL;
        } else {
            memcpy(&asked, buffer, sizeof asked);
            descriptor = kc_process_open_directly(asked.pid, asked.entry, owner);
            if (descriptor < 0) answer.error = errno == 0 ? EIO : errno;
        }
        char control[CMSG_SPACE(sizeof(int))];
        memset(control, 0, sizeof control);
        struct iovec part = { .iov_base = &answer, .iov_len = sizeof answer };
        struct msghdr message = { .msg_iov = &part, .msg_iovlen = 1 };
        if (descriptor >= 0) {
            message.msg_control = control;
            message.msg_controllen = sizeof control;
            struct cmsghdr *header = CMSG_FIRSTHDR(&message);
            header->cmsg_level = SOL_SOCKET;
            header->cmsg_type = SCM_RIGHTS;
            header->cmsg_len = CMSG_LEN(sizeof(int));
            memcpy(CMSG_DATA(header), &descriptor, sizeof descriptor);
        }
        ssize_t sent;
        do sent = sendmsg(channel, &message, MSG_NOSIGNAL);
        while (sent < 0 && errno == EINTR);
        if (descriptor >= 0) close(descriptor);
        if (sent < 0) return;
    }
}
