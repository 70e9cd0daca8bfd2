/* A JPEG page decoded by libjpeg-turbo straight at the scale it is needed: its scaled IDCT
 * shrinks by n/8 while decoding, and for a grayscale profile it decodes the luma channel alone,
 * skipping chroma upsampling and colour conversion. For a 1800x2700 page that is 11 ms for a
 * 600-px cover (libvips' thumbnail: 20 ms) and 25 ms for a 1264x1680 gray page (90 ms), CPU on
 * one core. The pixels become a libvips image that owns them, so the rest of the pipeline (the
 * last small resize, encode) is the usual one. libjpeg reports errors by longjmp: the jump lands
 * in this function, so no Swift frame is ever skipped. */
#include "inky_jpeg_scaled.h"
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <jpeglib.h>


struct inky_jpeg_error {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
    int warned;
};

static void inky_jpeg_error_exit(j_common_ptr info) {
    struct inky_jpeg_error *error = (struct inky_jpeg_error *)info->err;
    (*info->err->format_message)(info, error->message);
    longjmp(error->jump, 1);
}

/* A warning (a truncated file, a corrupt segment) is remembered, not printed: such a page goes
 * the usual way, where libvips' loader (fail_on error) decides, so both paths refuse the same pages. */
static void inky_jpeg_note_warning(j_common_ptr info, int level) {
    if (level < 0) ((struct inky_jpeg_error *)info->err)->warned = 1;
}


/* The small step left after a scaled decode (1688 -> 1680 rows for a 2700-row page into 1680),
 * done here as one bilinear pass in 8-bit fixed point: at a ratio of 0.8 or more each output pixel
 * lies between two source pixels a side, so two taps lose nothing a wider filter would keep, and
 * the pass costs a few ms where libvips' resize costs 11-18 (scripts/bench --only convert). */
static unsigned char *inky_bilinear_shrink(const unsigned char *source, size_t width, size_t height, int bands,
                                                  size_t to_width, size_t to_height) {
    unsigned char *result = malloc(to_width * to_height * bands);
    size_t *left = malloc(to_width * sizeof(size_t));
    unsigned *weight = malloc(to_width * sizeof(unsigned));
    if (!result || !left || !weight) {
        free(result);
        free(left);
        free(weight);
        return NULL;
    }
    for (size_t x = 0; x < to_width; x++) {
        double at = ((double)x + 0.5) * width / to_width - 0.5;
        if (at < 0) at = 0;
        size_t whole = (size_t)at;
        if (whole >= width - 1) { whole = width > 1 ? width - 2 : 0; at = (double)width - 1; }
        left[x] = whole;
        weight[x] = width > 1 ? (unsigned)((at - whole) * 256.0 + 0.5) : 0;
    }
    for (size_t y = 0; y < to_height; y++) {
        double at = ((double)y + 0.5) * height / to_height - 0.5;
        if (at < 0) at = 0;
        size_t top = (size_t)at;
        if (top >= height - 1) { top = height > 1 ? height - 2 : 0; at = (double)height - 1; }
        unsigned down = height > 1 ? (unsigned)((at - top) * 256.0 + 0.5) : 0;
        const unsigned char *upper = source + top * width * bands;
        const unsigned char *lower = height > 1 ? upper + width * bands : upper;
        unsigned char *row = result + y * to_width * bands;
        for (size_t x = 0; x < to_width; x++) {
            size_t a = left[x] * bands, b = width > 1 ? a + bands : a;
            unsigned across = weight[x];
            for (int band = 0; band < bands; band++) {
                unsigned up = upper[a + band] * (256 - across) + upper[b + band] * across;
                unsigned low = lower[a + band] * (256 - across) + lower[b + band] * across;
                row[x * bands + band] = (unsigned char)((up * (256 - down) + low * down + 32768) >> 16);
            }
        }
    }
    free(left);
    free(weight);
    return result;
}

