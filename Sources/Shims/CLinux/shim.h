#ifndef INKY_CLINUX_SHIM_H
#define INKY_CLINUX_SHIM_H
#include <sys/prctl.h>
#include <signal.h>
#include <spawn.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <errno.h>
#include <sys/stat.h>

/* No core dumps and no ptrace by other processes of the user: keys live in this memory. */
static inline int inky_set_not_dumpable(void) { return prctl(PR_SET_DUMPABLE, 0); }

/* execve can never grant privileges again (setuid bits, file capabilities); also what lets an
   unprivileged process install a seccomp filter. */
static inline int inky_set_no_new_privs(void) { return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); }

/* seccomp(2), which glibc does not wrap: SECCOMP_SET_MODE_FILTER (1) with SECCOMP_FILTER_FLAG_TSYNC
   (1), so every thread of the process is under the filter, not only the caller. The instructions
   are struct sock_filter, built by SeccompFilter in Swift; the program is struct sock_fprog, spelt
   out here so <linux/filter.h> stays out of the module. 0 on success. */
static inline long inky_seccomp_install(unsigned short count, const void *instructions) {
    struct { unsigned short len; const void *filter; } program = { count, instructions };
    return syscall(SYS_seccomp, 1, 1UL, &program);
}

/* POSIX_SPAWN_SETSID, pipe2 and accept4 are GNU extensions glibc hides without _GNU_SOURCE.
   Defining _GNU_SOURCE here, or including <sys/socket.h>, gives this module its own view of
   headers that Glibc's and Dispatch's modules also own (fd_set, SOCK_*), which breaks clean
   builds of the modules that do not import this one; so the three are named directly. */
static inline short inky_posix_spawn_setsid(void) {
#ifdef POSIX_SPAWN_SETSID
    return POSIX_SPAWN_SETSID;
#else
    return 0x80; /* glibc >= 2.26 */
#endif
}
extern int pipe2(int pipefd[2], int flags);
static inline int inky_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

/* glibc's mallopt (declared in <malloc.h>, which Swift's Glibc module leaves out); the
   parameter numbers are glibc ABI. A fixed mmap threshold also turns off glibc's dynamic one,
   which after the first large free serves multi-MiB page buffers from heaps that keep the
   memory: the daemon's RSS would drift above its cache budget. */
extern int mallopt(int param, int value);
static inline int inky_release_large_buffers(int threshold, int arenas, int trim) {
    return mallopt(-3 /* M_MMAP_THRESHOLD */, threshold) && mallopt(-8 /* M_ARENA_MAX */, arenas)
        && mallopt(-1 /* M_TRIM_THRESHOLD */, trim);
}

/* From now on every freed heap chunk that does not go to a thread cache is overwritten with
   `byte` (M_PERTURB; allocations get its complement). */
static inline int inky_wipe_freed_memory(int byte) { return mallopt(-6 /* M_PERTURB */, byte); }

/* On Linux SOCK_CLOEXEC has the value of O_CLOEXEC. */
extern int accept4(int sockfd, void *addr, void *addrlen, int flags);
static inline int inky_accept_cloexec(int fd) { return accept4(fd, 0, 0, O_CLOEXEC); }

/* A child starts with its spawning thread's CPU mask, and the FUSE device readers pin
   themselves to one CPU each (CFuse3 shim.h): a worker spawned for a lookup would inherit that
   one CPU. The spawner widens its thread to the process's mask (the main thread's, never
   pinned) around posix_spawn, and narrows it back after. */
struct inky_cpu_mask { unsigned long bits[16]; };

/* Widens the calling thread to the main thread's CPUs; 1 if it did (`saved` then holds the
   thread's own mask, for inky_cpus_restore), 0 if it already had them or either is unknown. */
static inline int inky_cpus_widen_to_process(struct inky_cpu_mask *saved) {
    struct inky_cpu_mask process = {{0}};
    for (int i = 0; i < 16; i++) saved->bits[i] = 0;
    if (syscall(SYS_sched_getaffinity, 0, sizeof saved->bits, saved->bits) <= 0
        || syscall(SYS_sched_getaffinity, getpid(), sizeof process.bits, process.bits) <= 0) return 0;
    int same = 1;
    for (int i = 0; i < 16; i++) same &= saved->bits[i] == process.bits[i];
    return !same && syscall(SYS_sched_setaffinity, 0, sizeof process.bits, process.bits) == 0;
}

static inline void inky_cpus_restore(const struct inky_cpu_mask *saved) {
    (void)syscall(SYS_sched_setaffinity, 0, sizeof saved->bits, saved->bits);
}

/* getxattr(2), declared in <sys/xattr.h>, which Swift's Glibc module leaves out: `vault add` asks a
   file of an inkyfs mount which archive it comes from (user.inkyfs.archive). */
extern ssize_t getxattr(const char *path, const char *name, void *value, size_t size);
static inline long inky_getxattr(const char *path, const char *name, void *value, unsigned long size) {
    return getxattr(path, name, value, size);
}

/* posix_spawn's "close every descriptor from `low` up" (glibc 2.34, close_range underneath): a
   child gets the descriptors it is given and no other, whatever the mounting shell left open. */
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int low);
static inline int inky_spawn_close_from(posix_spawn_file_actions_t *actions, int low) {
    return posix_spawn_file_actions_addclosefrom_np(actions, low);
}

