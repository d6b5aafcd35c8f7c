#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "CKeychainSupport.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

int kc_listen_unix(const char *path, int backlog) {
    struct sockaddr_un address = { .sun_family = AF_UNIX };
    if (strlen(path) >= sizeof(address.sun_path)) { errno = ENAMETOOLONG; return -1; }
    strcpy(address.sun_path, path);
    int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listener < 0) return -1;
    unlink(path);
    if (bind(listener, (struct sockaddr *)&address, sizeof(address)) != 0 || listen(listener, backlog) != 0) {
        int saved = errno;
        close(listener);
        errno = saved;
        return -1;
    }
    return listener;
}

int kc_accept(int listener) {
    int connection;
    do { connection = accept4(listener, NULL, NULL, SOCK_CLOEXEC); } while (connection < 0 && errno == EINTR);
    return connection;
}

int kc_pass_credentials(int socket) {
    int on = 1;
    return setsockopt(socket, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on));
}

int kc_set_send_timeout(int socket, int seconds) {
    struct timeval timeout = { .tv_sec = seconds, .tv_usec = 0 };
    return setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
}

int kc_peer_pidfd(int socket) {
    int pidfd = -1;
    socklen_t length = sizeof(pidfd);
    if (getsockopt(socket, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &length) != 0) return -1;
    return pidfd;
}

long kc_peer_security_label(int socket, char *buffer, size_t length) {
    socklen_t size = (socklen_t)length;
    if (getsockopt(socket, SOL_SOCKET, SO_PEERSEC, buffer, &size) != 0) return -1;
    return (long)size;
}

long kc_pending_bytes(int socket) {
    int count = 0;
    if (ioctl(socket, FIONREAD, &count) != 0) return -1;
    return count;
}

long kc_receive_from_process(int socket, void *buffer, size_t length, int timeout_ms, int32_t *sender) {
    *sender = 0;
    struct pollfd entry = { .fd = socket, .events = POLLIN };
    int ready;
    do { ready = poll(&entry, 1, timeout_ms); } while (ready < 0 && errno == EINTR);
    if (ready < 0) return -1;
    if (ready == 0) return -2;
    union {
        char bytes[CMSG_SPACE(sizeof(struct ucred))];
        struct cmsghdr align;
    } control;
    struct iovec vector = { .iov_base = buffer, .iov_len = length };
    struct msghdr message = {
        .msg_iov = &vector, .msg_iovlen = 1, .msg_control = control.bytes, .msg_controllen = sizeof(control.bytes),
    };
    ssize_t count;
    do { count = recvmsg(socket, &message, MSG_CMSG_CLOEXEC | MSG_DONTWAIT); } while (count < 0 && errno == EINTR);
    if (count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return -2;
    if (count <= 0) return count;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header != NULL; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_CREDENTIALS && header->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
            struct ucred credentials;
            memcpy(&credentials, CMSG_DATA(header), sizeof(credentials));
            *sender = credentials.pid;
        }
    }
    return count;
}
