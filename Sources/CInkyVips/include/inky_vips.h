#ifndef INKY_VIPS_H
#define INKY_VIPS_H
#include <stddef.h>
#include <vips/vips.h>

/* libvips, loaded only by the processes that convert pages. It maps about a hundred shared
 * libraries, and Debian binds most of them at load: linked in, it made every worker start
 * cost about 20 ms of CPU, a worker that only lists and serves pages as they are too. So the
 * worker links none of it: `inky_vips_load` opens libvips.so.42 and finds each function used
 * here, and everything else calls libvips only through the functions below.
 *
 * libvips takes its options as NULL-terminated varargs, which Swift cannot call: each operation
 * InkyImage uses gets a fixed-argument wrapper here. Every function returns 0 on success and -1
 * with the reason in vips_error_buffer() (`inky_vips_error`). */

/* Loads libvips and every function these wrappers call. NULL when it is ready (again: it loads
 * once), else why not, in static text. Call before any other function here. */
const char *inky_vips_load(void);

/* Starts libvips once, before the worker's seccomp filter (it loads its format modules).
 * One thread per pipeline, no operation cache, and only the loaders of page formats: every
 * other one (ImageMagick, SVG, PDF, FITS, Matlab, OpenSlide, CSV, raw...) is blocked. libvips
 * calls JPEG 2000 and JPEG XL "untrusted" too, so its own switch would refuse pages we need. */
int inky_vips_start(void);

/* Only a BMP (which libvips reads through ImageMagick alone) may use ImageMagick, for one call. */
void inky_vips_allow_magick(int allowed);

/* libvips' error text so far (process-wide, grows until cleared), and clearing it. */
const char *inky_vips_error(void);
void inky_vips_error_clear(void);

/* Reads only the header: width, height and bands are known without decoding a pixel. */
int inky_vips_header(const void *bytes, size_t length, VipsImage **out);

/* Decodes at the smallest scale the loader offers for a result within width x height
 * (shrink-on-load), then resizes down only; never enlarges. */
int inky_vips_thumbnail(const void *bytes, size_t length, int width, int height, VipsImage **out);

/* The same from an image already loaded, for loaders whose shrink-on-load is wrong: libvips
 * 8.14.1 thumbnails JPEG 2000 at a sixteenth of the size asked. */
int inky_vips_thumbnail_image(VipsImage *in, int width, int height, VipsImage **out);

/* The whole image decoded and turned upright (EXIF orientation), as thumbnail does: for cuts
 * (crop, spread halves, strips) that need its pixels more than once. */
int inky_vips_load_upright(const void *bytes, size_t length, VipsImage **out);

/* The box inside uniform borders: the background is the top-left pixel's colour, and a pixel
 * differs from it when any band differs by more than `threshold`. */
int inky_vips_find_trim(VipsImage *in, double threshold, int *left, int *top, int *width, int *height);

int inky_vips_extract(VipsImage *in, int left, int top, int width, int height, VipsImage **out);

/* Rows top..top+height of the image as one byte of gray per pixel, for finding blank rows. */
int inky_vips_gray_rows(VipsImage *in, int top, int height, void **bytes, size_t *length);

int inky_vips_grayscale(VipsImage *in, VipsImage **out);

/* JPEG has no alpha: a transparent image is laid on white first. */
int inky_vips_flatten_white(VipsImage *in, VipsImage **out);

int inky_vips_jpeg(VipsImage *in, int quality, void **bytes, size_t *length);
int inky_vips_png(VipsImage *in, void **bytes, size_t *length);

/* Calls `tick` with `context` as libvips computes `image` (decode, resize, encode all happen
 * while a saver pulls its pixels), so a long conversion can say it is alive. Returns the
 * handler, for `inky_vips_unwatch` once `context` is gone (an image encoded again would
 * otherwise call `tick` with it). */
typedef void (*inky_vips_tick)(VipsImage *image, VipsProgress *progress, void *context);
gulong inky_vips_watch(VipsImage *image, inky_vips_tick tick, void *context);
void inky_vips_unwatch(VipsImage *image, gulong handler);

/* The loader that read `image` ("jpegload_buffer", ...), or "". */
const char *inky_vips_loader(VipsImage *image);
int inky_vips_has_palette(VipsImage *image);

void inky_vips_unref(VipsImage *image);
/* Frees what libvips allocated for the caller (encoded bytes, pixel rows). */
void inky_vips_free(void *bytes);

/* Shrinks what `inky_jpeg_scaled` left to fit width x height (never enlarges), with vips_resize's
 * Lanczos 3 alone (vips_thumbnail_image takes more steps). A step of 0.8 or more was already
 * taken by the decode's bilinear pass, so what comes here is either inside the box (copied) or
 * a larger step (a box at most half the page, where the n/8 steps are coarse). Rounding keeps the result
 * inside the box: the limiting side is scaled to exactly its bound. */
int inky_vips_resize_within(VipsImage *in, int width, int height, VipsImage **out);

/* EXIF orientation: libvips' thumbnail turns the page upright, libjpeg alone would not. */
int inky_vips_orientation(VipsImage *image);

int inky_vips_width(VipsImage *image);
int inky_vips_height(VipsImage *image);
int inky_vips_bands(VipsImage *image);
int inky_vips_has_alpha(VipsImage *image);
/* Makes `image` readable as memory (decodes it whole): 0, or -1. */
int inky_vips_wio_input(VipsImage *image);

/* An image over `pixels` (width x height x bands bytes, uchar, from malloc), gray for one band
 * and sRGB else, which frees them when it closes; NULL (the pixels freed) when libvips refuses. */
VipsImage *inky_vips_take_pixels(void *pixels, size_t length, int width, int height, int bands);
#endif
