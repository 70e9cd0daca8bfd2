#ifndef INKY_CLINUX_SHIM_H
#define INKY_CLINUX_SHIM_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sys/prctl.h>
#include <signal.h>
#include <spawn.h>
#include <fcntl.h>
#include <unistd.h>

/* prctl is variadic, which Swift cannot call: a worker asks to die with its daemon. */
static inline int inky_die_with_parent(void) { return prctl(PR_SET_PDEATHSIG, SIGKILL); }

/* GNU extensions hidden from Swift's Glibc module. */
static inline short inky_posix_spawn_setsid(void) { return POSIX_SPAWN_SETSID; }
static inline int inky_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }
#endif
