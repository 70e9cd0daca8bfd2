// Poppler (glib + cairo): open, count single-image pages (poppler-glib exposes only decoded
// images, never an image's own bytes), render pages to PNG at 2,700 px high.
#include <poppler.h>
#include <cairo.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
static cairo_status_t count_bytes(void *closure, const unsigned char *data, unsigned int length) { *(size_t *)closure += length; return CAIRO_STATUS_SUCCESS; }
int main(int argc, char **argv) {
    GError *error = NULL;
    char *abs = realpath(argv[1], NULL); char *uri = g_filename_to_uri(abs, NULL, NULL);
    double t0 = now();
    PopplerDocument *doc = poppler_document_new_from_file(uri, NULL, &error);
    if (!doc) { printf("open: %s\n", error->message); return 1; }
    int count = poppler_document_get_n_pages(doc);
    double t1 = now();
    int single = 0;
    for (int i = 0; i < count; i++) {   // the closest poppler-glib has to "one image over the page"
        PopplerPage *page = poppler_document_get_page(doc, i);
        GList *map = poppler_page_get_image_mapping(page);
        if (g_list_length(map) == 1) single++;
        poppler_page_free_image_mapping(map);
        g_object_unref(page);
    }
    double t2 = now();
    int renders = argc > 2 ? atoi(argv[2]) : 3; if (renders > count) renders = count;
    size_t total = 0;
    for (int i = 0; i < renders; i++) {
        PopplerPage *page = poppler_document_get_page(doc, i);
        double w, h; poppler_page_get_size(page, &w, &h);
        double scale = 2700 / h;
        cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)(w * scale + 0.5), 2700);
        cairo_t *cr = cairo_create(surface);
        cairo_set_source_rgb(cr, 1, 1, 1); cairo_paint(cr);
        cairo_scale(cr, scale, scale);
        poppler_page_render(page, cr);
        cairo_destroy(cr);
        size_t bytes = 0;
        cairo_surface_write_to_png_stream(surface, count_bytes, &bytes);
        if (i == 0 && argc > 3) cairo_surface_write_to_png(surface, argv[3]);
        total += bytes;
        cairo_surface_destroy(surface);
        g_object_unref(page);
    }
    double t3 = now();
    struct rusage ru; getrusage(RUSAGE_SELF, &ru);
    printf("poppler %s: %d pages, open %.1f ms, image map %.2f ms/page (%d with one image), render %.0f ms/page (PNG %zu bytes avg), max RSS %ld MB\n",
        argv[1], count, (t1 - t0) * 1e3, (t2 - t1) * 1e3 / count, single, renders ? (t3 - t2) * 1e3 / renders : 0, renders ? total / renders : 0, ru.ru_maxrss / 1024);
}
