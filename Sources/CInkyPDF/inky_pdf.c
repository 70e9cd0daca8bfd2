#include "inky_pdf.h"
#include "source_stream.h"

#include <mupdf/fitz.h>
#include <mupdf/pdf.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct inky_pdf {
    fz_context *ctx;
    pdf_document *doc;
};

static void inky_pdf_quiet(void *user, const char *message) { (void)user; (void)message; }

static void inky_pdf_set_error(fz_context *ctx, char *err, size_t err_len) {
    snprintf(err, err_len, "%s", fz_caught_message(ctx));
}

/// Opens a PDF from a file (`path`) or else from a source stream (`source`, `read`, `size`).
/// `store_bytes` bounds MuPDF's resource cache. On INKY_PDF_NEEDS_PASSWORD the document is
/// closed: an empty user password (owner-only restrictions) opens normally.
static int inky_pdf_open_any(const char *path, void *source, inky_pdf_read_fn read, int64_t size, size_t store_bytes,
                             inky_pdf **out, char *err, size_t err_len) {
    *out = NULL;
    fz_context *ctx = fz_new_context(NULL, NULL, store_bytes);
    if (!ctx) {
        snprintf(err, err_len, "cannot create a MuPDF context (out of memory)");
        return INKY_PDF_ERROR;
    }
    fz_set_warning_callback(ctx, inky_pdf_quiet, NULL);
    fz_set_error_callback(ctx, inky_pdf_quiet, NULL);
    pdf_document *doc = NULL;
    fz_stream *stream = NULL;
    int code = INKY_PDF_OK;
    fz_var(doc);
    fz_var(stream);
    fz_var(code);
    fz_try(ctx) {
        if (path) {
            doc = pdf_open_document(ctx, path);
        } else {
            stream = inky_source_stream_new(ctx, source, read, size);
            doc = pdf_open_document_with_stream(ctx, stream);
        }
        if (pdf_needs_password(ctx, doc)) code = INKY_PDF_NEEDS_PASSWORD;
    }
    // The document keeps its own reference to the stream.
    fz_always(ctx) { fz_drop_stream(ctx, stream); }
    fz_catch(ctx) {
        inky_pdf_set_error(ctx, err, err_len);
        code = INKY_PDF_ERROR;
    }
    if (code == INKY_PDF_OK) {
        inky_pdf *pdf = malloc(sizeof *pdf);
        if (pdf) {
            pdf->ctx = ctx;
            pdf->doc = doc;
            *out = pdf;
            return INKY_PDF_OK;
        }
        snprintf(err, err_len, "out of memory");
        code = INKY_PDF_ERROR;
    }
    pdf_drop_document(ctx, doc);
    fz_drop_context(ctx);
    return code;
}

int inky_pdf_open(const char *path, size_t store_bytes, inky_pdf **out, char *err, size_t err_len) {
    return inky_pdf_open_any(path, NULL, NULL, 0, store_bytes, out, err, err_len);
}

int inky_pdf_open_source(void *source, inky_pdf_read_fn read, int64_t size, size_t store_bytes,
                         inky_pdf **out, char *err, size_t err_len) {
    return inky_pdf_open_any(NULL, source, read, size, store_bytes, out, err, err_len);
}

void inky_pdf_close(inky_pdf *pdf) {
    if (!pdf) return;
    pdf_drop_document(pdf->ctx, pdf->doc);
    fz_drop_context(pdf->ctx);
    free(pdf);
}

int inky_pdf_page_count(inky_pdf *pdf, int *count, char *err, size_t err_len) {
    int code = INKY_PDF_OK;
    fz_var(code);
    fz_try(pdf->ctx) { *count = pdf_count_pages(pdf->ctx, pdf->doc); }
    fz_catch(pdf->ctx) {
        inky_pdf_set_error(pdf->ctx, err, err_len);
        code = INKY_PDF_ERROR;
    }
    return code;
}

// MARK: - Which pages are exactly one image

#include "probe_device.h"

