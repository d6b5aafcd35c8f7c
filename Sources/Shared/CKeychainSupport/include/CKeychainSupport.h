#ifndef CKEYCHAINSUPPORT_H
#define CKEYCHAINSUPPORT_H

#include <spawn.h>
#include <stddef.h>
#include <stdint.h>
#include <termios.h>

/// Adds (or replaces) a "user" key in the calling user's kernel keyring (@u) and returns its
/// serial number, or -1 with errno set. The payload never touches the file system.
int32_t kc_user_keyring_add(const char *description, const void *payload, size_t length);

/// Finds a "user" key by description in the user keyring; -1 with errno ENOKEY when absent.
int32_t kc_user_keyring_search(const char *description);

/// Reads a key's payload into buffer; returns the payload's full length or -1 with errno set.
long kc_keyring_read(int32_t serial, void *buffer, size_t length);

/// Invalidates a key so that nobody can read it again; 0 or -1 with errno set.
int kc_keyring_invalidate(int32_t serial);

/// Restricts a key to its owner (possessor and user: all rights; group and other: none).
int kc_keyring_restrict_to_owner(int32_t serial);

/// Marks the process not dumpable: no core file, no ptrace attach by other same-user processes.
int kc_set_not_dumpable(void);

/// Marks the process dumpable again (`PR_SET_DUMPABLE` 1); 0 or -1 with errno set.
int kc_set_dumpable(void);

/// 1 when the process is dumpable, 0 when not, -1 on error.
int kc_is_dumpable(void);

/// Creates a file with no name in `directory` (`O_TMPFILE`), open for reading and writing,
/// close-on-exec, mode 0600; the descriptor, or -1 with errno set.
int kc_open_unnamed(const char *directory);

/// Opens `name` beneath the directory `directory` refers to, resolving no symbolic link on the
/// way (`openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`); always
/// `O_NOFOLLOW | O_CLOEXEC`. On a kernel without `openat2`, a name of one component with
/// `O_NOFOLLOW` (any other fails with EXDEV). The descriptor, or -1 with errno set (ELOOP for a
/// link, EXDEV for a name that leaves the directory).
int kc_openat_beneath(int directory, const char *name, int flags, unsigned int mode);

/// Makes a keychain's change number: eight bytes of memory with no name (`memfd_create`), zero,
/// mapped for writing at `*number`, sealed so that it keeps its size and that no other mapping
/// or `write` of it can change it (`F_SEAL_FUTURE_WRITE`). The descriptor (close-on-exec) is
/// for the readers; -1 with errno set.
int kc_change_number_create(uint64_t **number);

/// Maps a change number from its descriptor, for reading; NULL with errno set when the
/// descriptor is not one (not sealed as ``kc_change_number_create`` seals, or not eight bytes).
const uint64_t *kc_change_number_map(int descriptor);

/// Unmaps a change number ``kc_change_number_map`` mapped.
void kc_change_number_unmap(const uint64_t *number);

/// Advances a change number by one (atomically).
void kc_change_number_advance(uint64_t *number);

/// A change number's value now (atomically).
uint64_t kc_change_number_read(const uint64_t *number);

/// A connected pair of `SOCK_SEQPACKET` Unix sockets, both close-on-exec: the system daemon's
/// channel to one user's worker. 0, or -1 with errno set.
int kc_socketpair_seqpacket(int fds[2]);

/// Sends `descriptor` over `channel` (`SCM_RIGHTS`, one byte of data). 0, or -1 with errno set.
int kc_send_descriptor(int channel, int descriptor);

/// Receives one descriptor sent by ``kc_send_descriptor`` (close-on-exec); -2 when the other end
/// closed the channel, -1 with errno set on an error or a message that carried no descriptor.
int kc_receive_descriptor(int channel);

/// Creates a pipe whose two ends close on exec (pipe2 with O_CLOEXEC); 0 or -1 with errno set.
int kc_pipe_cloexec(int fds[2]);

/// Adds "close every descriptor from `lowest` up" to spawn file actions (glibc 2.34 and later),
/// so that a spawned child holds no descriptor it was not given; 0 or an error number.
int kc_spawn_file_actions_closefrom(posix_spawn_file_actions_t *actions, int lowest);

/// Sets spawn attributes so that the child starts with an empty signal mask and every signal
/// at its default disposition, and, with `new_session`, in a session of its own
/// (`POSIX_SPAWN_SETSID`, which glibc declares only under `_GNU_SOURCE`); 0 or an error number.
int kc_spawnattr_reset_signals(posix_spawnattr_t *attributes, int new_session);

/// Puts the terminal `fd` into the modes `active` and writes `enter` (say, the alternate-screen
/// sequence), remembering how it was. Until the matching end, SIGINT, SIGTERM, SIGHUP and
/// SIGQUIT restore every guarded terminal and then end the process as the signal would;
/// SIGTSTP restores them and stops; SIGCONT re-applies the modes and, like SIGWINCH, asks for a
/// redraw; a normal exit restores them too. Guards nest (up to 4): a sheet over a full-screen
/// program. `enter` and `leave` hold at most 31 bytes. 0, or -1 with errno set.
int kc_terminal_guard_begin(int fd, const struct termios *active, const char *enter, const char *leave);

