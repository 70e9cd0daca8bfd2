#include "inky_jxl.h"

#include <dlfcn.h>
#include <jxl/version.h>
#include <pthread.h>

/* The library of the headers built against: libjxl.so.0.MINOR while its major version is 0
 * (each 0.x is its own soname), libjxl.so.MAJOR after. */
#define INKY_TEXT(x) #x
#define INKY_NUMBER(x) INKY_TEXT(x)
#if JPEGXL_MAJOR_VERSION == 0
#define INKY_JXL_SONAME "libjxl.so.0." INKY_NUMBER(JPEGXL_MINOR_VERSION)
#else
#define INKY_JXL_SONAME "libjxl.so." INKY_NUMBER(JPEGXL_MAJOR_VERSION)
#endif

#define INKY_JXL_FUNCTIONS(X) \
    X(JxlSignatureCheck) X(JxlDecoderCreate) X(JxlDecoderDestroy) X(JxlDecoderSubscribeEvents) \
    X(JxlDecoderSetInput) X(JxlDecoderCloseInput) X(JxlDecoderProcessInput) X(JxlDecoderGetBasicInfo) \
    X(JxlDecoderSetJPEGBuffer) X(JxlDecoderReleaseJPEGBuffer)

#define INKY_POINTER(name) static __typeof__(&name) p_##name;
INKY_JXL_FUNCTIONS(INKY_POINTER)

static const char *inky_load_error = "libjxl was never loaded";
static pthread_once_t inky_load_once = PTHREAD_ONCE_INIT;

static void inky_jxl_resolve(void) {
    void *library = dlopen(INKY_JXL_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        inky_load_error = INKY_JXL_SONAME " cannot be loaded (is libjxl installed?)";
        return;
    }
#define INKY_RESOLVE(name) \
    if (!(p_##name = (__typeof__(&name))dlsym(library, #name))) { \
        inky_load_error = INKY_JXL_SONAME " lacks " #name; \
        return; \
    }
    INKY_JXL_FUNCTIONS(INKY_RESOLVE)
    inky_load_error = NULL;
}

const char *inky_jxl_load(void) {
    pthread_once(&inky_load_once, inky_jxl_resolve);
    return inky_load_error;
}

JxlSignature inky_jxl_signature_check(const uint8_t *buf, size_t len) { return p_JxlSignatureCheck(buf, len); }
JxlDecoder *inky_jxl_decoder_create(void) { return p_JxlDecoderCreate(NULL); }
void inky_jxl_decoder_destroy(JxlDecoder *dec) { p_JxlDecoderDestroy(dec); }
JxlDecoderStatus inky_jxl_subscribe_events(JxlDecoder *dec, int events_wanted) {
    return p_JxlDecoderSubscribeEvents(dec, events_wanted);
}
JxlDecoderStatus inky_jxl_set_input(JxlDecoder *dec, const uint8_t *data, size_t size) {
    return p_JxlDecoderSetInput(dec, data, size);
}
void inky_jxl_close_input(JxlDecoder *dec) { p_JxlDecoderCloseInput(dec); }
JxlDecoderStatus inky_jxl_process_input(JxlDecoder *dec) { return p_JxlDecoderProcessInput(dec); }
JxlDecoderStatus inky_jxl_get_basic_info(const JxlDecoder *dec, JxlBasicInfo *info) {
    return p_JxlDecoderGetBasicInfo(dec, info);
}
JxlDecoderStatus inky_jxl_set_jpeg_buffer(JxlDecoder *dec, uint8_t *data, size_t size) {
    return p_JxlDecoderSetJPEGBuffer(dec, data, size);
}
size_t inky_jxl_release_jpeg_buffer(JxlDecoder *dec) { return p_JxlDecoderReleaseJPEGBuffer(dec); }
