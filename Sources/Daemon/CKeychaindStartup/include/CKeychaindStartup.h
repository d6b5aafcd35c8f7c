#ifndef CKEYCHAINDSTARTUP_H
#define CKEYCHAINDSTARTUP_H

/// What `keychaind --system` did with its capabilities, before `main` and before any thread
/// existed (capabilities belong to each thread, and a thread inherits its creator's: dropping
/// them later, from Swift's thread pool, would leave the main thread and the threads already
/// started with all they had). With `--system` among the arguments, the process set
/// no_new_privs and kept `CAP_SYS_PTRACE` alone, in its permitted and effective sets only:
/// every other capability is gone, the inheritable and ambient sets are empty (a child gets
/// nothing), and the bounding set is shrunk where permitted.
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

#endif
