/*
 * pam_keychain: logging in unlocks the user's swift-keychain (Docs/PAM.md).
 *
 * auth      keeps the password PAM collected (PAM_AUTHTOK) for the session phase, with
 *           pam_set_data; it is wiped when PAM ends or the session phase has used it. A login
 *           without a password (a key, a fingerprint, autologin) keeps nothing. Never
 *           authenticates anyone: it answers PAM_IGNORE.
 * session   open: runs `keychainctl pam open-session` as the user, with the kept password on
 *           its standard input; keychaind unlocks when it is the passcode. close: runs
 *           `keychainctl pam close-session`, which locks the keychain when the user's last
 *           login ends (unless keep_unlocked).
 * password  after the password changed, runs `keychainctl pam change-passcode` with the old
 *           and the new password, which changes the keychain's passcode only where it was the
 *           old password.
 *
 * The module links no Swift: keychainctl does the talking, in a process of its own that runs
 * as the user, with an empty signal mask, default signal dispositions, only its three standard
 * descriptors and a fixed environment. Nothing the keychain does can fail a login: every
 * outcome is written to the system log, and the module answers PAM_SUCCESS (session) or
 * PAM_IGNORE (auth, password).
 *
 * Options: auto_start (start the per-user keychaind when it does not run), only_if=SERVICE,...
 * (act only for these PAM services), fingerprint (at a login without a password, ask keychaind
 * to verify a finger itself), keep_unlocked (do not lock when the last login ends),
 * keychainctl=PATH (default KEYCHAINCTL_PATH), system_socket=PATH (a system keychaind that
 * listens elsewhere than /run/keychain/socket), debug.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#define PAM_SM_AUTH
#define PAM_SM_SESSION
#define PAM_SM_PASSWORD
#include <security/pam_ext.h>
#include <security/pam_modules.h>

#ifndef KEYCHAINCTL_PATH
#define KEYCHAINCTL_PATH "/usr/local/bin/keychainctl"
#endif

#define EXPORTED __attribute__((visibility("default")))

/* The name the auth phase keeps the password under for the session phase. */
static const char kept_password[] = "pam_keychain_login_password";

/* How long keychainctl may take: a passcode check is about 0.1 s, starting keychaind less
 * than a second; a fingerprint waits up to 30 s for the touch. */
enum { helper_seconds = 20, fingerprint_seconds = 40 };

struct options {
    int auto_start;
    int fingerprint;
    int keep_unlocked;
    int debug;
    int service_allowed;
    const char *keychainctl;
    const char *system_socket;
};

static int service_listed(const char *service, const char *list) {
    size_t length = strlen(service);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == length && strncmp(p, service, n) == 0) return 1;
        if (!end) break;
        p = end + 1;
    }
    return 0;
}

static void parse_options(pam_handle_t *pamh, int argc, const char **argv, struct options *o) {
    const void *service = NULL;
    memset(o, 0, sizeof *o);
    o->service_allowed = 1;
    o->keychainctl = KEYCHAINCTL_PATH;
    (void)pam_get_item(pamh, PAM_SERVICE, &service);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "auto_start") == 0) o->auto_start = 1;
        else if (strcmp(a, "fingerprint") == 0) o->fingerprint = 1;
        else if (strcmp(a, "keep_unlocked") == 0) o->keep_unlocked = 1;
        else if (strcmp(a, "debug") == 0) o->debug = 1;
        else if (strncmp(a, "only_if=", 8) == 0)
            o->service_allowed = service != NULL && service_listed((const char *)service, a + 8);
        else if (strncmp(a, "keychainctl=", 12) == 0 && a[12] == '/') o->keychainctl = a + 12;
        else if (strncmp(a, "system_socket=", 14) == 0 && a[14] == '/') o->system_socket = a + 14;
        else pam_syslog(pamh, LOG_WARNING, "unknown option: %s", a);
    }
}

static void wipe_and_free(pam_handle_t *pamh, void *data, int error_status) {
    (void)pamh;
    (void)error_status;
    if (data) {
        explicit_bzero(data, strlen(data));
        free(data);
    }
}

