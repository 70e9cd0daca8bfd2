#ifndef INKY_CLZMA_SHIM_H
#define INKY_CLZMA_SHIM_H
#include <lzma.h>

/* liblzma's filter IDs and LZMA_STREAM_INIT are macros, which Swift does not import. */
static inline lzma_vli inky_lzma_vli_unknown(void) { return LZMA_VLI_UNKNOWN; }
static inline lzma_vli inky_lzma_filter_lzma1(void) { return LZMA_FILTER_LZMA1; }
static inline lzma_vli inky_lzma_filter_lzma1ext(void) { return LZMA_FILTER_LZMA1EXT; }
static inline uint32_t inky_lzma_lzma1ext_allow_eopm(void) { return LZMA_LZMA1EXT_ALLOW_EOPM; }
static inline lzma_vli inky_lzma_filter_lzma2(void) { return LZMA_FILTER_LZMA2; }
static inline lzma_vli inky_lzma_filter_delta(void) { return LZMA_FILTER_DELTA; }
static inline lzma_vli inky_lzma_filter_x86(void) { return LZMA_FILTER_X86; }
static inline lzma_vli inky_lzma_filter_powerpc(void) { return LZMA_FILTER_POWERPC; }
static inline lzma_vli inky_lzma_filter_ia64(void) { return LZMA_FILTER_IA64; }
static inline lzma_vli inky_lzma_filter_arm(void) { return LZMA_FILTER_ARM; }
static inline lzma_vli inky_lzma_filter_armthumb(void) { return LZMA_FILTER_ARMTHUMB; }
static inline lzma_vli inky_lzma_filter_sparc(void) { return LZMA_FILTER_SPARC; }
static inline lzma_stream inky_lzma_stream_init(void) { lzma_stream strm = LZMA_STREAM_INIT; return strm; }
#endif
