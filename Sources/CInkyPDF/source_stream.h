#ifndef INKYFS_CMUPDF_SOURCE_STREAM_H
#define INKYFS_CMUPDF_SOURCE_STREAM_H
/* A MuPDF stream over bytes that are no plain file (a vault object decrypted chunk by chunk):
   every refill asks the caller's read function for the bytes at an offset, so MuPDF seeks and
   reads at random without the whole document in memory or on disk. */
#include <mupdf/fitz.h>
#include "inky_pdf.h"

/* A seekable stream of `size` bytes read through `read(source, ...)`. Throws like any MuPDF
   allocation; the stream's buffer is zeroed when the stream is dropped. */
fz_stream *inky_source_stream_new(fz_context *ctx, void *source, inky_pdf_read_fn read, int64_t size);

#endif
