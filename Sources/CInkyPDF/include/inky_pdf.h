#ifndef INKY_PDF_H
#define INKY_PDF_H
/* PDF comics through MuPDF, for InkyPDF. MuPDF reports errors with fz_try/fz_catch, which are
   setjmp/longjmp: a longjmp must never cross a Swift frame. Every call into MuPDF therefore
   happens inside these functions (inky_pdf.c), which catch everything and return a code
   (INKY_PDF_*) with the message in `err`. */
#include <stddef.h>
#include <stdint.h>

enum {
    INKY_PDF_OK = 0,
    INKY_PDF_ERROR = 1,
    INKY_PDF_NEEDS_PASSWORD = 2,
};

/* What a page is, for serving: one embedded image served as its original bytes, or a render. */
enum {
    INKY_PDF_PAGE_RENDER = 0,
    INKY_PDF_PAGE_JPEG = 1,   /* DCTDecode: the stream is a JPEG file */
    INKY_PDF_PAGE_JPX = 2,    /* JPXDecode: the stream is a JP2 file or a J2K codestream */
    INKY_PDF_PAGE_PNG = 3,    /* FlateDecode with a PNG predictor: the stream is a PNG's IDAT data */
};

/* An open document with its own MuPDF context. */
typedef struct inky_pdf inky_pdf;

typedef struct {
    int kind;
    /* The image's xref object number (embedded kinds). */
    int object;
    /* Bytes of the image's raw (undecoded) stream (embedded kinds). */
    int64_t stream_length;
    int width, height, bits_per_component, colors;
} inky_pdf_page;

/* Opens a PDF. `store_bytes` bounds MuPDF's resource cache. On INKY_PDF_NEEDS_PASSWORD the
   document is closed: an empty user password (owner-only restrictions) opens normally. */
int inky_pdf_open(const char *path, size_t store_bytes, inky_pdf **out, char *err, size_t err_len);

/* Reads up to `count` bytes at `offset` of a document that is no plain file into `buffer`:
   returns how many (0 only at the end), or -1 when they cannot be read. MuPDF takes a failed
   read for the end of the data and carries on, so the caller must keep its own record of a
   failure and check it after every call below. */
typedef int64_t (*inky_pdf_read_fn)(void *source, int64_t offset, unsigned char *buffer, size_t count);

/* Opens a PDF of `size` bytes read through `read(source, ...)` (a vault object decrypted chunk
   by chunk), as inky_pdf_open does a file. `source` must outlive the document. */
int inky_pdf_open_source(void *source, inky_pdf_read_fn read, int64_t size, size_t store_bytes,
                         inky_pdf **out, char *err, size_t err_len);

void inky_pdf_close(inky_pdf *pdf);

int inky_pdf_page_count(inky_pdf *pdf, int *count, char *err, size_t err_len);

/* Classifies a page without decoding any image. A plain scanned page is recognised from its
   content bytes alone; any other runs through a device that only counts what is drawn, and
   then the one image's stream dictionary decides. */
int inky_pdf_probe_page(inky_pdf *pdf, int number, inky_pdf_page *info, char *err, size_t err_len);

/* The raw (undecoded) stream of xref object `object`: an embedded image's original bytes. */
int inky_pdf_raw_stream(inky_pdf *pdf, int object, unsigned char **data, size_t *length, char *err, size_t err_len);

/* Renders a page to an RGB PNG `height` pixels high (the width follows the page's shape), or at
   `dpi` when it is positive, never above `max_pixels` pixels in all. */
int inky_pdf_render_png(inky_pdf *pdf, int number, int height, int dpi, int64_t max_pixels, unsigned char **data, size_t *length, char *err, size_t err_len);

const char *inky_pdf_version(void);
#endif
