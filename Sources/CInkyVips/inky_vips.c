#include "inky_vips.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

/* Every libvips, GObject and GLib function called here, found in libvips.so.42 (dlsym on its
 * handle searches the libraries it needs too, GObject and GLib among them). */
#define INKY_VIPS_FUNCTIONS(X) \
    X(vips_init) X(vips_version) X(vips_concurrency_set) X(vips_cache_set_max) X(vips_cache_set_max_mem) \
    X(vips_cache_set_max_files) X(vips_operation_block_set) X(vips_error_buffer) X(vips_error_clear) \
    X(vips_image_new_from_buffer) X(vips_image_new_from_memory) X(vips_thumbnail_buffer) \
    X(vips_thumbnail_image) X(vips_autorot) X(vips_getpoint) X(vips_array_double_new) \
    X(vips_array_double_newv) X(vips_area_unref) X(vips_find_trim) X(vips_extract_area) \
    X(vips_colourspace) X(vips_extract_band) X(vips_cast_uchar) X(vips_image_write_to_memory) \
    X(vips_flatten) X(vips_jpegsave_buffer) X(vips_pngsave_buffer) X(vips_image_set_progress) \
    X(vips_image_get_typeof) X(vips_image_get_string) X(vips_copy) X(vips_resize) \
    X(vips_image_get_orientation) X(vips_image_get_width) X(vips_image_get_height) \
    X(vips_image_get_bands) X(vips_image_hasalpha) X(vips_image_wio_input) \
    X(g_object_unref) X(g_free) X(g_signal_connect_data) X(g_signal_handler_disconnect)

#define INKY_POINTER(name) static __typeof__(&name) p_##name;
INKY_VIPS_FUNCTIONS(INKY_POINTER)

static const char *inky_load_error = "libvips was never loaded";
static pthread_once_t inky_load_once = PTHREAD_ONCE_INIT;