/* This process's start time, field 22 of /proc/self/stat: with the pid, it names this process
 * and no later one with the same pid. 0 when it cannot be read. */
static unsigned long long start_time(void) {
    char buffer[1024];
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buffer, sizeof buffer - 1);
    close(fd);
    if (n <= 0) return 0;
    buffer[n] = 0;
    char *p = strrchr(buffer, ')');
    if (!p) return 0;
    /* After ") " come field 3 (state) onwards: field 22 is the 20th from there. */
    p += 2;
    for (int field = 3; field < 22 && p; field++) {
        p = strchr(p, ' ');
        if (p) p++;
    }
    return p ? strtoull(p, NULL, 10) : 0;
}

/* keychainctl must be a file that only root can change, and so must every directory on its way,
 * since it receives the password: a directory another user can write (but a sticky one of
 * root's, as /tmp) would let them put their own program there. Writes the resolved path, which is
 * what runs, into `resolved` (PATH_MAX bytes). */
static int helper_is_trusted(pam_handle_t *pamh, const char *path, char *resolved) {
    if (!realpath(path, resolved)) {
        pam_syslog(pamh, LOG_ERR, "%s: %s; the keychain was left as it is", path, strerror(errno));
        return 0;
    }
    struct stat st;
    if (stat(resolved, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
        pam_syslog(pamh, LOG_ERR, "%s is not a file only root can change; the keychain was left as it is", resolved);
        return 0;
    }
    char directory[PATH_MAX];
    snprintf(directory, sizeof directory, "%s", resolved);
    for (char *slash = strrchr(directory, '/'); slash; slash = strrchr(directory, '/')) {
        slash[slash == directory ? 1 : 0] = 0;
        if (stat(directory, &st) != 0 || st.st_uid != 0
            || ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))) {
            pam_syslog(pamh, LOG_ERR, "%s can be changed by others than root; the keychain was left as it is",
                       directory);
            return 0;
        }
        if (slash == directory) break;
    }
    return 1;
}

/* The user's runtime directory: the one PAM's environment names (pam_systemd sets it), else
 * keychainctl finds it as every program of the user does. */
static const char *runtime_directory(pam_handle_t *pamh) {
    const char *dir = pam_getenv(pamh, "XDG_RUNTIME_DIR");
    return dir && dir[0] == '/' ? dir : NULL;
}

/* In the child: becomes the user, with a clean signal state, and runs keychainctl. Only calls
 * that are safe after fork in a threaded program: the groups were looked up before it. */
static void exec_helper(const struct passwd *pw, const gid_t *groups, int group_count, int input, int output,
                        char *const argv[], char *const envp[]) {
    sigset_t all;
    struct sigaction default_action;
    memset(&default_action, 0, sizeof default_action);
    default_action.sa_handler = SIG_DFL;
    for (int s = 1; s < NSIG; s++) (void)sigaction(s, &default_action, NULL);
    sigemptyset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    if (dup2(input, 0) < 0 || dup2(output, 1) < 0 || dup2(output, 2) < 0) _exit(126);
    closefrom(3);
    if (geteuid() == 0) {
        if (setgroups((size_t)group_count, groups) != 0 || setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0)
            _exit(126);
        if (pw->pw_uid != 0 && setuid(0) == 0) _exit(126);
    } else if (getuid() != pw->pw_uid || geteuid() != pw->pw_uid) {
        _exit(126);
    }
    if (chdir(pw->pw_dir) != 0 && chdir("/") != 0) _exit(126);
    execve(argv[0], argv, envp);
    _exit(127);
}

/* Writes each line keychainctl said to the system log, without its "keychainctl: " prefix. */
static void log_output(pam_handle_t *pamh, char *text) {
    char *rest = NULL;
    int told = 0;
    for (char *line = strtok_r(text, "\n", &rest); line; line = strtok_r(NULL, "\n", &rest)) {
        if (strncmp(line, "keychainctl: ", 13) == 0) line += 13;
        pam_syslog(pamh, LOG_NOTICE, "%s", line);
        /* A line keychainctl means for the person logging in (why the keychain stays locked):
         * said through the login's conversation too, one at most. */
        if (!told && strncmp(line, "tell: ", 6) == 0) {
            pam_info(pamh, "%s", line + 6);
            told = 1;
        }
    }
}

