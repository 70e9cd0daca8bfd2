#ifndef INKY_FUSE_DEVICE_H
#define INKY_FUSE_DEVICE_H
/* The FUSE session's own device I/O (fuse_session_custom_io): CPU-local readers of /dev/fuse,
   FUSE_PARALLEL_DIROPS granted in the INIT reply, FUSE_TMPFILE refused (EROFS), and splice.
   fuse_device.c says why each. And the daemon's stat of its own mount, which must not keep the
   device open (own_mount.c). */
#include <semaphore.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

enum { INKY_READER_PLACES = 64 };

struct inky_device_readers {
    int cpu[INKY_READER_PLACES];     /* the CPUs readers wait on: the daemon's when the session began */
    int waiting[INKY_READER_PLACES]; /* readers in inky_device_read on each of them, atomic */
    int count;                       /* places in use */
    int on;                          /* readers pin themselves and wait in poll(2); else plain read(2) */
    sem_t pollers;                   /* `count` places in poll(2); other idle readers wait here */
    int polling;                     /* readers in poll(2) or read(2) now, atomic */
};

/* Readers for the device `fd`, if the daemon may run on two or more CPUs and the device can be
   made non-blocking. Returns the number of CPUs the readers spread over (0: plain reads). */
int inky_device_readers_begin(struct inky_device_readers *readers, int fd);

/* read(2) of the device, waiting in poll(2) while it is empty. Never fails with EAGAIN. */
ssize_t inky_device_read(int fd, void *buf, size_t len, struct inky_device_readers *readers);

enum {
    INKY_DIROPS_AWAITING_INIT = 0, /* no INIT request read yet */
    INKY_DIROPS_REPLY_PENDING,     /* the kernel offered the flag; the INIT reply is not out yet */
    INKY_DIROPS_GRANTED,           /* the INIT reply went out with the flag */
    INKY_DIROPS_NOT_OFFERED,       /* the kernel did not offer it: the reply went out untouched */
    INKY_DIROPS_REPLY_UNPATCHED,   /* the INIT reply was an error or not a reply this code knows */
};

struct inky_dirops_watch {
    int state;       /* an INKY_DIROPS_ value, read and written atomically */
    uint64_t unique; /* the INIT request's, written before state leaves AWAITING_INIT */
    /* FUSE_DIRECT_IO_ALLOW_MMAP (Linux 6.6): 0 not offered, 1 offered, 2 granted in the reply
       (written before state leaves REPLY_PENDING, read after it). */
    int direct_io_mmap;
};

/* Whether the kernel lets a FOPEN_DIRECT_IO file be mapped shared: 1 once the INIT reply
   granted it. Without it mmap(MAP_SHARED) of such a file fails with ENODEV. */
int inky_direct_io_mmap_granted(const struct inky_dirops_watch *watch);

int inky_dirops_state(const struct inky_dirops_watch *watch);
ssize_t inky_read_watching_init(int fd, void *buf, size_t len, struct inky_dirops_watch *watch,
                                struct inky_device_readers *readers);
ssize_t inky_writev_granting_dirops(int fd, struct iovec *iov, int count, struct inky_dirops_watch *watch);

/* With custom I/O libfuse splices only through this (none given: no FUSE_CAP_SPLICE_*). */
ssize_t inky_splice(int fdin, off_t *offin, int fdout, off_t *offout, size_t len, unsigned int flags);

/* stat(2) of `path` from a new thread that holds no descriptor, waited for. Returns 0, or the
   errno of the failed stat (or of unshare, close_range, pthread_create). */
int inky_stat_own_mount(const char *path, struct stat *out);
#endif
