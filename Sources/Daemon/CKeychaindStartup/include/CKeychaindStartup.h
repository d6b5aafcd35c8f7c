#ifndef CKEYCHAINDSTARTUP_H
#define CKEYCHAINDSTARTUP_H

/// What `keychaind --system` did with its capabilities, before `main` and before any thread
/// existed (capabilities belong to each thread, and a thread inherits its creator's: dropping
/// them later, from Swift's thread pool, would leave the main thread and the threads already
/// started with all they had). With `--system-worker` among the arguments (a user's worker),
/// the process set no_new_privs and kept `CAP_SYS_PTRACE` alone, in its permitted and effective
/// sets only: every other capability is gone, the inheritable and ambient sets are empty (a
/// child, git or fprintd's tools, gets nothing), and the bounding set is shrunk where permitted;
/// then it handed the capability to its process inspector and dropped it (``kc_worker_startup``).
/// With `--system` (the front, which starts the workers and nothing else), it kept
/// `CAP_SYS_PTRACE` alone in its permitted, inheritable and ambient sets and none effective: a
/// worker it starts gets the capability, the front itself uses none.
///
/// 1 when `CAP_SYS_PTRACE` is held, 0 when the process never had it, -2 without `--system`. When
/// the drop fails, the process says why on standard error and exits 1 before `main`.
int kc_system_capabilities(void);

/// Denies this process, every one of its threads and every child `ptrace`, `process_vm_writev`
/// and `pidfd_getfd` with a seccomp filter (each then fails with `EPERM`), for good: the
/// capability `--system` keeps (`CAP_SYS_PTRACE`) then reads other processes' files and memory
/// but cannot change a process or take its descriptors. keychaind calls it first thing in
/// either mode (not from a constructor: the test bundle links keychaind's code and must keep
/// its own debugger). 0, or -1 with errno set.
int kc_deny_process_writes(void);

/// Limits the process's data (`RLIMIT_DATA`: its heap and private writable mappings, thread
/// stacks among them) to `bytes`: an allocation past it fails. 0, or -1 with errno set.
int kc_limit_memory(unsigned long long bytes);

/// Confines the calling process and its children with Landlock to `own_directory` (an absolute
/// path with no link in it): everything there; beneath `private_root` (an ancestor of it, or
/// itself), nothing else but listing; elsewhere reading, listing and running files, and writing
/// devices in /dev. The Landlock ABI version in force (1 or more), 0 when the kernel has no
/// Landlock (nothing is confined), or -1 with errno set. Call it where no other thread runs.
///
/// keychaind confines each system worker this way (``kc_worker_startup``), and git within it
/// (`--confined-exec`).
int kc_landlock_confine(const char *own_directory, const char *private_root);

/// The Landlock ABI version this kernel offers, 0 when it has none.
int kc_landlock_abi(void);

/// A system worker's first steps (`keychaind --system-worker UID --state-directory STATE`,
/// called by the constructor while the process has one thread; anything else exits 1 with a
/// line on standard error):
/// 1. it starts its process inspector, a child that keeps `CAP_SYS_PTRACE` and stays outside
///    the Landlock domain: a process in a domain may not inspect (ptrace-read) one outside it,
///    and the worker must read each client's `/proc/PID/exe`, maps, root, user namespace and
///    environment to know the app. The inspector opens those entries, for processes of UID
///    alone, and hands the descriptors over (``kc_process_open``); it dies with the worker;
/// 2. it drops every capability;
/// 3. it confines itself with Landlock to `STATE/UID` (``kc_landlock_confine``: nothing of the
///    other users' directories readable or writable; the front points SQLite's temporary files
///    there, `SQLITE_TMPDIR`).
void kc_worker_startup(int argc, char **argv);

/// The Landlock ABI version confining this worker, 0 on a kernel without Landlock (the worker is
/// not confined), -2 when the process is no worker.
int kc_worker_confinement(void);

/// The directory this worker is confined to (`STATE/UID`); empty when the process is no worker.
const char *kc_worker_directory(void);

/// The pid of this worker's process inspector, -1 when the process is no worker.
int kc_worker_inspector_pid(void);

/// Has the kernel end this process (SIGKILL) when its parent, the front, ends; -1 with errno
/// set when that cannot be asked, or when the parent has ended already.
int kc_die_with_parent(void);

#endif