/* Runs keychainctl as the user with `input` on its standard input, logs what it says, and
 * waits for it for at most `seconds`. Returns its exit status, or -1. */
static int run_helper(pam_handle_t *pamh, const struct options *o, const struct passwd *pw, const char *const args[],
                      const char *input, size_t input_length, int seconds) {
    char program[PATH_MAX];
    if (!helper_is_trusted(pamh, o->keychainctl, program)) return -1;
    char *argv[16];
    int argc = 0;
    argv[argc++] = program;
    if (o->system_socket) {
        argv[argc++] = "--system-socket";
        argv[argc++] = (char *)o->system_socket;
    }
    for (int i = 0; args[i] && argc < 15; i++) argv[argc++] = (char *)args[i];
    argv[argc] = NULL;

    char home[4096], user[512], logname[512], runtime[4096];
    snprintf(home, sizeof home, "HOME=%s", pw->pw_dir);
    snprintf(user, sizeof user, "USER=%s", pw->pw_name);
    snprintf(logname, sizeof logname, "LOGNAME=%s", pw->pw_name);
    char *envp[6];
    int envc = 0;
    envp[envc++] = home;
    envp[envc++] = user;
    envp[envc++] = logname;
    envp[envc++] = "PATH=/usr/local/bin:/usr/bin:/bin";
    const char *runtime_dir = runtime_directory(pamh);
    if (runtime_dir) {
        snprintf(runtime, sizeof runtime, "XDG_RUNTIME_DIR=%s", runtime_dir);
        envp[envc++] = runtime;
    }
    envp[envc] = NULL;

    gid_t groups[256];
    int group_count = 256;
    if (getgrouplist(pw->pw_name, pw->pw_gid, groups, &group_count) < 0) {
        pam_syslog(pamh, LOG_ERR, "%s is in more than 256 groups; the keychain was left as it is", pw->pw_name);
        return -1;
    }

    int to_child[2], from_child[2];
    if (pipe2(to_child, O_CLOEXEC) != 0) return -1;
    if (pipe2(from_child, O_CLOEXEC) != 0) {
        close(to_child[0]);
        close(to_child[1]);
        return -1;
    }
    /* The application may reap children itself (sshd does): ours is waited for here. A write to
     * a keychainctl that exited must not end the application with SIGPIPE. */
    struct sigaction default_action, ignore_action, old_chld, old_pipe;
    memset(&default_action, 0, sizeof default_action);
    default_action.sa_handler = SIG_DFL;
    memset(&ignore_action, 0, sizeof ignore_action);
    ignore_action.sa_handler = SIG_IGN;
    sigaction(SIGCHLD, &default_action, &old_chld);
    sigaction(SIGPIPE, &ignore_action, &old_pipe);

    int status = -1;
    pid_t pid = fork();
    if (pid == 0) exec_helper(pw, groups, group_count, to_child[0], from_child[1], argv, envp);
    close(to_child[0]);
    close(from_child[1]);
    if (pid < 0) {
        pam_syslog(pamh, LOG_ERR, "cannot start keychainctl: %s", strerror(errno));
        close(to_child[1]);
        close(from_child[0]);
        goto restore;
    }
    for (size_t written = 0; written < input_length;) {
        ssize_t n = write(to_child[1], input + written, input_length - written);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        written += (size_t)n;
    }
    close(to_child[1]);

    char output[4096];
    size_t used = 0;
    struct timespec now, deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += seconds;
    int exited = 0, open_output = 1;
    while (!exited) {
        if (waitpid(pid, &status, WNOHANG) == pid) {
            exited = 1;
            break;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > deadline.tv_sec || (now.tv_sec == deadline.tv_sec && now.tv_nsec >= deadline.tv_nsec)) break;
        /* A keychaind that keychainctl started keeps none of these descriptors, but read in
         * short waits all the same: the child's exit ends the wait, not the pipe's. */
        struct pollfd p = {.fd = from_child[0], .events = POLLIN};
        if (open_output && poll(&p, 1, 50) > 0) {
            ssize_t n = read(from_child[0], output + used, sizeof output - 1 - used);
            if (n > 0) used += (size_t)n;
            else if (n == 0 || errno != EINTR) open_output = 0;
        } else if (!open_output) {
            usleep(50000);
        }
    }
    if (!exited) {
        pam_syslog(pamh, LOG_ERR, "keychainctl did not finish within %d seconds; it was stopped", seconds);
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        status = -1;
    } else {
        int flags = fcntl(from_child[0], F_GETFL);
        fcntl(from_child[0], F_SETFL, flags | O_NONBLOCK);
        ssize_t n;
        while (used < sizeof output - 1 && (n = read(from_child[0], output + used, sizeof output - 1 - used)) > 0)
            used += (size_t)n;
        status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    close(from_child[0]);
    output[used] = 0;
    log_output(pamh, output);
    if (o->debug) pam_syslog(pamh, LOG_DEBUG, "keychainctl %s exited %d", args[1], status);
restore:
    sigaction(SIGCHLD, &old_chld, NULL);
    sigaction(SIGPIPE, &old_pipe, NULL);
    return status;
}

static const struct passwd *login_user(pam_handle_t *pamh, struct passwd *entry, char *buffer, size_t size) {
    const char *name = NULL;
    struct passwd *found = NULL;
    if (pam_get_user(pamh, &name, NULL) != PAM_SUCCESS || name == NULL || name[0] == 0) return NULL;
    if (getpwnam_r(name, entry, buffer, size, &found) != 0 || found == NULL) {
        pam_syslog(pamh, LOG_ERR, "no such user: %s", name);
        return NULL;
    }
    return found;
}

/* One phase's view of the login: the module's options and the user who logs in. */
struct login {
    struct options options;
    struct passwd entry;
    char buffer[4096];
    const struct passwd *user;
};

/* Reads the options and the user: false when the module has nothing to do in this service or
 * for this user. */
static int acts_here(pam_handle_t *pamh, int argc, const char **argv, struct login *login) {
    parse_options(pamh, argc, argv, &login->options);
    if (!login->options.service_allowed) return 0;
    login->user = login_user(pamh, &login->entry, login->buffer, sizeof login->buffer);
    return login->user != NULL;
}

/* The login's name for keychaind: the pid and start time of this process, which opens the
 * session and closes it. */
static void login_process(char *name, size_t size) {
    snprintf(name, size, "%d:%llu", (int)getpid(), start_time());
}

/* One line for keychainctl: the password and a newline, or nothing for a password with a line
 * break in it (keychainctl reads one line). The caller wipes and frees it. */
static char *password_line(pam_handle_t *pamh, const char *password, size_t *length) {
    if (strchr(password, '\n')) {
        pam_syslog(pamh, LOG_NOTICE, "the password has a line break: it is not sent to the keychain");
        return NULL;
    }
    size_t n = strlen(password);
    char *line = malloc(n + 2);
    if (!line) return NULL;
    memcpy(line, password, n);
    line[n] = '\n';
    line[n + 1] = 0;
    *length = n + 1;
    return line;
}

EXPORTED int pam_sm_authenticate(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)flags;
    struct options o;
    parse_options(pamh, argc, argv, &o);
    if (!o.service_allowed) return PAM_IGNORE;
    const void *token = NULL;
    if (pam_get_item(pamh, PAM_AUTHTOK, &token) != PAM_SUCCESS || token == NULL || ((const char *)token)[0] == 0) {
        if (o.debug) pam_syslog(pamh, LOG_DEBUG, "no password in this login: nothing kept for the keychain");
        return PAM_IGNORE;
    }
    char *copy = strdup(token);
    if (!copy || pam_set_data(pamh, kept_password, copy, wipe_and_free) != PAM_SUCCESS) {
        wipe_and_free(pamh, copy, 0);
        pam_syslog(pamh, LOG_ERR, "cannot keep the password for the session");
    }
    return PAM_IGNORE;
}

