#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "CKeychainSupport.h"

int kc_pidfd_is_alive(int pidfd) {
    // A pidfd becomes readable when its process exits. Polling needs no permission over the
    // process (signal 0 would need the right to signal it: a system daemon has none over its
    // users' processes).
    struct pollfd entry = { .fd = pidfd, .events = POLLIN };
    int ready;
    do { ready = poll(&entry, 1, 0); } while (ready < 0 && errno == EINTR);
    return ready == 0;
}

int kc_peer_credentials(int socket, int32_t *pid, uint32_t *uid) {
    struct ucred credentials;
    socklen_t length = sizeof(credentials);
    if (getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -1;
    *pid = credentials.pid;
    *uid = credentials.uid;
    return 0;
}

int kc_pidfd_open(int pid) {
    return (int)syscall(SYS_pidfd_open, pid, 0);
}
