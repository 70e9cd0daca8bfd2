#ifndef INKY_CVIPS_SHIM_H
#define INKY_CVIPS_SHIM_H
#include <vips/vips.h>

/* libvips takes its options as NULL-terminated varargs, which Swift cannot call: each
 * operation InkyImage uses gets a fixed-argument wrapper here. Every function returns 0 on
 * success and -1 with the reason in vips_error_buffer(). */

/* Starts libvips once, before the worker's seccomp filter (it loads its format modules).
 * One thread per pipeline, no operation cache, and only the loaders of page formats: every
 * other one (ImageMagick, SVG, PDF, FITS, Matlab, OpenSlide, CSV, raw...) is blocked. libvips
 * calls JPEG 2000 and JPEG XL "untrusted" too, so its own switch would refuse pages we need. */
static inline int inky_vips_start(void) {
    if (VIPS_INIT("inkyfs") != 0) return -1;
    vips_concurrency_set(1);
    vips_cache_set_max(0);
    vips_cache_set_max_mem(0);
    vips_cache_set_max_files(0);
    vips_operation_block_set("VipsForeignLoad", TRUE);
    static const char *const pages[] = {
        "VipsForeignLoadJpeg", "VipsForeignLoadPng", "VipsForeignLoadWebp", "VipsForeignLoadTiff",
        "VipsForeignLoadNsgif", "VipsForeignLoadJp2k", "VipsForeignLoadJxl", "VipsForeignLoadHeif",
    };
    for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++) vips_operation_block_set(pages[i], FALSE);
    return 0;
}

/* Only a BMP (which libvips reads through ImageMagick alone) may use ImageMagick, for one call. */
static inline void inky_vips_allow_magick(int allowed) {
    vips_operation_block_set("VipsForeignLoadMagick", allowed ? FALSE : TRUE);
}

/* Reads only the header: width, height and bands are known without decoding a pixel. */
static inline int inky_vips_header(const void *bytes, size_t length, VipsImage **out) {
    *out = vips_image_new_from_buffer(bytes, length, "", "access", VIPS_ACCESS_SEQUENTIAL,
                                      "fail_on", VIPS_FAIL_ON_ERROR, NULL);
    return *out ? 0 : -1;
}

/* Decodes at the smallest scale the loader offers for a result within width x height
 * (shrink-on-load), then resizes down only; never enlarges. */
static inline int inky_vips_thumbnail(const void *bytes, size_t length, int width, int height, VipsImage **out) {
    return vips_thumbnail_buffer((void *)bytes, length, out, width, "height", height,
                                 "size", VIPS_SIZE_DOWN, "option_string", "fail_on=error", NULL);
}

/* The same from an image already loaded, for loaders whose shrink-on-load is wrong: libvips
 * 8.14.1 thumbnails JPEG 2000 at a sixteenth of the size asked. */
static inline int inky_vips_thumbnail_image(VipsImage *in, int width, int height, VipsImage **out) {
    return vips_thumbnail_image(in, out, width, "height", height, "size", VIPS_SIZE_DOWN, NULL);
}

/* The whole image decoded and turned upright (EXIF orientation), as thumbnail does: for cuts
 * (crop, spread halves, strips) that need its pixels more than once. */
static inline int inky_vips_load_upright(const void *bytes, size_t length, VipsImage **out) {
    VipsImage *loaded = vips_image_new_from_buffer(bytes, length, "", "fail_on", VIPS_FAIL_ON_ERROR, NULL);
    if (!loaded) return -1;
    int status = vips_autorot(loaded, out, NULL);
    g_object_unref(loaded);
    return status;
}

/* The box inside uniform borders: the background is the top-left pixel's colour, and a pixel
 * differs from it when any band differs by more than `threshold`. */
static inline int inky_vips_find_trim(VipsImage *in, double threshold, int *left, int *top, int *width, int *height) {
    double *corner = NULL;
    int bands = 0;
    if (vips_getpoint(in, &corner, &bands, 0, 0, NULL) != 0) return -1;
    VipsArrayDouble *background = vips_array_double_new(corner, bands);
    g_free(corner);
    int status = vips_find_trim(in, left, top, width, height, "threshold", threshold, "background", background, NULL);
    vips_area_unref(VIPS_AREA(background));
    return status;
}