/// True when the image fills the page exactly, upright and unmirrored: then its own pixels
/// are the page as a reader sees it.
static int inky_pdf_covers(fz_matrix ctm, fz_rect page) {
    if (fabsf(ctm.b) > 1e-3f || fabsf(ctm.c) > 1e-3f || ctm.a <= 0 || ctm.d <= 0) return 0;
    fz_rect placed = fz_transform_rect(fz_unit_rect, ctm);
    float slack_x = fmaxf(1.0f, (page.x1 - page.x0) * 0.002f);
    float slack_y = fmaxf(1.0f, (page.y1 - page.y0) * 0.002f);
    return fabsf(placed.x0 - page.x0) <= slack_x && fabsf(placed.x1 - page.x1) <= slack_x
        && fabsf(placed.y0 - page.y0) <= slack_y && fabsf(placed.y1 - page.y1) <= slack_y;
}

/// The only image XObject in the page's resources, or NULL when there are none or several.
static pdf_obj *inky_pdf_single_image(fz_context *ctx, pdf_obj *page_obj) {
    pdf_obj *resources = pdf_dict_get_inheritable(ctx, page_obj, PDF_NAME(Resources));
    pdf_obj *xobjects = pdf_dict_get(ctx, resources, PDF_NAME(XObject));
    pdf_obj *found = NULL;
    int count = pdf_dict_len(ctx, xobjects);
    for (int i = 0; i < count; i++) {
        pdf_obj *value = pdf_dict_get_val(ctx, xobjects, i);
        if (!pdf_name_eq(ctx, pdf_dict_get(ctx, value, PDF_NAME(Subtype)), PDF_NAME(Image))) continue;
        if (found) return NULL;
        found = value;
    }
    return found;
}

/// The one filter of a stream (a name or a one-element array), NULL for none or a chain.
static pdf_obj *inky_pdf_single_filter(fz_context *ctx, pdf_obj *image, pdf_obj **parms) {
    pdf_obj *filter = pdf_dict_get(ctx, image, PDF_NAME(Filter));
    pdf_obj *decode_parms = pdf_dict_get(ctx, image, PDF_NAME(DecodeParms));
    if (pdf_is_array(ctx, filter)) {
        if (pdf_array_len(ctx, filter) != 1) return NULL;
        filter = pdf_array_get(ctx, filter, 0);
        if (pdf_is_array(ctx, decode_parms)) decode_parms = pdf_array_get(ctx, decode_parms, 0);
    }
    *parms = decode_parms;
    return pdf_is_name(ctx, filter) ? filter : NULL;
}

/// The common scanned page, read from its few content bytes without loading the image: the
/// content only places one image XObject (q, cm, Do, Q), and the page has no annotations and no
/// rotation. Returns the image's dictionary and its matrix in PDF space, or NULL for any other
/// page (the device below decides then). Never throws.
static pdf_obj *inky_pdf_plain_image_page(fz_context *ctx, pdf_document *doc, pdf_obj *page_obj, fz_matrix *placed) {
    pdf_obj *volatile image = NULL;
    fz_stream *stream = NULL;
    pdf_lexbuf buffer;
    pdf_lexbuf_init(ctx, &buffer, PDF_LEXBUF_SMALL);
    fz_var(stream);
    fz_try(ctx) {
        if (pdf_array_len(ctx, pdf_dict_get(ctx, page_obj, PDF_NAME(Annots))) > 0
            || pdf_to_int(ctx, pdf_dict_get_inheritable(ctx, page_obj, PDF_NAME(Rotate))) % 360 != 0)
            fz_throw(ctx, FZ_ERROR_GENERIC, "not plain");
        pdf_obj *resources = pdf_dict_get_inheritable(ctx, page_obj, PDF_NAME(Resources));
        pdf_obj *xobjects = pdf_dict_get(ctx, resources, PDF_NAME(XObject));
        stream = pdf_open_contents_stream(ctx, doc, pdf_dict_get(ctx, page_obj, PDF_NAME(Contents)));
        float numbers[6];
        int count = 0, depth = 0, draws = 0;
        fz_matrix ctm = fz_identity, saved[16];
        pdf_obj *named = NULL;
        for (;;) {
            pdf_token token = pdf_lex(ctx, stream, &buffer);
            if (token == PDF_TOK_EOF) break;
            if ((token == PDF_TOK_INT || token == PDF_TOK_REAL) && count < 6 && !named) {
                numbers[count++] = token == PDF_TOK_INT ? (float)buffer.i : buffer.f;
            } else if (token == PDF_TOK_NAME && !named && count == 0) {
                named = pdf_dict_gets(ctx, xobjects, buffer.scratch);
                if (!named) fz_throw(ctx, FZ_ERROR_GENERIC, "not plain");
            } else if (token != PDF_TOK_KEYWORD) {
                fz_throw(ctx, FZ_ERROR_GENERIC, "not plain");
            } else if (!strcmp(buffer.scratch, "q") && count == 0 && !named && depth < 16) {
                saved[depth++] = ctm;
            } else if (!strcmp(buffer.scratch, "Q") && count == 0 && !named && depth > 0) {
                ctm = saved[--depth];
            } else if (!strcmp(buffer.scratch, "cm") && count == 6 && !named) {
                ctm = fz_concat(fz_make_matrix(numbers[0], numbers[1], numbers[2], numbers[3], numbers[4], numbers[5]), ctm);
                count = 0;
            } else if (!strcmp(buffer.scratch, "Do") && named && count == 0 && draws == 0) {
                image = named;
                *placed = ctm;
                named = NULL;
                draws = 1;
            } else {
                fz_throw(ctx, FZ_ERROR_GENERIC, "not plain");
            }
        }
        if (!image || count || named
            || !pdf_name_eq(ctx, pdf_dict_get(ctx, image, PDF_NAME(Subtype)), PDF_NAME(Image))
            || pdf_dict_get(ctx, image, PDF_NAME(OC)))
            image = NULL;
    }
    fz_always(ctx) {
        fz_drop_stream(ctx, stream);
        pdf_lexbuf_fin(ctx, &buffer);
    }
    fz_catch(ctx) { image = NULL; }
    return image;
}