/* 0: `*out` holds the image, one band when `gray` or the JPEG is gray, else three. 1: not for
 * this path (CMYK/YCCK, more than `max_pixels`, a warning), nothing kept. -1: libjpeg failed; `message` says why. */
int inky_jpeg_scaled(const void *bytes, size_t length, long long max_pixels, int fit_width, int fit_height,
                                   int gray, VipsImage **out, char *message, size_t message_size) {
    struct jpeg_decompress_struct info;
    struct inky_jpeg_error error;
    unsigned char *volatile pixels = NULL;
    info.err = jpeg_std_error(&error.manager);
    error.manager.error_exit = inky_jpeg_error_exit;
    error.manager.emit_message = inky_jpeg_note_warning;
    error.message[0] = 0;
    error.warned = 0;
    if (setjmp(error.jump)) {
        jpeg_destroy_decompress(&info);
        free(pixels);
        snprintf(message, message_size, "%s", error.message);
        return -1;
    }
    jpeg_create_decompress(&info);
    jpeg_mem_src(&info, (const unsigned char *)bytes, (unsigned long)length);
    jpeg_read_header(&info, TRUE);
    if ((info.jpeg_color_space != JCS_YCbCr && info.jpeg_color_space != JCS_GRAYSCALE)
        || (long long)info.image_width * (long long)info.image_height > max_pixels) {
        jpeg_destroy_decompress(&info);
        return 1;
    }
    int bands = gray || info.jpeg_color_space == JCS_GRAYSCALE ? 1 : 3;
    info.out_color_space = bands == 1 ? JCS_GRAYSCALE : JCS_RGB;
    /* libjpeg's scaled IDCT shrinks by n/8 while decoding: the smallest n that still covers
     * the box, so what is left for the resize is a small step. */
    double horizontal = (double)fit_width / info.image_width, vertical = (double)fit_height / info.image_height;
    double scale = horizontal < vertical ? horizontal : vertical;
    int eighths = (int)ceil(scale * 8.0);
    info.scale_num = eighths < 1 ? 1 : eighths > 8 ? 8 : eighths;
    info.scale_denom = 8;
    jpeg_start_decompress(&info);
    size_t width = info.output_width, height = info.output_height;
    pixels = malloc(width * height * bands);
    if (!pixels) {
        jpeg_destroy_decompress(&info);
        snprintf(message, message_size, "no memory for %zux%zux%d pixels", width, height, bands);
        return -1;
    }
    while (info.output_scanline < info.output_height) {
        JSAMPROW row = pixels + (size_t)info.output_scanline * width * bands;
        jpeg_read_scanlines(&info, &row, 1);
    }
    jpeg_finish_decompress(&info);
    jpeg_destroy_decompress(&info);
    if (error.warned) {
        free(pixels);
        return 1;
    }
    double left_x = (double)fit_width / width, left_y = (double)fit_height / height;
    double left = left_x < left_y ? left_x : left_y;
    if (left < 1.0 && left >= 0.8) {
        /* The limiting side lands exactly on its bound, the other rounds as libvips would. */
        size_t to_width = left_x < left_y ? (size_t)fit_width : (size_t)lround(width * left);
        size_t to_height = left_x < left_y ? (size_t)lround(height * left) : (size_t)fit_height;
        if (to_width < 1) to_width = 1;
        if (to_height < 1) to_height = 1;
        unsigned char *shrunk = inky_bilinear_shrink(pixels, width, height, bands, to_width, to_height);
        free(pixels);
        pixels = shrunk;
        if (!shrunk) {
            snprintf(message, message_size, "no memory for %zux%zux%d pixels", to_width, to_height, bands);
            return -1;
        }
        width = to_width;
        height = to_height;
    }
    VipsImage *image = inky_vips_take_pixels(pixels, width * height * bands, (int)width, (int)height, bands);
    if (!image) {
        snprintf(message, message_size, "libvips would not take the pixels");
        return -1;
    }
    *out = image;
    return 0;
}

