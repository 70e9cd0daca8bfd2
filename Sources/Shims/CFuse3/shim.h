#ifndef INKY_CFUSE3_SHIM_H
#define INKY_CFUSE3_SHIM_H
#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <fuse.h>
#include <linux/fuse.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static inline const char *inky_fuse_version_string(void) { return fuse_pkgversion(); }
static inline int inky_fuse_version(void) { return fuse_version(); }

/* fuse_session_loop_mt is a macro over a versioned symbol; this is the 3.12+ form. */
static inline int inky_fuse_session_loop_mt(struct fuse_session *se, unsigned int max_threads) {
    struct fuse_loop_config *config = fuse_loop_cfg_create();
    if (config == NULL) return -1;
    fuse_loop_cfg_set_max_threads(config, max_threads);
    fuse_loop_cfg_set_clone_fd(config, 0);
    int result = fuse_session_loop_mt(se, config);
    fuse_loop_cfg_destroy(config);
    return result;
}

/* fuse_file_info flags are bitfields. */
static inline void inky_fi_set_keep_cache(struct fuse_file_info *fi, int on) { fi->keep_cache = on ? 1 : 0; }
static inline void inky_fi_set_cache_readdir(struct fuse_file_info *fi, int on) { fi->cache_readdir = on ? 1 : 0; }
static inline int inky_fi_flags(const struct fuse_file_info *fi) { return fi->flags; }
static inline uint64_t inky_fi_fh(const struct fuse_file_info *fi) { return fi == NULL ? 0 : fi->fh; }
static inline void inky_fi_set_fh(struct fuse_file_info *fi, uint64_t fh) { fi->fh = fh; }

/* Kernel-side limits negotiated in init: large reads, so the page cache fills in big steps. */
static inline void inky_conn_tune(struct fuse_conn_info *conn, unsigned max_readahead) {
    conn->max_readahead = max_readahead;
    if (conn->capable & FUSE_CAP_ASYNC_READ) conn->want |= FUSE_CAP_ASYNC_READ;
    if (conn->capable & FUSE_CAP_SPLICE_WRITE) conn->want |= FUSE_CAP_SPLICE_WRITE;
    /* Every readdir as readdirplus (not only the first chunk, as "auto" does): a comic's
       pages come with their attributes in every chunk of a long listing. */
    if (conn->capable & FUSE_CAP_READDIRPLUS) conn->want |= FUSE_CAP_READDIRPLUS;
    conn->want &= ~FUSE_CAP_READDIRPLUS_AUTO;
}

/* Whether an ENOSYS answer to OPENDIR means "open, and stop asking" to this kernel. */
static inline int inky_conn_opendir_optional(const struct fuse_conn_info *conn) {
    return (conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT) != 0;
}
/* Parallel directory operations. libfuse 3.14 never puts FUSE_PARALLEL_DIROPS in its INIT
   reply (libfuse #861 fixed it after 3.14) and has no way to ask for it, so the kernel takes a
   directory's lock around every LOOKUP and READDIR in it: one lookup stuck on a hanging archive
   held up every other lookup and listing of its folder. The session's device I/O goes through
   these two wrappers (fuse_session_custom_io): the read one notes the INIT request and whether
   the kernel offered the flag, the writev one adds the flag to that request's reply. Both
   leave errno as the syscall set it: libfuse tells ENOENT, EINTR, EAGAIN and ENODEV apart. */
enum {
    INKY_DIROPS_AWAITING_INIT = 0, /* no INIT request read yet */
    INKY_DIROPS_REPLY_PENDING,     /* the kernel offered the flag; the INIT reply is not out yet */
    INKY_DIROPS_GRANTED,           /* the INIT reply went out with the flag */
    INKY_DIROPS_NOT_OFFERED,       /* the kernel did not offer it: the reply went out untouched */
    INKY_DIROPS_REPLY_UNPATCHED,   /* the INIT reply was an error or not a reply this header knows */
};

struct inky_dirops_watch {
    int state;       /* an INKY_DIROPS_ value, read and written atomically */
    uint64_t unique; /* the INIT request's, written before state leaves AWAITING_INIT */
};

static inline int inky_dirops_state(const struct inky_dirops_watch *watch) {
    return __atomic_load_n(&watch->state, __ATOMIC_ACQUIRE);
}

static inline ssize_t inky_read_watching_init(int fd, void *buf, size_t len, struct inky_dirops_watch *watch) {
    ssize_t got = read(fd, buf, len);
    if (inky_dirops_state(watch) != INKY_DIROPS_AWAITING_INIT
        || got < (ssize_t)(sizeof(struct fuse_in_header) + offsetof(struct fuse_init_in, flags) + sizeof(uint32_t))) return got;
    const struct fuse_in_header *in = (const struct fuse_in_header *)buf;
    if (in->opcode != FUSE_INIT) return got;
    const struct fuse_init_in *init = (const struct fuse_init_in *)(in + 1);
    watch->unique = in->unique;
    __atomic_store_n(&watch->state, (init->flags & FUSE_PARALLEL_DIROPS) ? INKY_DIROPS_REPLY_PENDING : INKY_DIROPS_NOT_OFFERED,
                     __ATOMIC_RELEASE);
    return got;
}

static inline ssize_t inky_writev_granting_dirops(int fd, struct iovec *iov, int count, struct inky_dirops_watch *watch) {
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
    struct iovec patched[2] = { iov[0], { &reply, iov[1].iov_len } };
    __atomic_store_n(&watch->state, INKY_DIROPS_GRANTED, __ATOMIC_RELEASE);
    return writev(fd, patched, 2);
}

/* With custom I/O libfuse splices only through this (none given: no FUSE_CAP_SPLICE_*).
   splice(2) itself is declared only under _GNU_SOURCE, which a module header cannot set. */
static inline ssize_t inky_splice(int fdin, off_t *offin, int fdout, off_t *offout, size_t len, unsigned int flags) {
    return syscall(SYS_splice, fdin, offin, fdout, offout, len, flags);
}
#endif
