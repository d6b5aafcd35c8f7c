#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "CKeychainSupport.h"
#include "CKeychaindStartup.h"

static int confinement = -2;
static char confined_directory[PATH_MAX];
static int inspector_pid = -1;

int kc_worker_confinement(void) { return confinement; }

const char *kc_worker_directory(void) { return confined_directory; }

int kc_worker_inspector_pid(void) { return inspector_pid; }

static void fail(const char *what) {
    fprintf(stderr, "keychaind: error: a worker %s: %s\n", what, strerror(errno));
    _exit(1);
}

// The value after `name` among the arguments, or NULL.
static const char *argument(int argc, char **argv, const char *name) {
    for (int index = 1; index + 1 < argc; index++) {
        if (argv[index] != NULL && strcmp(argv[index], name) == 0) return argv[index + 1];
    }
    return NULL;
}

// 1 when the process runs one thread, the caller's.
static int single_threaded(void) {
    int descriptor = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (descriptor < 0) return 0;
    char text[4096];
    ssize_t length = read(descriptor, text, sizeof text - 1);
    close(descriptor);
    if (length <= 0) return 0;
    text[length] = '\0';
    return strstr(text, "\nThreads:\t1\n") != NULL;
}

// The inspector: the worker's child from before it confined itself, which keeps the worker's
// CAP_SYS_PTRACE and opens its clients' guarded /proc entries for it.
static void serve(int channel, long long owner) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) _exit(1);
    if (getppid() == 1) _exit(0);
    (void)prctl(PR_SET_NAME, "kc-inspector", 0, 0, 0);
    (void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    struct rlimit none = { 0, 0 };
    (void)setrlimit(RLIMIT_CORE, &none);
    // Standard input is the front's channel to the worker: not the inspector's to hold.
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null < 0 || dup2(null, 0) < 0) _exit(1);
    close(null);
    if (kc_deny_process_writes() != 0) {
        fprintf(stderr, "keychaind: error: the process inspector cannot deny itself ptrace: %s\n", strerror(errno));
        _exit(1);
    }
    kc_process_serve_inspections(channel, owner);
    _exit(0);
}

void kc_worker_startup(int argc, char **argv) {
    const char *user = argument(argc, argv, "--system-worker");
    const char *state = argument(argc, argv, "--state-directory");
    char *end = NULL;
    errno = 0;
    unsigned long uid = user == NULL ? 0 : strtoul(user, &end, 10);
    if (user == NULL || *user == '\0' || *end != '\0' || errno != 0 || uid > UINT_MAX - 1 || state == NULL) {
        errno = EINVAL;
        fail("is started by the front, with --system-worker UID --state-directory DIRECTORY");
    }
    if (snprintf(confined_directory, sizeof confined_directory, "%s/%lu", state, uid) >= (int)sizeof confined_directory) {
        errno = ENAMETOOLONG;
        fail("cannot name its directory");
    }
    // Landlock confines the calling thread and the threads and children it starts later.
    if (!single_threaded()) {
        errno = EBUSY;
        fail("must confine itself before its first thread");
    }
    int ends[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ends) != 0) fail("cannot make its inspector's channel");
    pid_t child = fork();
    if (child < 0) fail("cannot start its process inspector");
    if (child == 0) {
        close(ends[0]);
        serve(ends[1], (long long)uid);
    }
    close(ends[1]);
    inspector_pid = child;
    kc_process_use_inspector(ends[0]);
    // The inspector has the capability; the worker keeps none.
    struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
    struct __user_cap_data_struct nothing[2] = { 0 };
    if (syscall(SYS_capset, &header, nothing) != 0) fail("cannot drop its capabilities");
    confinement = kc_landlock_confine(confined_directory, state);
    if (confinement < 0) fail("cannot confine itself with Landlock");
    // No setenv here: with the Swift runtime linked statically, CommandLine.arguments is found
    // by walking back from `environ`, which setenv moves. The front sets SQLITE_TMPDIR.
}
