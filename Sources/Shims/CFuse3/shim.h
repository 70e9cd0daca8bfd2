#ifndef INKY_CFUSE3_SHIM_H
#define INKY_CFUSE3_SHIM_H
#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <fuse.h>

static inline const char *inky_fuse_version_string(void) { return fuse_pkgversion(); }
static inline int inky_fuse_version(void) { return fuse_version(); }
#endif
