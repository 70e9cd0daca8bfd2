#define _GNU_SOURCE /* splice(2), sched_setaffinity(2) */
#include "inky_fuse_device.h"
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <poll.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* CPU-local service. A request's round trip is two wakeups: the kernel wakes a reader of
   /dev/fuse, the reply wakes the requester. On another CPU each costs an inter-processor
   interrupt, and in a virtual machine whose idle CPUs halt (no halt polling) that dominates a
   listing: a FUSE tree that answers from memory lists 20k comics in 4.1-4.9 s with libfuse's
   blocking reads, 2.9-3.1 s with these readers (the same tree as plain folders: 2.1-2.5 s).
   A blocking read wakes the reader that waited longest, wherever it runs. So the device is made
   non-blocking and readers wait in poll(2), where every waiter wakes, each pinned to the CPU
   with the fewest readers waiting: the one on the requester's CPU, woken without an interrupt,
   takes the request; the others find nothing (EAGAIN) and wait again. Any reader can take any
   request, so a busy CPU delays nothing. At most one reader per CPU waits in poll(2): more on
   one CPU would all wake there on every request, each taking its turn on the CPU before the
   requester gets it back. The session's other idle threads wait on a semaphore for a place. A
   reader that gets a request keeps its place while another still waits on the device: it is
   mostly back in a moment (a page's reply is sent from elsewhere), and waking an idle thread to
   stand in for it cost two context switches a request. The last reader out hands its place to
   an idle thread (one woken: a futex wakes one waiter), so the device is watched even while
   every reader is stuck in an answer (a lookup waiting on a hanging archive). Idle threads
   are not ended: libfuse starts a thread whenever none is idle, and a burst of
   readahead (five 128 KiB reads for a 660 KB page) ended and started one thread per page read
   while only about one idle reader per CPU was kept, each start allocating (and, with the
   vault's M_PERTURB, filling) a 1 MiB request buffer: 670 threads for 267 MB of vault pages.
   A reader stays pinned while it
   answers: unpinning and pinning again around every request (4 us on this VM) cost more than
   it saved. So a thread started while answering inherits the reader's CPU (libdispatch starts
   its pool threads from the thread that queues work; ProcessSpawner widens itself first). */
/* Readers for the device `fd`, if the daemon may run on two or more CPUs and the device can be
   made non-blocking. Returns the number of CPUs the readers spread over (0: plain reads). */
int inky_device_readers_begin(struct inky_device_readers *readers, int fd) {
    memset(readers, 0, sizeof *readers);
    unsigned long mask[16] = {0}; /* 1,024 CPUs */
    if (syscall(SYS_sched_getaffinity, 0, sizeof mask, mask) <= 0) return 0;
    const int bits = 8 * sizeof(unsigned long);
    for (int cpu = 0; cpu < 16 * bits && readers->count < INKY_READER_PLACES; cpu++)
        if (mask[cpu / bits] & (1UL << (cpu % bits))) readers->cpu[readers->count++] = cpu;
    if (readers->count < 2) return 0;
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) return 0;
    if (sem_init(&readers->pollers, 0, (unsigned)readers->count) != 0) return 0;
    readers->on = 1;
    return readers->count;
}

/* The place the calling thread waits at: the one with the fewest readers waiting, its own on a
   tie (a thread moves, and pays for the move, only when the balance needs it). */
static int inky_device_reader_place(struct inky_device_readers *readers) {
    static __thread int place = -1;
    if (place >= readers->count) place = -1;
    int best = place >= 0 ? place : 0;
    for (int other = 0; other < readers->count; other++)
        if (__atomic_load_n(&readers->waiting[other], __ATOMIC_RELAXED) < __atomic_load_n(&readers->waiting[best], __ATOMIC_RELAXED))
            best = other;
    if (best != place) {
        unsigned long one[16] = {0};
        const int bits = 8 * sizeof(unsigned long);
        one[readers->cpu[best] / bits] = 1UL << (readers->cpu[best] % bits);
        (void)syscall(SYS_sched_setaffinity, 0, sizeof one, one); /* unpinned still works */
        place = best;
    }
    return best;
}

