#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>
#include "CKeychainSupport.h"

int kc_pipe_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}

int kc_spawn_file_actions_closefrom(posix_spawn_file_actions_t *actions, int lowest) {
    return posix_spawn_file_actions_addclosefrom_np(actions, lowest);
}

int kc_spawnattr_reset_signals(posix_spawnattr_t *attributes, int new_session) {
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    int failed = posix_spawnattr_setsigmask(attributes, &none);
    if (failed == 0) failed = posix_spawnattr_setsigdefault(attributes, &all);
    short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | (new_session ? POSIX_SPAWN_SETSID : 0);
    if (failed == 0) failed = posix_spawnattr_setflags(attributes, flags);
    return failed;
}