/// Ends the innermost guard: writes its `leave` and restores the modes it found.
void kc_terminal_guard_end(void);

/// 1 once after SIGCONT or SIGWINCH (the screen needs drawing again), else 0.
int kc_terminal_guard_take_redraw(void);

/// The process on the other end of a connected Unix socket, as the kernel recorded it
/// (`SO_PEERCRED`, whose `struct ucred` Swift cannot import): 0, or -1 with errno.
int kc_peer_credentials(int socket, int32_t *pid, uint32_t *uid);

/// 1 while the process behind `pidfd` is alive (it cannot have been replaced), else 0.
int kc_pidfd_is_alive(int pidfd);

/// A pidfd for process `pid` (`pidfd_open`, closing on exec), or -1 with errno.
int kc_pidfd_open(int pid);

/// A Unix stream socket bound to `path` (a file left there is replaced) and listening; its
/// descriptor closes on exec. The descriptor, or -1 with errno.
int kc_listen_unix(const char *path, int backlog);

/// The next connection on `listener` (`accept4`, closing on exec); -1 with errno.
int kc_accept(int listener);

/// Has the kernel attach the sending process's credentials to what `socket` receives
/// (`SO_PASSCRED`); with it, one read never returns bytes of two writers. 0, or -1 with errno.
int kc_pass_credentials(int socket);

/// Makes a send on `socket` give up after `seconds` (`SO_SNDTIMEO`). 0, or -1 with errno.
int kc_set_send_timeout(int socket, int seconds);

/// A pidfd for the process that connected `socket` (`SO_PEERPIDFD`), or -1 with errno.
int kc_peer_pidfd(int socket);

/// The peer's security label (`SO_PEERSEC`) into `buffer`: its length, or -1 with errno.
long kc_peer_security_label(int socket, char *buffer, size_t length);

/// The bytes waiting to be read on `socket` (`FIONREAD`), or -1 with errno.
long kc_pending_bytes(int socket);

/// Reads up to `length` bytes from `socket` (with ``kc_pass_credentials`` set), waiting at most
/// `timeout_ms` (-1: no limit). `*sender` gets the pid of the process that wrote them, as the
/// kernel recorded it at the send (`SCM_CREDENTIALS`; 0 when none came). The count read, 0 at
/// the end of the stream, -1 with errno, or -2 when the time ran out.
long kc_receive_from_process(int socket, void *buffer, size_t length, int timeout_ms, int32_t *sender);

/// Entries of `/proc/PID` that only a process allowed to inspect PID (ptrace's read mode:
/// `CAP_SYS_PTRACE` for another user's process, and never from inside a Landlock domain for a
/// process outside it) may open; and files in its root, which a Landlock domain does not reach
/// when the process runs in a mount namespace of its own (a sandbox's).
enum {
    /// `/proc/PID/exe`, opened `O_PATH`: the very file the process runs.
    KC_PROCESS_EXECUTABLE = 1,
    /// `/proc/PID/maps`.
    KC_PROCESS_MEMORY_MAP = 2,
    /// `/proc/PID/root`, opened `O_PATH | O_DIRECTORY`: its root directory.
    KC_PROCESS_ROOT = 3,
    /// `/proc/PID/ns/user`: its user namespace.
    KC_PROCESS_USER_NAMESPACE = 4,
    /// The environment block it started with: `/proc/PID/environ`, or, where that is its
    /// owner's alone, a copy of that memory (at most 1 MiB) in a sealed memfd.
    KC_PROCESS_ENVIRONMENT = 5,
    /// The file it runs, opened for reading (to hash it).
    KC_PROCESS_EXECUTABLE_CONTENTS = 6,
    /// `/.flatpak-info` in its root, opened for reading when it is a regular file (never
    /// following a link, never waiting on a pipe).
    KC_PROCESS_FLATPAK_INFO = 7,
};

/// Opens `entry` (a `KC_PROCESS_` value) of process `pid`: through the process inspector when
/// one is set (``kc_process_use_inspector``), else directly. Close-on-exec; the descriptor, or
/// -1 with errno set. A worker whose inspector is gone exits (70) with a line on standard error.
int kc_process_open(int pid, int entry);

/// Opens `entry` of process `pid` itself, every entry through the one `/proc/PID` directory (so
/// never another process that took the pid meanwhile); with `owner` ≥ 0, only when the
/// process's real or effective uid is `owner` (else -1 with errno EPERM).
int kc_process_open_directly(int pid, int entry, long long owner);

/// Makes ``kc_process_open`` ask the inspector at the other end of `channel` (a
/// `SOCK_SEQPACKET` socket), which answers with ``kc_process_serve_inspections``.
void kc_process_use_inspector(int channel);

/// Answers ``kc_process_open``'s questions on `channel`, one at a time, for processes of
/// `owner` alone, until the other end closes it.
void kc_process_serve_inspections(int channel, long long owner);

#endif
