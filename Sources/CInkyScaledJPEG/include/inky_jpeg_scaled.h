#ifndef INKY_JPEG_SCALED_H
#define INKY_JPEG_SCALED_H
#include <stddef.h>
#include <inky_vips.h>

/* A JPEG page decoded by libjpeg-turbo at the scale it is needed (jpeg_scaled.c says how).
 * 0: `*out` holds the image, one band when `gray` or the JPEG is gray, else three. 1: not for
 * this path (CMYK/YCCK, more than `max_pixels`, a warning), nothing kept. -1: libjpeg failed; `message` says why. */
int inky_jpeg_scaled(const void *bytes, size_t length, long long max_pixels, int fit_width, int fit_height,
                     int gray, VipsImage **out, char *message, size_t message_size);
#endif
