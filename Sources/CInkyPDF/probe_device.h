#ifndef INKYFS_CMUPDF_PROBE_DEVICE_H
#define INKYFS_CMUPDF_PROBE_DEVICE_H
/* A MuPDF device that draws nothing and counts what a page draws,
   to tell a page that is exactly one image from one that must be rendered. */
#include <mupdf/fitz.h>

/// A device that only watches: it counts images and everything else a page draws.
typedef struct {
    fz_device base;
    int images;
    int others;
    int image_width, image_height;
    fz_matrix ctm;
    float alpha;
} inky_probe_device;

/* A device that draws nothing and counts what a page draws (inky_probe_device). */
fz_device *inky_probe_new(fz_context *ctx);

#endif