/* read(2) of the device, waiting in poll(2) while it is empty. Never fails with EAGAIN, which
   libfuse's loop would take for a broken device; EINTR comes back as from a blocking read. */
ssize_t inky_device_read(int fd, void *buf, size_t len, struct inky_device_readers *readers) {
    if (readers == NULL || !__atomic_load_n(&readers->on, __ATOMIC_RELAXED)) return read(fd, buf, len);
    static __thread int holding; /* this thread kept its place while it answered */
    /* EINTR (a signal) comes back as from a blocking read; libfuse's loop reads again. */
    if (!holding && sem_wait(&readers->pollers) != 0) return -1;
    holding = 1;
    int place = inky_device_reader_place(readers);
    __atomic_add_fetch(&readers->polling, 1, __ATOMIC_ACQ_REL);
    __atomic_add_fetch(&readers->waiting[place], 1, __ATOMIC_RELAXED);
    ssize_t got;
    for (;;) {
        got = read(fd, buf, len);
        if (got >= 0 || errno != EAGAIN) break;
        struct pollfd ready = { .fd = fd, .events = POLLIN };
        if (poll(&ready, 1, -1) < 0) { got = -1; break; }
    }
    int error = errno;
    __atomic_sub_fetch(&readers->waiting[place], 1, __ATOMIC_RELAXED);
    if (__atomic_sub_fetch(&readers->polling, 1, __ATOMIC_ACQ_REL) == 0) {
        holding = 0;
        sem_post(&readers->pollers);
    }
    errno = error;
    return got;
}

/* Parallel directory operations. libfuse 3.14 never puts FUSE_PARALLEL_DIROPS in its INIT
   reply (libfuse #861 fixed it after 3.14) and has no way to ask for it, so the kernel takes a
   directory's lock around every LOOKUP and READDIR in it: one lookup stuck on a hanging archive
   held up every other lookup and listing of its folder. The session's device I/O goes through
   these two wrappers (fuse_session_custom_io): the read one notes the INIT request and whether
   the kernel offered the flag, the writev one adds the flag to that request's reply. Both
   leave errno as the syscall set it: libfuse tells ENOENT, EINTR, EAGAIN and ENODEV apart. */
int inky_dirops_state(const struct inky_dirops_watch *watch) {
    return __atomic_load_n(&watch->state, __ATOMIC_ACQUIRE);
}

/* FUSE_DIRECT_IO_ALLOW_MMAP is bit 36 of the INIT flags, bit 4 of flags2; this system's
   linux/fuse.h predates it, as libfuse 3.14 does. The same writev grants it when offered. */
#define INKY_DIRECT_IO_ALLOW_MMAP_FLAGS2 (1u << (36 - 32))

int inky_direct_io_mmap_granted(const struct inky_dirops_watch *watch) {
    return inky_dirops_state(watch) == INKY_DIROPS_GRANTED && watch->direct_io_mmap == 2;
}

/* O_TMPFILE. libfuse 3.14 knows no FUSE_TMPFILE: it answers ENOSYS, which the kernel turns into
   EOPNOTSUPP (and never asks again). The mount answers every write it does not take with EROFS
   (FUSEWrites.swift), so this one is answered here, before libfuse sees it. Whether the reply
   arrives does not matter: a request the kernel dropped meanwhile (interrupted) takes none. */
static int inky_answered_here(int fd, const void *buf, ssize_t got) {
    if (got < (ssize_t)sizeof(struct fuse_in_header)) return 0;
    const struct fuse_in_header *in = (const struct fuse_in_header *)buf;
    if (in->opcode != FUSE_TMPFILE) return 0;
    struct fuse_out_header out = { .len = sizeof out, .error = -EROFS, .unique = in->unique };
    (void)write(fd, &out, sizeof out);
    return 1;
}