/* Landlock (Linux 5.13+), spelt out here so <linux/landlock.h> stays out of the module; the numbers
   are kernel ABI. A worker confines itself before seccomp: it may read files and list folders beneath
   the folders (or files) given (the library, the vault's objects, system files) and nothing else, whatever its uid, and it can
   no longer ptrace or read /proc/PID/mem of a process outside its domain (the daemon). The
   filesystem rights handled grow with the kernel's Landlock ABI. Returns the ABI used (> 0), 0
   when the kernel has no Landlock, or -errno. */
struct inky_landlock_ruleset { unsigned long long fs, net, scoped; };
struct inky_landlock_beneath { unsigned long long allowed; int parent; } __attribute__((packed));
static inline int inky_landlock_confine(const int *folders, int count) {
    long abi = syscall(444 /* landlock_create_ruleset */, (void *)0, 0, 1UL /* VERSION */);
    if (abi < 1) return 0;
    struct inky_landlock_ruleset attributes = { (1ULL << 13) - 1 /* ABI 1: execute .. make_sym */, 0, 0 };
    if (abi >= 2) attributes.fs |= 1ULL << 13; /* refer */
    if (abi >= 3) attributes.fs |= 1ULL << 14; /* truncate */
    if (abi >= 5) attributes.fs |= 1ULL << 15; /* ioctl_dev */
    if (abi >= 6) attributes.scoped = 3;        /* abstract unix sockets, signals */
    unsigned long size = abi >= 6 ? 24 : (abi >= 4 ? 16 : 8);
    int ruleset = (int)syscall(444, &attributes, size, 0UL);
    if (ruleset < 0) return -errno;
    for (int index = 0; index < count; index++) {
        struct stat info;
        int folder = fstat(folders[index], &info) == 0 && S_ISDIR(info.st_mode);
        /* read_file, and read_dir for a folder (a rule on a file may hold file rights only) */
        struct inky_landlock_beneath rule = { (1ULL << 2) | (folder ? 1ULL << 3 : 0), folders[index] };
        if (syscall(445 /* landlock_add_rule */, ruleset, 1 /* PATH_BENEATH */, &rule, 0UL) != 0) {
            int failure = errno; close(ruleset); return -failure;
        }
    }
    long done = syscall(446 /* landlock_restrict_self */, ruleset, 0UL);
    int failure = errno;
    close(ruleset);
    return done == 0 ? (int)abi : -failure;
}

/* A root mount's worker gives up root before Landlock and seccomp: uid and gid `uid`/`gid` (nobody,
   nogroup), no supplementary groups, and of every capability only `keep` (-1: none; a mount's
   worker keeps none, since the daemon passes it every comic open), in its effective and
   permitted sets and its bounding set; none inheritable, none ambient. glibc's setgroups, setresgid
   and setresuid change every thread of the process; the bounding set and capset change the calling
   thread only, so this runs while the worker has no other thread, and every thread it starts later
   inherits it. The capability structs and prctl numbers are kernel ABI, spelt out so
   <linux/capability.h> stays out of the module. Returns 0, or the step that failed (1 ambient,
   2 bounding set, 3 keepcaps, 4 setgroups, 5 setresgid, 6 setresuid, 7 capset, 8 a way back to
   root was still open) with errno set. */
extern int setgroups(unsigned long size, const unsigned int *list);
extern int setresgid(unsigned int rgid, unsigned int egid, unsigned int sgid);
extern int setresuid(unsigned int ruid, unsigned int euid, unsigned int suid);
static inline int inky_drop_root(unsigned int uid, unsigned int gid, int keep) {
    if (prctl(47 /* PR_CAP_AMBIENT */, 4 /* CLEAR_ALL */, 0, 0, 0) != 0 && errno != EINVAL) return 1;
    for (int cap = 0; cap < 64; cap++) {
        if (cap == keep) continue;
        if (prctl(24 /* PR_CAPBSET_DROP */, cap, 0, 0, 0) != 0) {
            if (errno == EINVAL) break; /* past the kernel's last capability */
            return 2;
        }
    }
    if (prctl(8 /* PR_SET_KEEPCAPS */, 1, 0, 0, 0) != 0) return 3;
    if (setgroups(0, 0) != 0) return 4;
    if (setresgid(gid, gid, gid) != 0) return 5;
    if (setresuid(uid, uid, uid) != 0) return 6;
    struct { unsigned int version; int pid; } header = { 0x20080522 /* _LINUX_CAPABILITY_VERSION_3 */, 0 };
    struct { unsigned int effective, permitted, inheritable; } data[2] = {{0, 0, 0}, {0, 0, 0}};
    if (keep >= 0) {
        data[keep / 32].effective = 1U << (keep % 32);
        data[keep / 32].permitted = 1U << (keep % 32);
    }
    if (syscall(SYS_capset, &header, data) != 0) return 7;
    (void)prctl(8 /* PR_SET_KEEPCAPS */, 0, 0, 0, 0);
    if (setresuid(0, 0, 0) == 0 || setresgid(0, 0, 0) == 0) { errno = EPERM; return 8; }
    return 0;
}

#endif