/// The visible page box in PDF space: the CropBox within the MediaBox.
static fz_rect inky_pdf_page_box(fz_context *ctx, pdf_obj *page_obj) {
    fz_rect media = pdf_to_rect(ctx, pdf_dict_get_inheritable(ctx, page_obj, PDF_NAME(MediaBox)));
    pdf_obj *crop = pdf_dict_get_inheritable(ctx, page_obj, PDF_NAME(CropBox));
    return crop ? fz_intersect_rect(pdf_to_rect(ctx, crop), media) : media;
}

/// Decides how the image's stream can be served as a file of its own, or INKY_PDF_PAGE_RENDER.
static int inky_pdf_image_kind(fz_context *ctx, pdf_obj *image, inky_pdf_page *info) {
    // Anything that changes the pixels after decoding makes the stream differ from the page.
    if (pdf_dict_get(ctx, image, PDF_NAME(SMask)) || pdf_dict_get(ctx, image, PDF_NAME(Mask))
        || pdf_dict_get(ctx, image, PDF_NAME(Decode)) || pdf_dict_get_bool(ctx, image, PDF_NAME(ImageMask)))
        return INKY_PDF_PAGE_RENDER;
    pdf_obj *parms = NULL;
    pdf_obj *filter = inky_pdf_single_filter(ctx, image, &parms);
    if (!filter) return INKY_PDF_PAGE_RENDER;
    info->width = pdf_dict_get_int(ctx, image, PDF_NAME(Width));
    info->height = pdf_dict_get_int(ctx, image, PDF_NAME(Height));
    info->bits_per_component = pdf_dict_get_int(ctx, image, PDF_NAME(BitsPerComponent));
    if (pdf_name_eq(ctx, filter, PDF_NAME(DCTDecode))) return INKY_PDF_PAGE_JPEG;
    if (pdf_name_eq(ctx, filter, PDF_NAME(JPXDecode))) {
        return pdf_dict_get_int(ctx, image, PDF_NAME(SMaskInData)) ? INKY_PDF_PAGE_RENDER : INKY_PDF_PAGE_JPX;
    }
    if (pdf_name_eq(ctx, filter, PDF_NAME(FlateDecode))) {
        // PNG's IDAT is zlib data of rows that each start with a filter byte: exactly Flate with a
        // PNG predictor (10-15) over the whole width, in a gray or RGB space PNG can say.
        pdf_obj *space = pdf_dict_get(ctx, image, PDF_NAME(ColorSpace));
        int colors = pdf_dict_get_int(ctx, parms, PDF_NAME(Colors));
        int bpc = pdf_dict_get_int(ctx, parms, PDF_NAME(BitsPerComponent));
        int columns = pdf_dict_get_int(ctx, parms, PDF_NAME(Columns));
        if (!pdf_dict_get(ctx, parms, PDF_NAME(Colors))) colors = 1;
        if (!pdf_dict_get(ctx, parms, PDF_NAME(BitsPerComponent))) bpc = 8;
        if (!pdf_dict_get(ctx, parms, PDF_NAME(Columns))) columns = 1;
        int space_colors = pdf_name_eq(ctx, space, PDF_NAME(DeviceGray)) ? 1
            : pdf_name_eq(ctx, space, PDF_NAME(DeviceRGB)) ? 3 : 0;
        int bpc_ok = bpc == 8 || bpc == 16 || (colors == 1 && (bpc == 1 || bpc == 2 || bpc == 4));
        if (pdf_dict_get_int(ctx, parms, PDF_NAME(Predictor)) >= 10 && colors == space_colors && bpc_ok
            && bpc == info->bits_per_component && columns == info->width) {
            info->colors = colors;
            return INKY_PDF_PAGE_PNG;
        }
    }
    return INKY_PDF_PAGE_RENDER;
}

