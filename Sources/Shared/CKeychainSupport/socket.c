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

int kc_socketpair_seqpacket(int fds[2]) {
    return socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds);
}

int kc_send_descriptor(int channel, int descriptor) {
    char byte = 'c';
    struct iovec data = { .iov_base = &byte, .iov_len = 1 };
    union {
        char buffer[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof control);
    struct msghdr message = {
        .msg_iov = &data, .msg_iovlen = 1, .msg_control = control.buffer, .msg_controllen = sizeof control.buffer,
    };
    struct cmsghdr *header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(header), &descriptor, sizeof(int));
    ssize_t sent;
    do {
        sent = sendmsg(channel, &message, MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    return sent == 1 ? 0 : -1;
}

int kc_receive_descriptor(int channel) {
    char byte = 0;
    struct iovec data = { .iov_base = &byte, .iov_len = 1 };
    union {
        char buffer[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    struct msghdr message = {
        .msg_iov = &data, .msg_iovlen = 1, .msg_control = control.buffer, .msg_controllen = sizeof control.buffer,
    };
    ssize_t received;
    do {
        received = recvmsg(channel, &message, MSG_CMSG_CLOEXEC);
    } while (received < 0 && errno == EINTR);
    if (received == 0) return -2;
    if (received < 0) return -1;
    int descriptor = -1;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header != NULL; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_RIGHTS
            && header->cmsg_len == CMSG_LEN(sizeof(int))) {
            memcpy(&descriptor, CMSG_DATA(header), sizeof(int));
        }
    }
    if (descriptor < 0 || (message.msg_flags & MSG_CTRUNC)) {
        if (descriptor >= 0) close(descriptor);
        errno = EBADMSG;
        return -1;
    }
    return descriptor;
}
