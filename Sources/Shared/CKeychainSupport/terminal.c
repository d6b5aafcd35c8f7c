#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>
#include "CKeychainSupport.h"

// The terminals a program has put into a special mode, innermost last. Everything the signal
// handlers touch is written before the handlers can see it (depth is raised last) and only
// async-signal-safe calls (tcsetattr, write, sigaction, raise) are made from them.
enum { kc_guard_capacity = 4 };
struct kc_guard {
    int fd;
    struct termios saved;
    struct termios active;
    char enter[32];
    char leave[32];
};
static struct kc_guard kc_guards[kc_guard_capacity];
static volatile sig_atomic_t kc_guard_depth = 0;
static volatile sig_atomic_t kc_guard_redraw = 0;
static const int kc_guarded_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGCONT, SIGWINCH};
enum { kc_guarded_count = sizeof kc_guarded_signals / sizeof kc_guarded_signals[0] };
static struct sigaction kc_previous[kc_guarded_count];
static int kc_atexit_registered = 0;

static void kc_write_all(int fd, const char *text) {
    size_t length = strlen(text);
    while (length > 0) {
        ssize_t written = write(fd, text, length);
        if (written <= 0) {
            if (written < 0 && errno == EINTR) continue;
            return;
        }
        text += written;
        length -= (size_t)written;
    }
}

// Puts every guarded terminal back as it was, innermost first.
static void kc_restore_all(void) {
    for (int i = kc_guard_depth - 1; i >= 0; i--) {
        kc_write_all(kc_guards[i].fd, kc_guards[i].leave);
        tcsetattr(kc_guards[i].fd, TCSANOW, &kc_guards[i].saved);
    }
}

// Puts every guarded terminal back into the program's modes, outermost first.
static void kc_reapply_all(void) {
    for (int i = 0; i < kc_guard_depth; i++) {
        tcsetattr(kc_guards[i].fd, TCSANOW, &kc_guards[i].active);
        kc_write_all(kc_guards[i].fd, kc_guards[i].enter);
    }
    kc_guard_redraw = 1;
}

static void kc_on_signal(int signal_number);

static void kc_install(int signal_number) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = kc_on_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(signal_number, &action, NULL);
}

static void kc_on_signal(int signal_number) {
    int saved_errno = errno;
    switch (signal_number) {
    case SIGWINCH:
        kc_guard_redraw = 1;
        break;
    case SIGCONT:
        kc_install(SIGTSTP);
        kc_reapply_all();
        break;
    case SIGTSTP:
        // Leave the terminal usable for the shell, then stop as by default; SIGCONT puts the
        // modes back and asks for a redraw.
        kc_restore_all();
        signal(SIGTSTP, SIG_DFL);
        raise(SIGTSTP);
        break;
    default:
        // INT, TERM, HUP, QUIT: restore, then end the way the signal would have.
        kc_restore_all();
        kc_guard_depth = 0;
        signal(signal_number, SIG_DFL);
        raise(signal_number);
        break;
    }
    errno = saved_errno;
}

static void kc_restore_at_exit(void) {
    kc_restore_all();
    kc_guard_depth = 0;
}

int kc_terminal_guard_begin(int fd, const struct termios *active, const char *enter, const char *leave) {
    if (kc_guard_depth >= kc_guard_capacity) { errno = ENOSPC; return -1; }
    if (strlen(enter) >= sizeof kc_guards[0].enter || strlen(leave) >= sizeof kc_guards[0].leave) { errno = EINVAL; return -1; }
    struct kc_guard *guard = &kc_guards[kc_guard_depth];
    if (tcgetattr(fd, &guard->saved) != 0) return -1;
    guard->fd = fd;
    guard->active = *active;
    strcpy(guard->enter, enter);
    strcpy(guard->leave, leave);
    if (!kc_atexit_registered) {
        atexit(kc_restore_at_exit);
        kc_atexit_registered = 1;
    }
    if (kc_guard_depth == 0) {
        for (int i = 0; i < kc_guarded_count; i++) {
            sigaction(kc_guarded_signals[i], NULL, &kc_previous[i]);
            kc_install(kc_guarded_signals[i]);
        }
    }
    kc_guard_depth = kc_guard_depth + 1;
    tcsetattr(fd, TCSAFLUSH, active);
    kc_write_all(fd, enter);
    return 0;
}

void kc_terminal_guard_end(void) {
    if (kc_guard_depth == 0) return;
    struct kc_guard *guard = &kc_guards[kc_guard_depth - 1];
    kc_write_all(guard->fd, guard->leave);
    tcsetattr(guard->fd, TCSANOW, &guard->saved);
    kc_guard_depth = kc_guard_depth - 1;
    if (kc_guard_depth == 0) {
        for (int i = 0; i < kc_guarded_count; i++) sigaction(kc_guarded_signals[i], &kc_previous[i], NULL);
    }
}

int kc_terminal_guard_take_redraw(void) {
    int redraw = kc_guard_redraw;
    kc_guard_redraw = 0;
    return redraw;
}