/// Fills `info` for an image that is the whole page (kind, object, stream length).
static void inky_pdf_describe_image(fz_context *ctx, pdf_document *doc, pdf_obj *image, inky_pdf_page *info) {
    info->kind = inky_pdf_image_kind(ctx, image, info);
    if (info->kind == INKY_PDF_PAGE_RENDER) return;
    info->object = pdf_to_num(ctx, image);
    // /Length is what MuPDF reads the raw stream by; a repaired file may have had it wrong, so
    // there the stream itself is measured.
    pdf_obj *length = pdf_dict_get(ctx, image, PDF_NAME(Length));
    if (pdf_was_repaired(ctx, doc) || !pdf_is_int(ctx, length)) {
        fz_buffer *raw = pdf_load_raw_stream_number(ctx, doc, info->object);
        info->stream_length = (int64_t)fz_buffer_storage(ctx, raw, NULL);
        fz_drop_buffer(ctx, raw);
    } else {
        info->stream_length = (int64_t)pdf_to_int(ctx, length);
    }
}

/// Classifies a page without decoding any image. A plain scanned page is recognised from its
/// content bytes alone; any other runs through a device that only counts what is drawn, and
/// then the one image's stream dictionary decides.
int inky_pdf_probe_page(inky_pdf *pdf, int number, inky_pdf_page *info, char *err, size_t err_len) {
    fz_context *ctx = pdf->ctx;
    memset(info, 0, sizeof *info);
    fz_page *page = NULL;
    fz_device *device = NULL;
    int code = INKY_PDF_OK;
    fz_var(page);
    fz_var(device);
    fz_var(code);
    fz_try(ctx) {
        pdf_obj *page_obj = pdf_lookup_page_obj(ctx, pdf->doc, number);
        fz_matrix placed;
        pdf_obj *plain = inky_pdf_plain_image_page(ctx, pdf->doc, page_obj, &placed);
        // In PDF space y grows upwards: an upright image has a positive d there too.
        if (plain && pdf_is_stream(ctx, plain) && inky_pdf_covers(placed, inky_pdf_page_box(ctx, page_obj))) {
            inky_pdf_describe_image(ctx, pdf->doc, plain, info);
        } else {
            page = fz_load_page(ctx, (fz_document *)pdf->doc, number);
            device = inky_probe_new(ctx);
            fz_run_page(ctx, page, device, fz_identity, NULL);
            fz_close_device(ctx, device);
            inky_probe_device *probe = (inky_probe_device *)device;
            pdf_obj *image = NULL;
            if (probe->images == 1 && probe->others == 0 && probe->alpha >= 1.0f
                && inky_pdf_covers(probe->ctm, fz_bound_page(ctx, page))) {
                image = inky_pdf_single_image(ctx, ((pdf_page *)page)->obj);
            }
            if (image && pdf_is_stream(ctx, image)
                && pdf_dict_get_int(ctx, image, PDF_NAME(Width)) == probe->image_width
                && pdf_dict_get_int(ctx, image, PDF_NAME(Height)) == probe->image_height) {
                inky_pdf_describe_image(ctx, pdf->doc, image, info);
            }
        }
    }
    fz_always(ctx) {
        fz_drop_device(ctx, device);
        fz_drop_page(ctx, page);
    }
    fz_catch(ctx) {
        inky_pdf_set_error(ctx, err, err_len);
        code = INKY_PDF_ERROR;
    }
    return code;
}