static void inky_vips_resolve(void) {
    void *library = dlopen("libvips.so.42", RTLD_NOW | RTLD_GLOBAL);
    if (!library) {
        inky_load_error = "libvips.so.42 cannot be loaded (is libvips42 installed?)";
        return;
    }
#define INKY_RESOLVE(name) \
    if (!(p_##name = (__typeof__(&name))dlsym(library, #name))) { \
        inky_load_error = "libvips.so.42 lacks " #name; \
        return; \
    }
    INKY_VIPS_FUNCTIONS(INKY_RESOLVE)
    inky_load_error = NULL;
}

const char *inky_vips_load(void) {
    pthread_once(&inky_load_once, inky_vips_resolve);
    return inky_load_error;
}

/* From here on every call goes through the pointers found above: the bodies read as libvips code. */
#define vips_init p_vips_init
#define vips_version p_vips_version
#define vips_concurrency_set p_vips_concurrency_set
#define vips_cache_set_max p_vips_cache_set_max
#define vips_cache_set_max_mem p_vips_cache_set_max_mem
#define vips_cache_set_max_files p_vips_cache_set_max_files
#define vips_operation_block_set p_vips_operation_block_set
#define vips_error_buffer p_vips_error_buffer
#define vips_error_clear p_vips_error_clear
#define vips_image_new_from_buffer p_vips_image_new_from_buffer
#define vips_image_new_from_memory p_vips_image_new_from_memory
#define vips_thumbnail_buffer p_vips_thumbnail_buffer
#define vips_thumbnail_image p_vips_thumbnail_image
#define vips_autorot p_vips_autorot
#define vips_getpoint p_vips_getpoint
#define vips_array_double_new p_vips_array_double_new
#define vips_array_double_newv p_vips_array_double_newv
#define vips_area_unref p_vips_area_unref
#define vips_find_trim p_vips_find_trim
#define vips_extract_area p_vips_extract_area
#define vips_colourspace p_vips_colourspace
#define vips_extract_band p_vips_extract_band
#define vips_cast_uchar p_vips_cast_uchar
#define vips_image_write_to_memory p_vips_image_write_to_memory
#define vips_flatten p_vips_flatten
#define vips_jpegsave_buffer p_vips_jpegsave_buffer
#define vips_pngsave_buffer p_vips_pngsave_buffer
#define vips_image_set_progress p_vips_image_set_progress
#define vips_image_get_typeof p_vips_image_get_typeof
#define vips_image_get_string p_vips_image_get_string
#define vips_copy p_vips_copy
#define vips_resize p_vips_resize
#define vips_image_get_orientation p_vips_image_get_orientation
#define vips_image_get_width p_vips_image_get_width
#define vips_image_get_height p_vips_image_get_height
#define vips_image_get_bands p_vips_image_get_bands
#define vips_image_hasalpha p_vips_image_hasalpha
#define vips_image_wio_input p_vips_image_wio_input
#define g_object_unref p_g_object_unref
#define g_free p_g_free
#define g_signal_connect_data p_g_signal_connect_data
#define g_signal_handler_disconnect p_g_signal_handler_disconnect

int inky_vips_start(void) {
    if (inky_vips_load() != NULL) return -1;
    /* VIPS_INIT's check: the library loaded keeps the ABI these headers describe. */
    if (vips_version(3) - vips_version(5) != VIPS_LIBRARY_CURRENT - VIPS_LIBRARY_AGE) return -1;
    if (vips_init("inkyfs") != 0) return -1;
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

void inky_vips_allow_magick(int allowed) {
    vips_operation_block_set("VipsForeignLoadMagick", allowed ? FALSE : TRUE);
}

const char *inky_vips_error(void) { return inky_vips_load() ? inky_vips_load() : vips_error_buffer(); }

void inky_vips_error_clear(void) {
    if (!inky_vips_load()) vips_error_clear();
}

int inky_vips_header(const void *bytes, size_t length, VipsImage **out) {
    *out = vips_image_new_from_buffer(bytes, length, "", "access", VIPS_ACCESS_SEQUENTIAL,
                                      "fail_on", VIPS_FAIL_ON_ERROR, NULL);
    return *out ? 0 : -1;
}

int inky_vips_thumbnail(const void *bytes, size_t length, int width, int height, VipsImage **out) {
    return vips_thumbnail_buffer((void *)bytes, length, out, width, "height", height,
                                 "size", VIPS_SIZE_DOWN, "option_string", "fail_on=error", NULL);
}

int inky_vips_thumbnail_image(VipsImage *in, int width, int height, VipsImage **out) {
    return vips_thumbnail_image(in, out, width, "height", height, "size", VIPS_SIZE_DOWN, NULL);
}

int inky_vips_load_upright(const void *bytes, size_t length, VipsImage **out) {
    VipsImage *loaded = vips_image_new_from_buffer(bytes, length, "", "fail_on", VIPS_FAIL_ON_ERROR, NULL);
    if (!loaded) return -1;
    int status = vips_autorot(loaded, out, NULL);
    g_object_unref(loaded);
    return status;
}

int inky_vips_find_trim(VipsImage *in, double threshold, int *left, int *top, int *width, int *height) {
    double *corner = NULL;
    int bands = 0;
    if (vips_getpoint(in, &corner, &bands, 0, 0, NULL) != 0) return -1;
    VipsArrayDouble *background = vips_array_double_new(corner, bands);
    g_free(corner);
    int status = vips_find_trim(in, left, top, width, height, "threshold", threshold, "background", background, NULL);
    vips_area_unref(VIPS_AREA(background));
    return status;
}

int inky_vips_extract(VipsImage *in, int left, int top, int width, int height, VipsImage **out) {
    return vips_extract_area(in, out, left, top, width, height, NULL);
}

int inky_vips_gray_rows(VipsImage *in, int top, int height, void **bytes, size_t *length) {
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

int inky_vips_grayscale(VipsImage *in, VipsImage **out) {
    return vips_colourspace(in, out, VIPS_INTERPRETATION_B_W, NULL);
}

int inky_vips_flatten_white(VipsImage *in, VipsImage **out) {
    VipsArrayDouble *white = vips_array_double_newv(1, 255.0);
    int status = vips_flatten(in, out, "background", white, NULL);
    vips_area_unref(VIPS_AREA(white));
    return status;
}

int inky_vips_jpeg(VipsImage *in, int quality, void **bytes, size_t *length) {
    return vips_jpegsave_buffer(in, bytes, length, "Q", quality, "strip", TRUE, NULL);
}

int inky_vips_png(VipsImage *in, void **bytes, size_t *length) {
    return vips_pngsave_buffer(in, bytes, length, "compression", 6, "strip", TRUE, NULL);
}

gulong inky_vips_watch(VipsImage *image, inky_vips_tick tick, void *context) {
    vips_image_set_progress(image, TRUE);
    return g_signal_connect(image, "eval", G_CALLBACK(tick), context);
}

void inky_vips_unwatch(VipsImage *image, gulong handler) {
    g_signal_handler_disconnect(image, handler);
}

const char *inky_vips_loader(VipsImage *image) {
    const char *name = NULL;
    if (vips_image_get_typeof(image, "vips-loader") && vips_image_get_string(image, "vips-loader", &name) == 0) return name;
    return "";
}

int inky_vips_has_palette(VipsImage *image) {
    return vips_image_get_typeof(image, "palette-bit-depth") != 0;
}

void inky_vips_unref(VipsImage *image) { g_object_unref(image); }

void inky_vips_free(void *bytes) { g_free(bytes); }

int inky_vips_resize_within(VipsImage *in, int width, int height, VipsImage **out) {
    double horizontal = (double)width / in->Xsize, vertical = (double)height / in->Ysize;
    double scale = horizontal < vertical ? horizontal : vertical;
    if (scale >= 1.0) return vips_copy(in, out, NULL);
    return vips_resize(in, out, scale, NULL);
}

int inky_vips_orientation(VipsImage *image) { return vips_image_get_orientation(image); }
int inky_vips_width(VipsImage *image) { return vips_image_get_width(image); }
int inky_vips_height(VipsImage *image) { return vips_image_get_height(image); }
int inky_vips_bands(VipsImage *image) { return vips_image_get_bands(image); }
int inky_vips_has_alpha(VipsImage *image) { return vips_image_hasalpha(image) ? 1 : 0; }
int inky_vips_wio_input(VipsImage *image) { return vips_image_wio_input(image); }

static void inky_vips_free_pixels(VipsImage *image, void *pixels) { (void)image; free(pixels); }

VipsImage *inky_vips_take_pixels(void *pixels, size_t length, int width, int height, int bands) {
    VipsImage *image = vips_image_new_from_memory(pixels, length, width, height, bands, VIPS_FORMAT_UCHAR);
    if (!image) {
        free(pixels);
        return NULL;
    }
    image->Type = bands == 1 ? VIPS_INTERPRETATION_B_W : VIPS_INTERPRETATION_sRGB;
    g_signal_connect(image, "postclose", G_CALLBACK(inky_vips_free_pixels), pixels);
    return image;
}
