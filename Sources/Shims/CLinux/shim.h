#ifndef INKY_CLINUX_SHIM_H
#define INKY_CLINUX_SHIM_H
#include <sys/prctl.h>
#include <signal.h>
#include <spawn.h>
#include <fcntl.h>
#include <unistd.h>

/* prctl is variadic, which Swift cannot call: a worker asks to die with its daemon. */
static inline int inky_die_with_parent(void) { return prctl(PR_SET_PDEATHSIG, SIGKILL); }

/* POSIX_SPAWN_SETSID and pipe2 are GNU extensions glibc hides without _GNU_SOURCE. Defining
   _GNU_SOURCE here would give this module a different view of shared headers (fd_set) than
   Glibc's and Dispatch's modules, which breaks clean builds; so name them directly. */
static inline short inky_posix_spawn_setsid(void) {
#ifdef POSIX_SPAWN_SETSID
    return POSIX_SPAWN_SETSID;
#else
    return 0x80; /* glibc >= 2.26 */
#endif
}
extern int pipe2(int pipefd[2], int flags);
static inline int inky_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }
#endif