static inline int inky_vips_extract(VipsImage *in, int left, int top, int width, int height, VipsImage **out) {
    return vips_extract_area(in, out, left, top, width, height, NULL);
}

/* Rows top..top+height of the image as one byte of gray per pixel, for finding blank rows. */
static inline int inky_vips_gray_rows(VipsImage *in, int top, int height, void **bytes, size_t *length) {
    VipsImage *gray = NULL, *band = NULL, *small = NULL, *rows = NULL;
    int status = -1;
    if (vips_colourspace(in, &gray, VIPS_INTERPRETATION_B_W, NULL) == 0
        && vips_extract_band(gray, &band, 0, NULL) == 0
        && vips_cast_uchar(band, &small, NULL) == 0
        && vips_extract_area(small, &rows, 0, top, vips_image_get_width(small), height, NULL) == 0) {
        *bytes = vips_image_write_to_memory(rows, length);
        status = *bytes ? 0 : -1;
    }
    if (rows) g_object_unref(rows);
    if (small) g_object_unref(small);
    if (band) g_object_unref(band);
    if (gray) g_object_unref(gray);
    return status;
}

static inline int inky_vips_grayscale(VipsImage *in, VipsImage **out) {
    return vips_colourspace(in, out, VIPS_INTERPRETATION_B_W, NULL);
}

/* JPEG has no alpha: a transparent image is laid on white first. */
static inline int inky_vips_flatten_white(VipsImage *in, VipsImage **out) {
    VipsArrayDouble *white = vips_array_double_newv(1, 255.0);
    int status = vips_flatten(in, out, "background", white, NULL);
    vips_area_unref(VIPS_AREA(white));
    return status;
}

static inline int inky_vips_jpeg(VipsImage *in, int quality, void **bytes, size_t *length) {
    return vips_jpegsave_buffer(in, bytes, length, "Q", quality, "strip", TRUE, NULL);
}

static inline int inky_vips_png(VipsImage *in, void **bytes, size_t *length) {
    return vips_pngsave_buffer(in, bytes, length, "compression", 6, "strip", TRUE, NULL);
}

/* Calls `tick` with `context` as libvips computes `image` (decode, resize, encode all happen
 * while a saver pulls its pixels), so a long conversion can say it is alive. Returns the
 * handler, for `inky_vips_unwatch` once `context` is gone (an image encoded again would
 * otherwise call `tick` with it). */
typedef void (*inky_vips_tick)(VipsImage *image, VipsProgress *progress, void *context);
static inline gulong inky_vips_watch(VipsImage *image, inky_vips_tick tick, void *context) {
    vips_image_set_progress(image, TRUE);
    return g_signal_connect(image, "eval", G_CALLBACK(tick), context);
}

static inline void inky_vips_unwatch(VipsImage *image, gulong handler) {
    g_signal_handler_disconnect(image, handler);
}

static inline const char *inky_vips_loader(VipsImage *image) {
    const char *name = NULL;
    if (vips_image_get_typeof(image, "vips-loader") && vips_image_get_string(image, "vips-loader", &name) == 0) return name;
    return "";
}

static inline int inky_vips_has_palette(VipsImage *image) {
    return vips_image_get_typeof(image, "palette-bit-depth") != 0;
}

static inline void inky_vips_unref(VipsImage *image) { g_object_unref(image); }
/* Shrinks what `inky_jpeg_scaled` left to fit width x height (never enlarges), with vips_resize's
 * Lanczos 3 alone (vips_thumbnail_image takes more steps). A step of 0.8 or more was already
 * taken by the decode's bilinear pass, so what comes here is either inside the box (copied) or
 * a larger step (a box at most half the page, where the n/8 steps are coarse). Rounding keeps the result
 * inside the box: the limiting side is scaled to exactly its bound. */
static inline int inky_vips_resize_within(VipsImage *in, int width, int height, VipsImage **out) {
    double horizontal = (double)width / in->Xsize, vertical = (double)height / in->Ysize;
    double scale = horizontal < vertical ? horizontal : vertical;
    if (scale >= 1.0) return vips_copy(in, out, NULL);
    return vips_resize(in, out, scale, NULL);
}

/* EXIF orientation: libvips' thumbnail turns the page upright, libjpeg alone would not. */
static inline int inky_vips_orientation(VipsImage *image) { return vips_image_get_orientation(image); }

#endif
