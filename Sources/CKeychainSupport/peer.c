#define _GNU_SOURCE
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "CKeychainSupport.h"

int kc_pidfd_is_alive(int pidfd) {
    return syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0;
}

int kc_peer_credentials(int socket, int32_t *pid, uint32_t *uid) {
    struct ucred credentials;
    socklen_t length = sizeof(credentials);
    if (getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -1;
    *pid = credentials.pid;
    *uid = credentials.uid;
    return 0;
}