// MARK: - Bytes

/// Copies a MuPDF buffer into malloc'd memory the caller frees with free().
static int inky_pdf_take_buffer(fz_context *ctx, fz_buffer *buffer, unsigned char **data, size_t *length) {
    unsigned char *bytes = NULL;
    size_t count = fz_buffer_storage(ctx, buffer, &bytes);
    *data = malloc(count ? count : 1);
    if (!*data) return 0;
    memcpy(*data, bytes, count);
    *length = count;
    return 1;
}

/// The raw (undecoded) stream of xref object `object`: an embedded image's original bytes.
int inky_pdf_raw_stream(inky_pdf *pdf, int object, unsigned char **data, size_t *length, char *err, size_t err_len) {
    fz_context *ctx = pdf->ctx;
    fz_buffer *raw = NULL;
    int code = INKY_PDF_OK;
    fz_var(raw);
    fz_var(code);
    fz_try(ctx) {
        raw = pdf_load_raw_stream_number(ctx, pdf->doc, object);
        if (!inky_pdf_take_buffer(ctx, raw, data, length)) fz_throw(ctx, FZ_ERROR_GENERIC, "out of memory");
    }
    fz_always(ctx) { fz_drop_buffer(ctx, raw); }
    fz_catch(ctx) {
        inky_pdf_set_error(ctx, err, err_len);
        code = INKY_PDF_ERROR;
    }
    return code;
}

/// Renders a page to an RGB PNG `height` pixels high (the width follows the page's shape), or at
/// `dpi` when it is positive, never above `max_pixels` pixels in all.
int inky_pdf_render_png(inky_pdf *pdf, int number, int height, int dpi, int64_t max_pixels,
                                      unsigned char **data, size_t *length, char *err, size_t err_len) {
    fz_context *ctx = pdf->ctx;
    fz_page *page = NULL;
    fz_pixmap *pixmap = NULL;
    fz_buffer *png = NULL;
    int code = INKY_PDF_OK;
    fz_var(page);
    fz_var(pixmap);
    fz_var(png);
    fz_var(code);
    fz_try(ctx) {
        page = fz_load_page(ctx, (fz_document *)pdf->doc, number);
        fz_rect bounds = fz_bound_page(ctx, page);
        float width_pt = bounds.x1 - bounds.x0, height_pt = bounds.y1 - bounds.y0;
        if (width_pt < 1 || height_pt < 1) fz_throw(ctx, FZ_ERROR_GENERIC, "the page has no area");
        float scale = dpi > 0 ? dpi / 72.0f : height / height_pt;
        double pixels = (double)width_pt * scale * height_pt * scale;
        if (pixels > (double)max_pixels) scale *= (float)sqrt((double)max_pixels / pixels);
        pixmap = fz_new_pixmap_from_page(ctx, page, fz_scale(scale, scale), fz_device_rgb(ctx), 0);
        png = fz_new_buffer_from_pixmap_as_png(ctx, pixmap, fz_default_color_params);
        if (!inky_pdf_take_buffer(ctx, png, data, length)) fz_throw(ctx, FZ_ERROR_GENERIC, "out of memory");
    }
    fz_always(ctx) {
        fz_drop_buffer(ctx, png);
        fz_drop_pixmap(ctx, pixmap);
        fz_drop_page(ctx, page);
    }
    fz_catch(ctx) {
        inky_pdf_set_error(ctx, err, err_len);
        code = INKY_PDF_ERROR;
    }
    return code;
}

const char *inky_pdf_version(void) { return FZ_VERSION; }

