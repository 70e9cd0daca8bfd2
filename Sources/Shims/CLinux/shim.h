#ifndef INKY_CLINUX_SHIM_H
#define INKY_CLINUX_SHIM_H
#include <sys/prctl.h>
#include <sys/socket.h>
#include <signal.h>
#include <spawn.h>
#include <fcntl.h>
#include <unistd.h>

/* prctl is variadic, which Swift cannot call: a worker asks to die with its daemon. */
static inline int inky_die_with_parent(void) { return prctl(PR_SET_PDEATHSIG, SIGKILL); }
/* No core dumps and no ptrace by other processes of the user: keys live in this memory. */
static inline int inky_set_not_dumpable(void) { return prctl(PR_SET_DUMPABLE, 0); }

/* POSIX_SPAWN_SETSID, pipe2, accept4 and struct ucred are GNU extensions glibc hides without
   _GNU_SOURCE. Defining _GNU_SOURCE here would give this module a different view of shared
   headers (fd_set) than Glibc's and Dispatch's modules, which breaks clean builds; so they are
   named directly. */
static inline short inky_posix_spawn_setsid(void) {
#ifdef POSIX_SPAWN_SETSID
    return POSIX_SPAWN_SETSID;
#else
    return 0x80; /* glibc >= 2.26 */
#endif
}
extern int pipe2(int pipefd[2], int flags);
static inline int inky_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

extern int accept4(int sockfd, struct sockaddr *addr, socklen_t *addrlen, int flags);
static inline int inky_accept_cloexec(int fd) { return accept4(fd, NULL, NULL, SOCK_CLOEXEC); }

/* The uid of the process at the other end of a Unix socket (SO_PEERCRED); struct ucred's
   layout (pid, uid, gid) is fixed by the kernel ABI. -1 when unknown. */
struct inky_peer_credentials { pid_t pid; uid_t uid; gid_t gid; };
static inline long long inky_peer_uid(int fd) {
    struct inky_peer_credentials credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0 || length != sizeof credentials) return -1;
    return (long long)credentials.uid;
}
#endif
