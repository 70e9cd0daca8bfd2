#include "probe_device.h"

static void inky_probe_fill_path(fz_context *c, fz_device *d, const fz_path *p, int e, fz_matrix m, fz_colorspace *s, const float *k, float a, fz_color_params q) { ((inky_probe_device *)d)->others++; }
static void inky_probe_stroke_path(fz_context *c, fz_device *d, const fz_path *p, const fz_stroke_state *t, fz_matrix m, fz_colorspace *s, const float *k, float a, fz_color_params q) { ((inky_probe_device *)d)->others++; }
static void inky_probe_clip_path(fz_context *c, fz_device *d, const fz_path *p, int e, fz_matrix m, fz_rect r) { ((inky_probe_device *)d)->others++; }
static void inky_probe_clip_stroke_path(fz_context *c, fz_device *d, const fz_path *p, const fz_stroke_state *t, fz_matrix m, fz_rect r) { ((inky_probe_device *)d)->others++; }
static void inky_probe_fill_text(fz_context *c, fz_device *d, const fz_text *x, fz_matrix m, fz_colorspace *s, const float *k, float a, fz_color_params q) { ((inky_probe_device *)d)->others++; }
static void inky_probe_stroke_text(fz_context *c, fz_device *d, const fz_text *x, const fz_stroke_state *t, fz_matrix m, fz_colorspace *s, const float *k, float a, fz_color_params q) { ((inky_probe_device *)d)->others++; }
static void inky_probe_clip_text(fz_context *c, fz_device *d, const fz_text *x, fz_matrix m, fz_rect r) { ((inky_probe_device *)d)->others++; }
static void inky_probe_clip_stroke_text(fz_context *c, fz_device *d, const fz_text *x, const fz_stroke_state *t, fz_matrix m, fz_rect r) { ((inky_probe_device *)d)->others++; }
static void inky_probe_fill_shade(fz_context *c, fz_device *d, fz_shade *s, fz_matrix m, float a, fz_color_params q) { ((inky_probe_device *)d)->others++; }
static void inky_probe_fill_image_mask(fz_context *c, fz_device *d, fz_image *i, fz_matrix m, fz_colorspace *s, const float *k, float a, fz_color_params q) { ((inky_probe_device *)d)->others++; }
static void inky_probe_clip_image_mask(fz_context *c, fz_device *d, fz_image *i, fz_matrix m, fz_rect r) { ((inky_probe_device *)d)->others++; }
static void inky_probe_begin_mask(fz_context *c, fz_device *d, fz_rect r, int l, fz_colorspace *s, const float *b, fz_color_params q) { ((inky_probe_device *)d)->others++; }
static void inky_probe_begin_group(fz_context *c, fz_device *d, fz_rect r, fz_colorspace *s, int i, int k, int b, float a) { ((inky_probe_device *)d)->others++; }
static int inky_probe_begin_tile(fz_context *c, fz_device *d, fz_rect r, fz_rect v, float x, float y, fz_matrix m, int id) { ((inky_probe_device *)d)->others++; return 0; }
static void inky_probe_fill_image(fz_context *c, fz_device *d, fz_image *image, fz_matrix ctm, float alpha, fz_color_params q) {
    inky_probe_device *probe = (inky_probe_device *)d;
    probe->images++;
    probe->image_width = image->w;
    probe->image_height = image->h;
    probe->ctm = ctm;
    probe->alpha = alpha;
}
// Invisible text (an OCR layer over a scan: render mode 3) goes to ignore_text, which is left
// out on purpose: it changes nothing a reader sees.

fz_device *inky_probe_new(fz_context *ctx) {
    inky_probe_device *probe = fz_new_derived_device(ctx, inky_probe_device);
    probe->base.fill_path = inky_probe_fill_path;
    probe->base.stroke_path = inky_probe_stroke_path;
    probe->base.clip_path = inky_probe_clip_path;
    probe->base.clip_stroke_path = inky_probe_clip_stroke_path;
    probe->base.fill_text = inky_probe_fill_text;
    probe->base.stroke_text = inky_probe_stroke_text;
    probe->base.clip_text = inky_probe_clip_text;
    probe->base.clip_stroke_text = inky_probe_clip_stroke_text;
    probe->base.fill_shade = inky_probe_fill_shade;
    probe->base.fill_image = inky_probe_fill_image;
    probe->base.fill_image_mask = inky_probe_fill_image_mask;
    probe->base.clip_image_mask = inky_probe_clip_image_mask;
    probe->base.begin_mask = inky_probe_begin_mask;
    probe->base.begin_group = inky_probe_begin_group;
    probe->base.begin_tile = inky_probe_begin_tile;
    return &probe->base;
}

