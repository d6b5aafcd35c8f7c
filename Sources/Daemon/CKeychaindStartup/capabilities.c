#define _GNU_SOURCE
#include <errno.h>
#include <linux/capability.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "CKeychaindStartup.h"

/// Linux's CAP_SYS_PTRACE: reading another user's /proc/PID/exe.
#define READ_OTHER_PROCESSES 19

static int outcome = -2;

int kc_system_capabilities(void) { return outcome; }

// Keeps `capability` alone: permitted and effective (a worker, or the per-user daemon's
// `--system` of old); or, `for_workers` (the front), permitted, inheritable and ambient, never
// effective, so that a worker it starts has it and the front itself reads no process. Every
// other capability goes, and the bounding set shrinks where permitted.
static int keep(int capability, int for_workers) {
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
    struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
    struct __user_cap_data_struct data[2] = { 0 };
    if (syscall(SYS_capget, &header, data) != 0) return -1;
    int word = capability / 32;
    uint32_t bit = 1u << (capability % 32);
    int held = (data[word].permitted & bit) != 0;
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) return -1;
    for (int other = 0; other <= CAP_LAST_CAP; other++) {
        if (other != capability) (void)prctl(PR_CAPBSET_DROP, other, 0, 0, 0);
    }
    struct __user_cap_data_struct kept[2] = { 0 };
    if (held) {
        kept[word].permitted = bit;
        if (for_workers) {
            kept[word].inheritable = bit;
        } else {
            kept[word].effective = bit;
        }
    }
    if (syscall(SYS_capset, &header, kept) != 0) return -1;
    if (held && for_workers && prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, capability, 0, 0) != 0) return -1;
    return held;
}

int kc_deny_process_writes(void) {
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
    scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
    if (filter == NULL) return -1;
    // Every thread of the process, not only the caller (the Swift runtime's exist already).
    int result = seccomp_attr_set(filter, SCMP_FLTATR_CTL_TSYNC, 1);
    const int denied[] = { SCMP_SYS(ptrace), SCMP_SYS(process_vm_writev), SCMP_SYS(pidfd_getfd) };
    for (size_t index = 0; index < sizeof(denied) / sizeof(denied[0]) && result == 0; index++) {
        result = seccomp_rule_add(filter, SCMP_ACT_ERRNO(EPERM), denied[index], 0);
    }
    if (result == 0) result = seccomp_load(filter);
    seccomp_release(filter);
    if (result != 0) {
        errno = -result;
        return -1;
    }
    return 0;
}

// `keychaind --confined-exec OWN PRIVATE PROGRAM ARGUMENT…`: how keychaind runs git on what a
// sync remote sent. Before anything else, the process confines itself with Landlock to OWN
// (nothing readable beneath PRIVATE but OWN: ``kc_landlock_confine``) and becomes PROGRAM. On a
// kernel without Landlock it becomes PROGRAM unconfined; keychaind says so when it starts.
static void confined_exec(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "keychaind: error: --confined-exec OWN PRIVATE PROGRAM [ARGUMENT…]\n");
        _exit(127);
    }
    if (kc_landlock_confine(argv[2], argv[3]) < 0) {
        fprintf(stderr, "keychaind: error: cannot confine %s to %s: %s\n", argv[4], argv[2], strerror(errno));
        _exit(127);
    }
    execv(argv[4], argv + 4);
    fprintf(stderr, "keychaind: error: cannot run %s: %s\n", argv[4], strerror(errno));
    _exit(127);
}

/// glibc calls constructors with the program's arguments, on the main thread, before `main`.
__attribute__((constructor)) static void keychaind_system_startup(int argc, char **argv, char **envp) {
    (void)envp;
    if (argc > 1 && argv != NULL && argv[1] != NULL && strcmp(argv[1], "--confined-exec") == 0) confined_exec(argc, argv);
    for (int index = 1; index < argc && argv != NULL; index++) {
        int worker = argv[index] != NULL && strcmp(argv[index], "--system-worker") == 0;
        if (worker || (argv[index] != NULL && strcmp(argv[index], "--system") == 0)) {
            outcome = keep(READ_OTHER_PROCESSES, !worker);
            if (outcome < 0) {
                fprintf(stderr, "keychaind: error: cannot drop capabilities: %s\n", strerror(errno));
                _exit(1);
            }
            if (worker) kc_worker_startup(argc, argv);
            return;
        }
    }
}
