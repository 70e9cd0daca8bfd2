#ifndef INKY_JXL_H
#define INKY_JXL_H

/* libjxl's decoder, loaded (dlopen) on first need: only a worker that converts pages meets a
 * JPEG XL to turn back into its JPEG, and linking libjxl cost every worker's start ~4 ms of CPU.
 * The functions InkyImage's JPEGReconstruction calls, under names of their own; each is libjxl's
 * function of the same role. Call inky_jxl_load first: NULL when loaded, else why not. */
#include <jxl/decode.h>

const char *inky_jxl_load(void);

JxlSignature inky_jxl_signature_check(const uint8_t *buf, size_t len);
JxlDecoder *inky_jxl_decoder_create(void);
void inky_jxl_decoder_destroy(JxlDecoder *dec);
JxlDecoderStatus inky_jxl_subscribe_events(JxlDecoder *dec, int events_wanted);
JxlDecoderStatus inky_jxl_set_input(JxlDecoder *dec, const uint8_t *data, size_t size);
void inky_jxl_close_input(JxlDecoder *dec);
JxlDecoderStatus inky_jxl_process_input(JxlDecoder *dec);
JxlDecoderStatus inky_jxl_get_basic_info(const JxlDecoder *dec, JxlBasicInfo *info);
JxlDecoderStatus inky_jxl_set_jpeg_buffer(JxlDecoder *dec, uint8_t *data, size_t size);
size_t inky_jxl_release_jpeg_buffer(JxlDecoder *dec);

#endif