EXPORTED int pam_sm_setcred(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)pamh, (void)flags, (void)argc, (void)argv;
    return PAM_IGNORE;
}

EXPORTED int pam_sm_open_session(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)flags;
    struct login login;
    if (!acts_here(pamh, argc, argv, &login)) return PAM_SUCCESS;
    const struct options o = login.options;
    const struct passwd *pw = login.user;

    const void *kept = NULL;
    char *line = NULL;
    size_t line_length = 0;
    if (pam_get_data(pamh, kept_password, &kept) == PAM_SUCCESS && kept != NULL)
        line = password_line(pamh, kept, &line_length);

    char process[64];
    login_process(process, sizeof process);
    const char *args[8];
    int n = 0;
    args[n++] = "pam";
    args[n++] = "open-session";
    args[n++] = "--login";
    args[n++] = process;
    if (o.auto_start) args[n++] = "--start-daemon";
    if (line) args[n++] = "--password-on-stdin";
    else if (o.fingerprint) args[n++] = "--fingerprint";
    args[n] = NULL;
    if (!line && o.fingerprint) pam_info(pamh, "Touch the fingerprint sensor to unlock your keychain.");
    int seconds = line || !o.fingerprint ? helper_seconds : fingerprint_seconds;
    run_helper(pamh, &o, pw, args, line ? line : "", line_length, seconds);
    if (line) wipe_and_free(pamh, line, 0);
    /* The password served its purpose: wiped now rather than when PAM ends. */
    (void)pam_set_data(pamh, kept_password, NULL, NULL);
    return PAM_SUCCESS;
}

