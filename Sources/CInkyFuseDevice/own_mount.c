#define _GNU_SOURCE /* unshare(2) with CLONE_FILES */
#include "inky_fuse_device.h"
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The daemon stats its own mount (MountRootAttributes.swift says why), and must still die when
   killed meanwhile. Once the kernel has handed that GETATTR to the daemon, a requester with a
   fatal signal waits for the answer uninterruptibly ("wait it out", request_wait_answer); no
   answer comes from a dying daemon, and the connection is aborted only when the last descriptor
   of /dev/fuse closes. A waiting thread of the dying process would keep the descriptor table it
   shares, and with it the device, open: a process that never ends and a mount that never
   answers (MountLifecycleTests hung on it). So the stat runs on a thread with a descriptor table
   of its own and nothing in it: the other threads' exit closes the device, the kernel aborts
   the connection, this stat returns ENOTCONN and the thread ends too. */
struct own_stat {
    const char *path;
    struct stat *out;
    int error;
};

static void *stat_holding_no_descriptor(void *argument) {
    struct own_stat *job = argument;
    if (unshare(CLONE_FILES) != 0 || syscall(SYS_close_range, 0U, ~0U, 0U) != 0) {
        job->error = errno;
        return NULL;
    }
    int result;
    do result = stat(job->path, job->out);
    while (result != 0 && errno == EINTR);
    job->error = result == 0 ? 0 : errno;
    return NULL;
}

int inky_stat_own_mount(const char *path, struct stat *out) {
    struct own_stat job = {path, out, 0};
    pthread_t thread;
    int created = pthread_create(&thread, NULL, stat_holding_no_descriptor, &job);
    if (created != 0) return created;
    pthread_join(thread, NULL);
    return job.error;
}