ssize_t inky_read_watching_init(int fd, void *buf, size_t len, struct inky_dirops_watch *watch,
                                              struct inky_device_readers *readers) {
    ssize_t got;
    do got = inky_device_read(fd, buf, len, readers);
    while (inky_answered_here(fd, buf, got));
    if (inky_dirops_state(watch) != INKY_DIROPS_AWAITING_INIT
        || got < (ssize_t)(sizeof(struct fuse_in_header) + offsetof(struct fuse_init_in, flags) + sizeof(uint32_t))) return got;
    const struct fuse_in_header *in = (const struct fuse_in_header *)buf;
    if (in->opcode != FUSE_INIT) return got;
    const struct fuse_init_in *init = (const struct fuse_init_in *)(in + 1);
    watch->unique = in->unique;
    if ((init->flags & FUSE_INIT_EXT)
        && got >= (ssize_t)(sizeof(struct fuse_in_header) + offsetof(struct fuse_init_in, flags2) + sizeof(uint32_t))
        && (init->flags2 & INKY_DIRECT_IO_ALLOW_MMAP_FLAGS2)) watch->direct_io_mmap = 1;
    __atomic_store_n(&watch->state, (init->flags & FUSE_PARALLEL_DIROPS) ? INKY_DIROPS_REPLY_PENDING : INKY_DIROPS_NOT_OFFERED,
                     __ATOMIC_RELEASE);
    return got;
}

ssize_t inky_writev_granting_dirops(int fd, struct iovec *iov, int count, struct inky_dirops_watch *watch) {
    if (inky_dirops_state(watch) != INKY_DIROPS_REPLY_PENDING || count < 1
        || iov[0].iov_len < sizeof(struct fuse_out_header)
        || ((const struct fuse_out_header *)iov[0].iov_base)->unique != watch->unique) return writev(fd, iov, count);
    /* libfuse sends a reply as its header, then the argument in one iovec (send_reply_iov). */
    const struct fuse_out_header *out = (const struct fuse_out_header *)iov[0].iov_base;
    size_t flagsEnd = offsetof(struct fuse_init_out, flags) + sizeof(uint32_t);
    if (out->error != 0 || count != 2 || iov[1].iov_len < flagsEnd || iov[1].iov_len > sizeof(struct fuse_init_out)) {
        __atomic_store_n(&watch->state, INKY_DIROPS_REPLY_UNPATCHED, __ATOMIC_RELEASE);
        return writev(fd, iov, count);
    }
    /* A copy: the argument is libfuse's, and may be what it logs after the write. */
    struct fuse_init_out reply;
    memset(&reply, 0, sizeof reply);
    memcpy(&reply, iov[1].iov_base, iov[1].iov_len);
    reply.flags |= FUSE_PARALLEL_DIROPS;
    if (watch->direct_io_mmap == 1 && iov[1].iov_len >= offsetof(struct fuse_init_out, flags2) + sizeof(uint32_t)) {
        reply.flags |= FUSE_INIT_EXT;
        reply.flags2 |= INKY_DIRECT_IO_ALLOW_MMAP_FLAGS2;
        watch->direct_io_mmap = 2;
    }
    struct iovec patched[2] = { iov[0], { &reply, iov[1].iov_len } };
    __atomic_store_n(&watch->state, INKY_DIROPS_GRANTED, __ATOMIC_RELEASE);
    return writev(fd, patched, 2);
}

/* With custom I/O libfuse splices only through this (none given: no FUSE_CAP_SPLICE_*). */
ssize_t inky_splice(int fdin, off_t *offin, int fdout, off_t *offout, size_t len, unsigned int flags) {
    return splice(fdin, offin, fdout, offout, len, flags);
}
