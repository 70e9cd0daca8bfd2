#ifndef INKY_CFUSE3_SHIM_H
#define INKY_CFUSE3_SHIM_H
#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <fuse.h>
#include <linux/fuse.h>

static inline const char *inky_fuse_version_string(void) { return fuse_pkgversion(); }
static inline int inky_fuse_version(void) { return fuse_version(); }

/* fuse_session_loop_mt is a macro over a versioned symbol; this is the 3.12+ form. A thread
   that finds more than `max_idle_threads` others waiting ends (0: libfuse's default, never). */
static inline int inky_fuse_session_loop_mt(struct fuse_session *se, unsigned int max_threads, unsigned int max_idle_threads) {
    struct fuse_loop_config *config = fuse_loop_cfg_create();
    if (config == NULL) return -1;
    fuse_loop_cfg_set_max_threads(config, max_threads);
    if (max_idle_threads > 0) fuse_loop_cfg_set_idle_threads(config, max_idle_threads);
    fuse_loop_cfg_set_clone_fd(config, 0);
    int result = fuse_session_loop_mt(se, config);
    fuse_loop_cfg_destroy(config);
    return result;
}

/* fuse_file_info flags are bitfields. */
static inline void inky_fi_set_keep_cache(struct fuse_file_info *fi, int on) { fi->keep_cache = on ? 1 : 0; }
static inline void inky_fi_set_direct_io(struct fuse_file_info *fi, int on) { fi->direct_io = on ? 1 : 0; }
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
    /* The kernel keeps a link's text as it keeps a file's bytes: a second `ls -lR` of the views
       asks for none of their 100,000s of links again. A link whose text changes is told to the
       kernel by invalidating its node (views, library watcher), or gets a node of its own. */
    if (conn->capable & FUSE_CAP_CACHE_SYMLINKS) conn->want |= FUSE_CAP_CACHE_SYMLINKS;
}

/* Whether an ENOSYS answer to OPENDIR means "open, and stop asking" to this kernel. */
static inline int inky_conn_opendir_optional(const struct fuse_conn_info *conn) {
    return (conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT) != 0;
}
#endif