EXPORTED int pam_sm_close_session(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)flags;
    struct login login;
    if (!acts_here(pamh, argc, argv, &login)) return PAM_SUCCESS;
    const struct options o = login.options;
    const struct passwd *pw = login.user;
    char process[64];
    login_process(process, sizeof process);
    const char *args[] = {"pam", "close-session", "--login", process, o.keep_unlocked ? "--keep-unlocked" : NULL, NULL};
    run_helper(pamh, &o, pw, args, "", 0, helper_seconds);
    return PAM_SUCCESS;
}

EXPORTED int pam_sm_chauthtok(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    if (!(flags & PAM_UPDATE_AUTHTOK)) return PAM_IGNORE;
    struct login login;
    if (!acts_here(pamh, argc, argv, &login)) return PAM_IGNORE;
    const struct options o = login.options;
    const struct passwd *pw = login.user;
    const void *old = NULL, *new = NULL;
    (void)pam_get_item(pamh, PAM_OLDAUTHTOK, &old);
    (void)pam_get_item(pamh, PAM_AUTHTOK, &new);
    if (new == NULL || ((const char *)new)[0] == 0) return PAM_IGNORE;
    if (old == NULL || ((const char *)old)[0] == 0) {
        pam_syslog(pamh, LOG_NOTICE,
                   "the password of %s was set without the old one (by root): "
                   "the keychain's passcode was left as it is",
                   pw->pw_name);
        return PAM_IGNORE;
    }
    size_t old_length = 0, new_length = 0;
    char *old_line = password_line(pamh, old, &old_length);
    char *new_line = password_line(pamh, new, &new_length);
    char *both = old_line && new_line ? malloc(old_length + new_length + 1) : NULL;
    if (both) {
        memcpy(both, old_line, old_length);
        memcpy(both + old_length, new_line, new_length);
        both[old_length + new_length] = 0;
        const char *args[] = {"pam", "change-passcode", o.auto_start ? "--start-daemon" : NULL, NULL};
        run_helper(pamh, &o, pw, args, both, old_length + new_length, helper_seconds);
        wipe_and_free(pamh, both, 0);
    }
    if (old_line) wipe_and_free(pamh, old_line, 0);
    if (new_line) wipe_and_free(pamh, new_line, 0);
    return PAM_IGNORE;
}
